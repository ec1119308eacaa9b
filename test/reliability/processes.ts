// Real Labwright processes (`node --import tsx src/main.ts serve`) on a shared data dir and
// database, for the several-process, crash and soak tests. Nothing here runs the app in-process.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createFreshStorage } from '../helpers/server.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const ROOT_TOKEN = 'root-reliability-token-0123456789abcdef';
export const DB_KIND = (process.env.LABWRIGHT_TEST_DB ?? 'sqlite') as 'sqlite' | 'postgres';

/** One shared installation: the data dir (repositories, SQLite file) and, on PostgreSQL, a fresh database. */
export interface Installation {
  dataDir: string;
  databaseUrl: string;
  env: Record<string, string>;
  destroy(): Promise<void>;
}

export async function createInstallation(kind = DB_KIND, extraEnv: Record<string, string> = {}): Promise<Installation> {
  const storage = await createFreshStorage('labwright-rel-', kind);
  const { dataDir, databaseUrl } = storage;
  const env = {
    LABWRIGHT_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LABWRIGHT_SECRET: `reliability-secret-${randomBytes(8).toString('hex')}`,
    LABWRIGHT_INITIAL_ROOT_TOKEN: ROOT_TOKEN,
    LABWRIGHT_INITIAL_ROOT_PASSWORD: 'root-password-123',
    LOG_LEVEL: process.env.LABWRIGHT_TEST_LOG ?? 'error',
    ...extraEnv,
  };
  return {
    dataDir,
    databaseUrl,
    env,
    destroy: storage.destroy,
  };
}

export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => ok(port));
    });
  });
}

export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** stderr and stdout of the process, for failure messages (stack traces of 500s are logged there). */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `labwright serve` on the installation and waits until /-/readiness answers 200: the
 * sources through tsx, or the module given (a build of scripts/build.mjs).
 */
export async function startProcess(inst: Installation, env: Record<string, string> = {}, port?: number, main?: string): Promise<ServerProcess> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, [...(main ? [main] : ['--import', 'tsx', 'src/main.ts']), 'serve'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...inst.env, ...env, PORT: String(p), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let how = '';
  const exited = new Promise<number | null>((ok) => child.once('exit', (code, signal) => {
    how = `exit code ${code}, signal ${signal}`;
    ok(code);
  }));
  const url = `http://127.0.0.1:${p}`;
  const deadline = Date.now() + 90_000;
  let done = false;
  void exited.then(() => (done = true));
  for (;;) {
    if (done) throw new Error(`labwright exited during start-up (${how}):\n${out}`);
    try {
      const r = await fetch(`${url}/-/readiness`);
      if (r.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`labwright did not become ready in 90 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return {
    url,
    port: p,
    child,
    output: () => out,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

export interface Reply {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** A JSON request to one server; network failures become status 0 (the outcome is unknown). */
/** A response body parsed as JSON, or undefined when it is empty or not JSON. */
export function jsonOrUndefined(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string | null; json?: unknown; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const token = opts.token === undefined ? ROOT_TOKEN : opts.token;
  if (token) headers['PRIVATE-TOKEN'] = token;
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  try {
    const r = await fetch(`${base}/api/v4${path}`, {
      method,
      headers,
      body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
    });
    const text = await r.text();
    const body = jsonOrUndefined(text);
    return { status: r.status, body, text, headers: r.headers };
  } catch (err) {
    return { status: 0, body: undefined, text: String((err as Error).message), headers: new Headers() };
  }
}

/** The test's load balancer: each request goes to the next server in turn. */
export function roundRobin(urls: string[]) {
  let next = 0;
  return (method: string, path: string, opts?: Parameters<typeof call>[3]) => call(urls[next++ % urls.length], method, path, opts);
}

/** Runs `task(i)` for i in [0, n) with at most `width` in flight. */
export async function pool<T>(n: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let i = 0;
  async function worker() {
    while (i < n) {
      const mine = i++;
      out[mine] = await task(mine);
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, n) }, worker));
  return out;
}
