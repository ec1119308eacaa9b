// npm run bench [-- <scenario>...] [--smoke] [--quick] [--db sqlite|postgres|both]
// Seeds the deterministic data sets (./seed.ts), restarts the real server on them (start-up time
// and idle RSS), then loads it with autocannon from this process (50 connections, no pipelining,
// warm-up first) and prints a table with ratios against baselines measured in the same run
// (./baseline-server.ts), appending it to docs/benchmarks.md with the machine it ran on.
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildCompiled, cleanup, combine, COMPILED, load, median, measure, peakRssMb, postgresReachable, rssMb, startBaseline, startLabwright, stop, type LabwrightServer, type Measure, type Timing } from './load.js';
import { scenarios, type DbName, type RatioScenario, type ScenarioEnv } from './scenarios.js';
import { seed } from './seed.js';
import { special, type Row } from './special.js';

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
// Every scenario by default, the large sets (500,000 merge requests, 410,000 more users) and their
// depth and count scenarios included; `--quick` (and `--smoke`, for CI) leaves them out unless
// named or `--large` is given.
const large = args.includes('--large') || (!smoke && !args.includes('--quick'));
const dbArg = args.includes('--db') ? args[args.indexOf('--db') + 1] : 'both';
const wanted = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--db');
const timing: Timing = {
  duration: smoke ? 0.5 : Number(process.env.BENCH_DURATION ?? 10),
  warmup: smoke ? 0 : Number(process.env.BENCH_WARMUP ?? 3),
};
const fmt = (n: number, d = 1) => n.toFixed(d);
/** Whether the built server (node_modules/.cache/labwright-bench-dist/main.js, as npm run build makes it) is used; smoke runs skip the build. */
let compiled = false;

const ROUNDS = smoke ? 1 : Number(process.env.BENCH_ROUNDS ?? 3);

/** Baseline servers, one process per kind for the whole run; b2/b3 are told which body to serve. */
const baselines = new Map<string, { url: string; child: ChildProcess }>();

async function baseline(kind: string, file?: string): Promise<string> {
  let b = baselines.get(kind);
  if (!b) {
    b = await startBaseline(kind, file);
    baselines.set(kind, b);
  } else if (file) {
    const child = b.child;
    await new Promise<void>((resolve) => {
      child.once('message', () => resolve());
      child.send({ file });
    });
  }
  return b.url;
}

async function stopBaselines(): Promise<void> {
  for (const b of baselines.values()) await stop(b.child);
  baselines.clear();
}

async function runRatio(sc: RatioScenario, env: ScenarioEnv, server: LabwrightServer, rows: Row[]): Promise<void> {
  const path = sc.path(env);
  const headers = { 'PRIVATE-TOKEN': server.token };
  const url = `${server.url}${path}`;
  // The bytes our endpoint returns, for the B2/B3 baselines of the same response.
  const sample = await fetch(url, { headers });
  const bytes = Buffer.from(await sample.arrayBuffer());
  if (!sample.ok) throw new Error(`${sc.name}: ${url} answered ${sample.status}: ${bytes.toString().slice(0, 300)}`);
  let file: string | undefined;
  if (sc.baseline === 'b3') {
    file = join(tmpdir(), `labwright-bench-body-${process.pid}.json`);
    writeFileSync(file, bytes);
  }
  const baseUrl = await baseline(sc.baseline, file);
  const exactUrl = sc.baseline === 'b3' ? await baseline('b2', file) : null;
  // Interleaved rounds (ours, baseline, ours, …): a load spike from elsewhere on the machine then
  // hits both sides of a ratio instead of one; the ratio is the median of the rounds'.
  const ours: Measure[] = [];
  const base: Measure[] = [];
  const exact: Measure[] = [];
  const round = { duration: Math.max(0.5, timing.duration / ROUNDS), warmup: 0 };
  if (timing.warmup > 0) {
    await load(url, headers, timing.warmup, sc.autocannon ?? {});
    await load(`${baseUrl}${path}`, {}, timing.warmup);
  }
  for (let i = 0; i < ROUNDS; i++) {
    ours.push(await measure(round, url, headers, sc.autocannon ?? {}));
    base.push(await measure(round, `${baseUrl}${path}`));
    if (exactUrl) exact.push(await measure(round, `${exactUrl}${path}`));
  }
  if (file && existsSync(file)) rmSync(file);
  const rss = peakRssMb(server.child.pid);
  const m = combine(ours);
  const b = combine(base);
  const b2 = exact.length ? `, B2 ${fmt(combine(exact).rps, 0)}` : '';
  const ratio = median(ours.map((o, i) => o.rps / base[i].rps));
  const B = sc.baseline.toUpperCase();
  rows.push({
    scenario: `${sc.name} (${(bytes.length / 1024).toFixed(1)} KiB)`,
    db: env.db,
    m,
    baseline: `${B} ${fmt(b.rps, 0)}${b2}`,
    result: `${fmt(ratio, 2)} × ${B}`,
    ratio,
    goal: `≥ ${sc.goal.toFixed(2)} × ${B}`,
    met: ratio >= sc.goal,
    rssMb: rss,
  });
}

