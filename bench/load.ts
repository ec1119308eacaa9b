// Load generation (autocannon from the bench process, 50 connections, no pipelining, warm-up
// first) and the child processes: the real server and the baseline servers.
import autocannon from 'autocannon';
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createServer, type AddressInfo } from 'node:net';
import pg from 'pg';
import type { Stream, StreamResult } from './arrival.js';

export const ROOT_TOKEN = 'bench-root-token-0123456789abcdef';
export const SECRET = 'bench-secret';
export const PG_URL = process.env.LABWRIGHT_TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

export interface Timing {
  duration: number;
  warmup: number;
}

export interface Measure {
  rps: number;
  /** Responses with a 2xx status per second. */
  okRps: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rounds of one side: mean rates, median percentiles, summed counts. */
export function combine(ms: Measure[]): Measure {
  const mean = (f: (m: Measure) => number) => ms.reduce((a, m) => a + f(m), 0) / ms.length;
  const sum = (f: (m: Measure) => number) => ms.reduce((a, m) => a + f(m), 0);
  return {
    rps: mean((m) => m.rps),
    okRps: mean((m) => m.okRps),
    mean: mean((m) => m.mean),
    p50: median(ms.map((m) => m.p50)),
    p90: median(ms.map((m) => m.p90)),
    p99: median(ms.map((m) => m.p99)),
    errors: sum((m) => m.errors),
    non2xx: sum((m) => m.non2xx),
    total: sum((m) => m.total),
  };
}

/**
 * Interleaved rounds of two sides in turn first and second (A B, B A, A B, …), so that neither
 * always follows the other; `a` is told whether it is the very first measurement.
 */
export async function alternate(rounds: number, a: (first: boolean) => Promise<void>, b: () => Promise<void>): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      await a(i === 0);
      await b();
    } else {
      await b();
      await a(false);
    }
  }
}

export function toMeasure(result: autocannon.Result): Measure {
  const ok = result['2xx'] ?? 0;
  const seconds = result.duration || 1;
  return {
    rps: result.requests.average,
    okRps: ok / seconds,
    mean: result.latency.mean,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

export async function load(url: string, headers: Record<string, string>, duration: number, opts: Partial<autocannon.Options> = {}): Promise<Measure> {
  const result = await autocannon({ url, connections: 50, pipelining: 1, duration, headers, ...opts });
  return toMeasure(result);
}

export async function measure(t: Timing, url: string, headers: Record<string, string> = {}, opts: Partial<autocannon.Options> = {}): Promise<Measure> {
  if (t.warmup > 0) await load(url, headers, t.warmup, opts);
  return load(url, headers, t.duration, opts);
}

/** A port the kernel just gave out as free (random ports collide with the many client sockets of a load run). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function waitReady(child: ChildProcess, url?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start in 120 s')), 120_000);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    if (!url) {
      child.once('message', () => {
        clearTimeout(timer);
        resolve();
      });
      return;
    }
    const poll = async () => {
      try {
        const r = await fetch(url);
        if (r.ok) {
          clearTimeout(timer);
          resolve();
          return;
        }
      } catch {
        /* not yet */
      }
      setTimeout(poll, 20);
    };
    void poll();
  });
}

function procStatusMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number {
  if (!pid) return 0;
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

export const peakRssMb = (pid: number | undefined) => procStatusMb(pid, 'VmHWM');
export const rssMb = (pid: number | undefined) => procStatusMb(pid, 'VmRSS');

export async function startBaseline(kind: string, bodyFile?: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(join(import.meta.dirname, 'baseline-server.ts'), [kind, String(port), bodyFile ?? ''], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await waitReady(child);
  return { url: `http://127.0.0.1:${port}`, child };
}

export interface LabwrightServer {
  url: string;
  child: ChildProcess;
  dataDir: string;
  databaseUrl: string | null;
  token: string;
  /** Milliseconds from spawning the process to the first ready answer of /-/readiness. */
  startMs: number;
}

async function createPgDatabase(): Promise<string> {
  const name = `lw_bench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function dropPgDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`drop database if exists ${new URL(url).pathname.slice(1)} with (force)`);
  await client.end();
}

/** Pass in execArgv to run the built server (what `npm start` runs) instead of the sources through tsx. */
export const COMPILED = '--labwright-compiled';
const BUILT = join('node_modules', '.cache', 'labwright-bench-dist', 'main.js');

function compiledMain(): string | null {
  const main = join(import.meta.dirname, '..', BUILT);
  return existsSync(main) ? main : null;
}

/**
 * Builds the server as `npm run build` does (scripts/build.mjs: one bundled module), into
 * node_modules/.cache, so that the working tree stays clean. Returns false when nothing was built.
 */
export async function buildCompiled(): Promise<boolean> {
  rmSync(dirname(join(import.meta.dirname, '..', BUILT)), { recursive: true, force: true });
  try {
    const { bundle } = (await import(pathToFileURL(join(import.meta.dirname, '..', 'scripts', 'build.mjs')).href)) as { bundle: (outfile: string) => Promise<void> };
    await bundle(BUILT);
  } catch (err) {
    console.error(`build failed: ${(err as Error).message}`);
  }
  return compiledMain() !== null;
}

/** Starts `src/main.ts serve` as a child process; on `existing`'s data when given (a restart). */
export async function startLabwright(db: 'sqlite' | 'postgres', existing?: LabwrightServer, execArgv: string[] = []): Promise<LabwrightServer> {
  const dataDir = existing?.dataDir ?? mkdtempSync(join(tmpdir(), 'labwright-bench-'));
  const databaseUrl = existing ? existing.databaseUrl : db === 'postgres' ? await createPgDatabase() : null;
  const port = await freePort();
  const started = performance.now();
  const compiled = execArgv.includes(COMPILED) ? compiledMain() : null;
  const child = fork(compiled ?? join(import.meta.dirname, '..', 'src', 'main.ts'), ['serve'], {
    execArgv: compiled ? execArgv.filter((a) => a !== COMPILED) : ['--import', 'tsx', ...execArgv],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LABWRIGHT_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl ?? '',
      LABWRIGHT_INITIAL_ROOT_TOKEN: ROOT_TOKEN,
      LABWRIGHT_SECRET: SECRET,
      LOG_LEVEL: 'warn',
      ...(process.env.BENCH_QUERY_STATS ? { LABWRIGHT_QUERY_STATS: '1' } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, `${url}/-/readiness`);
  return { url, child, dataDir, databaseUrl, token: ROOT_TOKEN, startMs: performance.now() - started };
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

export async function cleanup(s: LabwrightServer): Promise<void> {
  await stop(s.child);
  if (s.databaseUrl) await dropPgDatabase(s.databaseUrl).catch(() => undefined);
  rmSync(s.dataDir, { recursive: true, force: true });
}

export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * POST /projects/:id/merge_requests, each from the next seeded `post-N` branch (`next` gives N):
 * used by the creation, mixed-load (bench/write-load.ts) and in-process (inject-create.ts) runs.
 */
export function mrCreateBody(n: number): string {
  return JSON.stringify({ source_branch: `post-${n}`, target_branch: 'main', title: `Created by the benchmark ${n}`, labels: 'label-3' });
}

export function mrCreateRequest(projectId: number, next: () => number): autocannon.Request {
  return {
    method: 'POST',
    path: `/api/v4/projects/${projectId}/merge_requests`,
    headers: { 'content-type': 'application/json' },
    setupRequest: (req) => Object.assign({}, req, { body: mrCreateBody(next()) }),
  };
}

/** Runs `streams` at their constant arrival rates for `seconds` from a separate process (bench/arrival.ts). */
export async function runArrival(url: string, headers: Record<string, string>, seconds: number, streams: Stream[], settleSeconds = 0): Promise<StreamResult[]> {
  const args = [join(import.meta.dirname, 'arrival.ts'), url, JSON.stringify(headers), String(seconds), JSON.stringify(streams), String(settleSeconds)];
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', ...args], { maxBuffer: 1 << 20 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
  return JSON.parse(out.trim().split('\n').pop()!) as StreamResult[];
}
