// npm run bench [-- <scenario>...] [--smoke] [--db sqlite|postgres|both]
// Starts the real server (and the baseline servers) as separate processes, loads them with
// autocannon from this process (50 connections, no pipelining, warm-up first), prints a table of
// req/s and latency percentiles with ratios against the same-run baselines, and appends it to
// docs/benchmarks.md with the machine it ran on.
import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { scenarios, type Scenario } from './scenarios.js';

const ROOT_TOKEN = 'bench-root-token-0123456789abcdef';
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const dbArg = args.includes('--db') ? args[args.indexOf('--db') + 1] : 'both';
const wanted = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--db');
const DURATION = smoke ? 1 : Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = smoke ? 0.5 : Number(process.env.BENCH_WARMUP ?? 3);
const PG_URL = process.env.LABWRIGHT_TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

interface Measure {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(url: string, headers: Record<string, string>, duration: number, opts: Partial<autocannon.Options> = {}): Promise<Measure> {
  const result = await autocannon({ url, connections: 50, pipelining: 1, duration, headers, ...opts });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

async function measure(url: string, headers: Record<string, string> = {}, opts: Partial<autocannon.Options> = {}): Promise<Measure> {
  await load(url, headers, WARMUP, opts);
  return load(url, headers, DURATION, opts);
}

function freePort(): number {
  return 20000 + Math.floor(Math.random() * 20000);
}

function waitReady(child: ChildProcess, url?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start in 60 s')), 60_000);
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
      setTimeout(poll, 100);
    };
    void poll();
  });
}

function peakRssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

async function startBaseline(kind: string, bodyFile?: string): Promise<{ url: string; child: ChildProcess }> {
  const port = freePort();
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

export async function startLabwright(db: 'sqlite' | 'postgres', existing?: LabwrightServer): Promise<LabwrightServer> {
  const dataDir = existing?.dataDir ?? mkdtempSync(join(tmpdir(), 'labwright-bench-'));
  const databaseUrl = existing ? existing.databaseUrl : db === 'postgres' ? await createPgDatabase() : null;
  const port = freePort();
  const child = fork(join(import.meta.dirname, '..', 'src', 'main.ts'), ['serve'], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LABWRIGHT_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl ?? '',
      LABWRIGHT_INITIAL_ROOT_TOKEN: ROOT_TOKEN,
      LABWRIGHT_SECRET: 'bench-secret',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, `${url}/-/readiness`);
  return { url, child, dataDir, databaseUrl, token: ROOT_TOKEN };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000);
  });
}

async function cleanup(s: LabwrightServer): Promise<void> {
  await stop(s.child);
  if (s.databaseUrl) await dropPgDatabase(s.databaseUrl).catch(() => undefined);
  rmSync(s.dataDir, { recursive: true, force: true });
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

interface Row {
  scenario: string;
  db: string;
  m: Measure;
  baseline: string;
  baselineRps: number;
  ratio: number;
  goal: string;
  met: boolean;
  rssMb: number;
}

function fmt(n: number, d = 1): string {
  return n.toFixed(d);
}

async function runScenario(sc: Scenario, db: 'sqlite' | 'postgres', server: LabwrightServer, rows: Row[]): Promise<void> {
  const ctx = await sc.prepare?.(server);
  const path = typeof sc.path === 'function' ? sc.path(ctx) : sc.path;
  const headers = { 'PRIVATE-TOKEN': server.token, ...(sc.headers ?? {}) };
  const url = `${server.url}${path}`;
  // The bytes our endpoint returns, for the B2/B3 baselines of the same response.
  const sample = await fetch(url, { headers });
  const bytes = Buffer.from(await sample.arrayBuffer());
  if (!sample.ok) throw new Error(`${sc.name}: ${url} answered ${sample.status}: ${bytes.toString().slice(0, 300)}`);
  const m = await measure(url, headers, sc.autocannon ?? {});
  let baselineKind = sc.baseline;
  let file: string | undefined;
  if (baselineKind === 'b2' || baselineKind === 'b3') {
    file = join(tmpdir(), `labwright-bench-body-${process.pid}.json`);
    writeFileSync(file, bytes);
  }
  const base = await startBaseline(baselineKind, file);
  const b = await measure(`${base.url}${path}`);
  await stop(base.child);
  if (file && existsSync(file)) rmSync(file);
  const ratio = m.rps / b.rps;
  rows.push({
    scenario: sc.name,
    db,
    m,
    baseline: baselineKind.toUpperCase(),
    baselineRps: b.rps,
    ratio,
    goal: `≥ ${sc.goal.toFixed(2)} × ${baselineKind.toUpperCase()}`,
    met: ratio >= sc.goal,
    rssMb: peakRssMb(server.child.pid),
  });
}

function machine(): string {
  const c = cpus();
  return `${c[0]?.model ?? 'unknown CPU'}, ${c.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

function table(rows: Row[]): string {
  const head = '| scenario | db | req/s | p50 ms | p90 ms | p99 ms | errors | baseline req/s | ratio | goal | met | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map(
    (r) =>
      `| ${r.scenario} | ${r.db} | ${fmt(r.m.rps, 0)} | ${r.m.p50} | ${r.m.p90} | ${r.m.p99} | ${r.m.errors + r.m.non2xx} | ${r.baseline} ${fmt(r.baselineRps, 0)} | ${fmt(r.ratio, 2)} | ${r.goal} | ${r.met ? 'yes' : 'no'} | ${r.rssMb} |`,
  );
  return [head, ...lines].join('\n');
}

async function main(): Promise<void> {
  const selected = wanted.length ? scenarios.filter((s) => wanted.includes(s.name)) : scenarios;
  if (selected.length === 0) throw new Error(`no scenario named ${wanted.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`);
  const dbs: Array<'sqlite' | 'postgres'> = dbArg === 'sqlite' ? ['sqlite'] : dbArg === 'postgres' ? ['postgres'] : ['sqlite', 'postgres'];
  const rows: Row[] = [];
  for (const db of dbs) {
    if (db === 'postgres' && !(await postgresReachable())) {
      console.log('PostgreSQL not reachable: skipping the PostgreSQL runs');
      continue;
    }
    const server = await startLabwright(db);
    try {
      for (const sc of selected) {
        process.stdout.write(`${db} ${sc.name} … `);
        await runScenario(sc, db, server, rows);
        const r = rows[rows.length - 1];
        console.log(`${fmt(r.m.rps, 0)} req/s, ratio ${fmt(r.ratio, 2)} (${r.goal})`);
      }
    } finally {
      await cleanup(server);
    }
  }
  const out = table(rows);
  console.log('\n' + out);
  const stamp = new Date().toISOString();
  const header = `\n## Run of ${stamp}${smoke ? ' (smoke: 1 s per measurement, not a result)' : ''}\n\nMachine: ${machine()}. Command: \`npm run bench${args.length ? ' -- ' + args.join(' ') : ''}\`. Load: autocannon, 50 connections, no pipelining, ${WARMUP} s warm-up, ${DURATION} s measured.\n\n`;
  if (!smoke) appendFileSync(join(import.meta.dirname, '..', 'docs', 'benchmarks.md'), header + out + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
