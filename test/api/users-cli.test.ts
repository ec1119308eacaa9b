// The CLI against a temporary data dir (and a fresh PostgreSQL database when testing PostgreSQL):
// `migrate`, `user create`, `token create` printing a token that then works against the server.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type FreshStorage, createFreshStorage } from '../helpers/server.js';

const run = promisify(execFile);
let storage: FreshStorage | undefined;
let dataDir: string;
let dbUrl = '';
const SECRET = 'cli-test-secret';


function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, LABWRIGHT_DATA_DIR: dataDir, DATABASE_URL: dbUrl, LABWRIGHT_SECRET: SECRET, LOG_LEVEL: 'silent' };
  delete e.LABWRIGHT_INITIAL_ROOT_TOKEN;
  return e;
}

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { env: env(), timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

beforeAll(async () => {
  storage = await createFreshStorage('labwright-cli-');
  dataDir = storage.dataDir;
  dbUrl = storage.databaseUrl;
});

afterAll(async () => {
  await storage?.destroy();
});

describe('labwright CLI', () => {
  let aliceToken = '';
  let rootToken = '';

  it('migrate brings a fresh database up to date (and is idempotent)', async () => {
    const first = await cli('migrate');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('up to date');
    const again = await cli('migrate');
    expect(again.code, again.stderr).toBe(0);
  }, 120_000);

  it('user create creates a user; root stays user 1', async () => {
    const r = await cli('user', 'create', '--username', 'alice', '--email', 'alice@example.com', '--name', 'Alice', '--password', 'alice-password-1');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/created user alice \(id \d+\)/);
    expect(r.stdout).not.toContain('(id 1)');
  }, 60_000);

  it('user create refuses a taken username and bad input', async () => {
    const taken = await cli('user', 'create', '--username', 'alice', '--email', 'other@example.com');
    expect(taken.code).not.toBe(0);
    expect(taken.stderr).toContain('Username has already been taken');
    const bad = await cli('user', 'create', '--username', 'bob', '--email', 'not-an-email');
    expect(bad.code).not.toBe(0);
    const missing = await cli('user', 'create', '--username', 'bob');
    expect(missing.code).not.toBe(0);
  }, 120_000);

  it('token create prints the token once', async () => {
    const r = await cli('token', 'create', '--user', 'alice', '--scopes', 'api,read_user', '--name', 'from-cli');
    expect(r.code, r.stderr).toBe(0);
    aliceToken = r.stdout.trim();
    expect(aliceToken).toMatch(/^glpat-[A-Za-z0-9_-]{20,}$/);
    const root = await cli('token', 'create', '--user', 'root', '--scopes', 'api,sudo');
    expect(root.code, root.stderr).toBe(0);
    rootToken = root.stdout.trim();
  }, 120_000);

  it('token create refuses unknown users, unknown scopes and bad dates', async () => {
    for (const args of [
      ['--user', 'nobody', '--scopes', 'api'],
      ['--user', 'alice', '--scopes', 'everything'],
      ['--user', 'alice', '--scopes', 'api', '--expires-at', 'garbage'],
      ['--user', 'alice', '--scopes', 'api', '--expires-at', '2001-01-01'],
      ['--user', 'alice'],
    ]) {
      const r = await cli('token', 'create', ...args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stdout.trim()).toBe('');
    }
  }, 120_000);

  it('the printed tokens work against the server on the same data', async () => {
    const app = await buildApp(loadConfig({ LABWRIGHT_DATA_DIR: dataDir, DATABASE_URL: dbUrl, LABWRIGHT_SECRET: SECRET, LOG_LEVEL: 'silent', LABWRIGHT_INITIAL_ROOT_PASSWORD: 'unused-password' }));
    try {
      const me = await app.inject({ method: 'GET', url: '/api/v4/user', headers: { 'private-token': aliceToken } });
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ username: 'alice', name: 'Alice' });
      const root = await app.inject({ method: 'GET', url: '/api/v4/user', headers: { 'private-token': rootToken } });
      expect(root.json()).toMatchObject({ id: 1, username: 'root', is_admin: true });
      const self = await app.inject({ method: 'GET', url: '/api/v4/personal_access_tokens/self', headers: { 'private-token': aliceToken } });
      expect(self.json()).toMatchObject({ name: 'from-cli', scopes: ['api', 'read_user'], expires_at: null });
    } finally {
      await app.close();
    }
  }, 60_000);

  it('unknown commands print the usage and fail', async () => {
    const r = await cli('frobnicate');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('usage:');
  }, 60_000);
});
