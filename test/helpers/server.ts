// Starts the real app on port 0 with a fresh database of the dialect under test
// (LABWRIGHT_TEST_DB=sqlite|postgres), and gives tests an HTTP client and a few set-up shortcuts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';

export const TEST_DB = (process.env.LABWRIGHT_TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';
export const POSTGRES_URL = process.env.LABWRIGHT_TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
export const ROOT_TOKEN = 'root-test-token-0123456789abcdef';

export interface TestServer {
  url: string;
  api: string;
  app: FastifyInstance & { lw: AppContext };
  dataDir: string;
  rootToken: string;
  request(method: string, path: string, opts?: RequestOpts): Promise<TestResponse>;
  /** Creates a user (through the admin API) and a token for it; returns both. */
  createUser(username: string, opts?: { admin?: boolean; scopes?: string[] }): Promise<{ id: number; username: string; token: string }>;
  /**
   * Waits until the kept responses show every write made so far in this process. Call it after
   * writing to the database directly (`app.lw.db`): a write through the API is answered only once
   * they do, but a direct one is not, and until a refresh round has ended, the reads answered from
   * the store show the data from before it (http/response-cache.ts, covered).
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export interface RequestOpts {
  token?: string | null;
  headers?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
  body?: string | Buffer;
  query?: Record<string, string | number | boolean>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

async function createPgDatabase(): Promise<string> {
  const name = `lw_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const u = new URL(POSTGRES_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function dropPgDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`drop database if exists ${name} with (force)`);
  await client.end();
}

export interface FreshStorage {
  dataDir: string;
  /** '' on SQLite (the file lives in dataDir). */
  databaseUrl: string;
  destroy(): Promise<void>;
}

/** A new data directory and, on PostgreSQL, a new database; destroy() removes both. */
export async function createFreshStorage(prefix = 'labwright-test-', kind: 'sqlite' | 'postgres' = TEST_DB): Promise<FreshStorage> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const databaseUrl = kind === 'postgres' ? await createPgDatabase() : '';
  return {
    dataDir,
    databaseUrl,
    async destroy() {
      if (databaseUrl) await dropPgDatabase(databaseUrl);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'labwright-test-'));
  const databaseUrl = TEST_DB === 'postgres' ? await createPgDatabase() : '';
  const config = loadConfig({
    LABWRIGHT_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LABWRIGHT_INITIAL_ROOT_TOKEN: ROOT_TOKEN,
    LABWRIGHT_INITIAL_ROOT_PASSWORD: 'root-password-123',
    LABWRIGHT_SECRET: 'test-secret',
    LOG_LEVEL: process.env.LABWRIGHT_TEST_LOG ?? 'silent',
    ...env,
  });
  const app = await buildApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const url = `http://127.0.0.1:${port}`;

  async function request(method: string, path: string, opts: RequestOpts = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = opts.token === undefined ? ROOT_TOKEN : opts.token;
    if (token) headers['PRIVATE-TOKEN'] = token;
    let body: string | Buffer | undefined = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    } else if (opts.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(opts.form).toString();
    }
    let full = path.startsWith('http') ? path : path.startsWith('/api/') || path.startsWith('/-/') || path.startsWith('/oauth') || !path.startsWith('/') ? `${url}${path}` : `${url}/api/v4${path}`;
    if (opts.query) {
      const qs = new URLSearchParams(Object.entries(opts.query).map(([k, v]) => [k, String(v)])).toString();
      full += (full.includes('?') ? '&' : '?') + qs;
    }
    const res = await fetch(full, { method, headers, body: body as BodyInit | undefined, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown = undefined;
    if ((res.headers.get('content-type') ?? '').startsWith('application/json')) parsed = text ? JSON.parse(text) : undefined;
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  async function createUser(username: string, opts: { admin?: boolean; scopes?: string[] } = {}) {
    const u = await request('POST', '/users', {
      json: { username, email: `${username}@example.com`, name: username, password: 'password-1234', admin: opts.admin ?? false },
    });
    if (u.status !== 201) throw new Error(`createUser ${username}: ${u.status} ${u.text}`);
    const t = await request('POST', `/users/${u.body.id}/personal_access_tokens`, {
      json: { name: 'test', scopes: opts.scopes ?? ['api'] },
    });
    if (t.status !== 201) throw new Error(`token for ${username}: ${t.status} ${t.text}`);
    return { id: u.body.id as number, username, token: t.body.token as string };
  }

  return {
    url,
    api: `${url}/api/v4`,
    app,
    dataDir,
    rootToken: ROOT_TOKEN,
    request,
    createUser,
    async settle() {
      await app.lw.responses?.covered();
    },
    async close() {
      await app.close();
      // pg's pool resolves end() before its sockets are closed; dropping WITH (FORCE) at once would
      // terminate them mid-close and surface as an uncaught error.
      if (databaseUrl) {
        await new Promise((r) => setTimeout(r, 300));
        await dropPgDatabase(databaseUrl);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