function machine(): string {
  const c = cpus();
  return `${c[0]?.model ?? 'unknown CPU'}, ${c.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** PostgreSQL's goal is relative: at least 0.6 of the SQLite ratio of the same scenario. */
function comparePostgres(rows: Row[]): void {
  for (const r of rows) {
    if (r.db !== 'postgres' || r.ratio === undefined || !r.goal.startsWith('≥')) continue;
    const lite = rows.find((x) => x.db === 'sqlite' && x.scenario.split(' (')[0] === r.scenario.split(' (')[0] && x.ratio !== undefined);
    if (!lite?.ratio) continue;
    const rel = r.ratio / lite.ratio;
    r.result += ` (${fmt(rel, 2)} of SQLite)`;
    r.goal += '; ≥ 0.6 of SQLite';
    r.met = Boolean(r.met) && rel >= 0.6;
  }
}

function table(rows: Row[]): string {
  const head = '| scenario | db | req/s | p50 ms | p90 ms | p99 ms | errors | baseline req/s | result | goal | met | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map((r) => {
    const m = r.m;
    const cells = m ? [fmt(m.rps, 0), m.p50, m.p90, m.p99, m.errors + m.non2xx] : ['-', '-', '-', '-', '-'];
    return `| ${r.scenario} | ${r.db} | ${cells.join(' | ')} | ${r.baseline} | ${r.result} | ${r.goal} | ${r.met === null ? '-' : r.met ? 'yes' : 'no'} | ${r.rssMb || '-'} |`;
  });
  return [head, ...lines].join('\n');
}

/**
 * Waits (up to 60 s) until the server answers a cheap API request within a second, so a backlog
 * left by a slow scenario is not billed to the next one.
 */
async function settle(server: LabwrightServer): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const start = Date.now();
    try {
      const r = await fetch(`${server.url}/api/v4/version`, { headers: { 'PRIVATE-TOKEN': server.token }, signal: AbortSignal.timeout(5000) });
      await r.arrayBuffer();
      if (r.ok && Date.now() - start < 1000) return;
    } catch {
      /* still busy */
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log('(server still busy after 60 s)');
}

async function runDatabase(db: DbName, rows: Row[]): Promise<void> {
  const selected = scenarios.filter((s) => (wanted.length ? wanted.includes(s.name) : !s.large || large));
  const needLarge = selected.some((s) => s.large) || args.includes('--large');
  let server = await startLabwright(db);
  try {
    const seeded = await seed(server, { large: needLarge, log: (msg) => console.log(`${db} seed ${msg}`) });
    console.log(`${db} seeded in ${JSON.stringify(seeded.seconds)} (seconds)`);
    // Start-up to ready on the existing data set, and idle RSS, of the compiled server (what
    // `npm start` runs); it then serves every scenario. Without a build, the sources through tsx.
    await stop(server.child);
    server = await startLabwright(db, server, compiled ? [COMPILED] : []);
    await new Promise((r) => setTimeout(r, smoke ? 200 : 3000));
    const idle = rssMb(server.child.pid);
    rows.push({
      scenario: 'start-up to ready, idle RSS',
      db,
      m: null,
      baseline: '-',
      result: `${fmt(server.startMs, 0)} ms, ${idle} MB${compiled ? '' : ' (sources through tsx: no build)'}`,
      goal: '< 1000 ms; < 120 MB',
      met: server.startMs < 1000 && idle < 120,
      rssMb: idle,
    });
    console.log(`${db} start-up ${fmt(server.startMs, 0)} ms, idle RSS ${idle} MB`);
    const env: ScenarioEnv = { url: server.url, token: server.token, seeded, db };
    let current = server;
    for (const sc of selected) {
      if (current.child.exitCode !== null || current.child.signalCode !== null) {
        // Something outside the bench ended the server (seen on the shared machine): say so, start it again.
        console.log(`${db}: the server exited (code ${current.child.exitCode}, signal ${current.child.signalCode}); restarting it`);
        current = await startLabwright(db, current, compiled ? [COMPILED] : []);
        server = current;
        env.url = current.url;
      }
      process.stdout.write(`${db} ${sc.name} … `);
      const before = rows.length;
      if (sc.kind === 'ratio') await runRatio(sc, env, current, rows);
      else {
        await special[sc.run]({
          env,
          timing,
          rounds: ROUNDS,
          smoke,
          dataDir: current.dataDir,
          databaseUrl: current.databaseUrl,
          headers: { 'PRIVATE-TOKEN': current.token },
          row: (r) => rows.push({ ...r, db, rssMb: peakRssMb(current.child.pid) }),
        });
      }
      console.log(rows.slice(before).map((r) => `${r.result} (${r.goal})`).join('; '));
      await settle(current);
    }
  } finally {
    await cleanup(server);
  }
}

async function main(): Promise<void> {
  if (wanted.length) {
    const unknown = wanted.filter((w) => !scenarios.some((s) => s.name === w));
    if (unknown.length) throw new Error(`no scenario named ${unknown.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`);
  }
  const dbs: DbName[] = dbArg === 'sqlite' ? ['sqlite'] : dbArg === 'postgres' ? ['postgres'] : ['sqlite', 'postgres'];
  const rows: Row[] = [];
  compiled = !smoke && (await buildCompiled());
  try {
    for (const db of dbs) {
      if (db === 'postgres' && !(await postgresReachable())) {
        console.log('PostgreSQL not reachable: skipping the PostgreSQL runs');
        continue;
      }
      await runDatabase(db, rows);
    }
  } finally {
    await stopBaselines();
  }
  comparePostgres(rows);
  const out = table(rows);
  console.log('\n' + out);
  const stamp = new Date().toISOString();
  // Switches the server inherits from the bench's environment (the caches) and the bench's own
  // settings, named in the command.
  const switches = Object.keys(process.env)
    .filter((k) => /^(LABWRIGHT_.*_CACHE|BENCH_[A-Z_]+)$/.test(k))
    .sort()
    .map((k) => `${k}=${process.env[k]} `)
    .join('');
  const header = `\n### Run of ${stamp}${smoke ? ' (smoke: 0.5 s per measurement, not a result)' : ''}\n\nMachine: ${machine()}. Command: \`${switches}npm run bench${args.length ? ' -- ' + args.join(' ') : ''}\`. Load: autocannon, 50 connections, no pipelining, ${timing.warmup} s warm-up, ${timing.duration} s measured per side in ${ROUNDS} interleaved rounds; rate-500 and mixed-rate: constant arrival (bench/arrival.ts); server ${compiled ? 'built as by npm run build (one bundled module, node_modules/.cache/labwright-bench-dist)' : 'sources through tsx'}.\n\n`;
  if (!smoke) appendFileSync(join(import.meta.dirname, '..', 'docs', 'benchmarks.md'), header + out + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
