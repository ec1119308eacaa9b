// Security case G32, "nothing lost": no token appears in clear in the database files (SQLite file,
// WAL) or in the logs of a real `labwright serve` process at debug level. Also the first-start
// files: initial_root_password and the generated secret, both mode 0600.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshStorage, TEST_DB, createFreshStorage } from '../helpers/server.js';

const ROOT_TOKEN = `initial-${randomBytes(12).toString('hex')}`;
let storage: FreshStorage | undefined;
let dataDir: string;
let dbUrl = '';
let child: ChildProcess;
let logs = '';
let base = '';


beforeAll(async () => {
  storage = await createFreshStorage('labwright-secrets-');
  dataDir = storage.dataDir;
  dbUrl = storage.databaseUrl;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    LABWRIGHT_DATA_DIR: dataDir,
    DATABASE_URL: dbUrl,
    LABWRIGHT_INITIAL_ROOT_TOKEN: ROOT_TOKEN,
    LOG_LEVEL: 'debug',
  };
  delete env.LABWRIGHT_INITIAL_ROOT_PASSWORD;
  delete env.LABWRIGHT_SECRET;
  child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => (logs += d));
  child.stderr!.on('data', (d) => (logs += d));
  const started = Date.now();
  while (!base) {
    const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs);
    if (m) base = m[1];
    else if (Date.now() - started > 50_000) throw new Error(`server did not start:\n${logs}`);
    else await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  await storage?.destroy();
});

async function api(method: string, path: string, headers: Record<string, string> = {}, json?: unknown) {
  const res = await fetch(`${base}/api/v4${path}`, {
    method,
    headers: { ...headers, ...(json ? { 'content-type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

describe('first start', () => {
  it('writes <data dir>/initial_root_password (mode 0600) when LABWRIGHT_INITIAL_ROOT_PASSWORD is unset', () => {
    const file = join(dataDir, 'initial_root_password');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim().length).toBeGreaterThanOrEqual(16);
  });

  it('generates the token-digest secret once, mode 0600', () => {
    const file = join(dataDir, 'secret');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('LABWRIGHT_INITIAL_ROOT_TOKEN authenticates as root (id 1)', async () => {
    const r = await api('GET', '/user', { 'PRIVATE-TOKEN': ROOT_TOKEN });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: 1, username: 'root', is_admin: true });
  });
});

describe('no token in clear in the database or the logs', () => {
  it('after creating, using in every place, rotating and revoking tokens', async () => {
    const root = { 'PRIVATE-TOKEN': ROOT_TOKEN };
    const user = await api('POST', '/users', root, { username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password-1' });
    expect(user.status).toBe(201);
    const created = await api('POST', `/users/${user.body.id}/personal_access_tokens`, root, { name: 't', scopes: ['api'] });
    expect(created.status).toBe(201);
    const tokens: string[] = [ROOT_TOKEN, created.body.token];
    const t = created.body.token as string;
    expect((await api('GET', '/user', { 'PRIVATE-TOKEN': t })).status).toBe(200);
    expect((await api('GET', '/user', { Authorization: `Bearer ${t}` })).status).toBe(200);
    expect((await api('GET', `/user?private_token=${encodeURIComponent(t)}`)).status).toBe(200);
    expect((await api('GET', `/user?access_token=${encodeURIComponent(t)}`)).status).toBe(200);
    // A percent-encoded parameter name authenticates too, so it must be filtered too.
    expect((await api('GET', `/user?private%5Ftoken=${encodeURIComponent(t)}`)).status).toBe(200);
    // A failing request with the token in the query string (the error path logs too).
    expect((await api('GET', `/nothing?private_token=${encodeURIComponent(t)}`)).status).toBe(404);
    const rotated = await api('POST', '/personal_access_tokens/self/rotate', { 'PRIVATE-TOKEN': t });
    expect(rotated.status).toBe(200);
    tokens.push(rotated.body.token);
    const second = await api('POST', `/users/${user.body.id}/personal_access_tokens`, root, { name: 'revoked', scopes: ['api'] });
    tokens.push(second.body.token);
    expect((await api('DELETE', '/personal_access_tokens/self', { 'PRIVATE-TOKEN': second.body.token })).status).toBe(204);
    // The user's password must not be stored in clear either.
    const secrets = [...tokens, 'alice-password-1'];

    // Give pino a moment to flush, then look at everything the process wrote and stored.
    await new Promise((r) => setTimeout(r, 300));
    expect(logs).toMatch(/incoming request|request completed/);
    for (const secret of secrets) expect(logs.includes(secret), `log contains ${secret}`).toBe(false);
    expect(logs).toContain('[FILTERED]');

    if (TEST_DB === 'sqlite') {
      const files = filesUnder(dataDir).filter((f) => /labwright\.sqlite3/.test(f));
      expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
      for (const f of files) {
        const bytes = readFileSync(f);
        for (const secret of secrets) expect(bytes.includes(Buffer.from(secret)), `${f} contains ${secret}`).toBe(false);
      }
    } else {
      const client = new pg.Client({ connectionString: dbUrl });
      await client.connect();
      try {
        for (const table of ['users', 'personal_access_tokens']) {
          const { rows } = await client.query(`select * from ${table}`);
          const dump = JSON.stringify(rows);
          for (const secret of secrets) expect(dump.includes(secret), `${table} contains ${secret}`).toBe(false);
        }
      } finally {
        await client.end();
      }
    }
    for (const f of filesUnder(dataDir).filter((f) => !/initial_root_password$/.test(f))) {
      const bytes = readFileSync(f);
      for (const secret of tokens) expect(bytes.includes(Buffer.from(secret)), `${f} contains a token`).toBe(false);
    }
  });
});
