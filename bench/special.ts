// Scenarios that are not a plain ratio against a baseline: creation rate, mixed load, the
// GitLab-tool constant-rate run, pagination depth and the cost of counting.
import autocannon from 'autocannon';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDatabase } from '../src/db/database.js';
import { oauthToken } from './oauth.js';
import { alternate, combine, load, measure, median, mrCreateRequest, runArrival, type Measure, type Timing } from './load.js';
import type { Stream, StreamResult } from './arrival.js';
import { mixedReadPaths, mixedStreams, scenarios, type RatioScenario, type ScenarioEnv } from './scenarios.js';

export interface Row {
  scenario: string;
  db: string;
  m: Measure | null;
  baseline: string;
  /** The figure the goal is about (a ratio, a rate or a latency). */
  result: string;
  ratio?: number;
  goal: string;
  met: boolean | null;
  rssMb: number;
}

export interface SpecialCtx {
  env: ScenarioEnv;
  timing: Timing;
  /** Interleaved rounds of a comparison (BENCH_ROUNDS): the result is the median of their ratios. */
  rounds: number;
  smoke: boolean;
  dataDir: string;
  databaseUrl: string | null;
  headers: Record<string, string>;
  row(partial: Omit<Row, 'db' | 'rssMb'>): void;
}

const fmt = (n: number, d = 1) => n.toFixed(d);

/** Bodies for POST /merge_requests, each on its own seeded `post-N` branch. */
function createRequest(e: ScenarioEnv): autocannon.Request {
  return mrCreateRequest(e.seeded.mrProjectId, () => e.seeded.nextPostBranch++);
}

/** Creations at `rate` per second on 10 connections, from a separate process (bench/write-load.ts). */
async function writeLoad(c: SpecialCtx, seconds: number, rate: number): Promise<Measure> {
  const first = c.env.seeded.nextPostBranch;
  const args = [join(import.meta.dirname, 'write-load.ts'), c.env.url, String(c.env.seeded.mrProjectId), String(first), String(seconds), String(rate), JSON.stringify(c.headers)];
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', ...args], { maxBuffer: 1 << 20 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
  const { measure, used } = JSON.parse(out.trim().split('\n').pop()!) as { measure: Measure; used: number };
  c.env.seeded.nextPostBranch = first + used;
  return measure;
}

// POST /projects/:id/merge_requests
async function mrCreate(c: SpecialCtx): Promise<void> {
  const url = c.env.url;
  const opts = { requests: [createRequest(c.env)], connections: 10 };
  const m = await measure({ ...c.timing, warmup: Math.min(c.timing.warmup, 1) }, url, c.headers, opts);
  c.row({ scenario: 'mr-create (10 conns)', m, baseline: '-', result: `${fmt(m.okRps, 0)} created/s`, goal: '≥ 300 created/s', met: m.okRps >= 300 });
}

/**
 * Mixed load: reads on 50 connections; then the same with writes added at 1/9 of the read rate
 * (10 %). Like the ratio scenarios, in interleaved rounds (reads alone, with writes, alone, …) whose
 * ratios' median is the result: on this shared machine a reads-alone p90 measured once moved by
 * half from run to run, which a single pair of measurements turned into the ratio.
 */
async function mixed(c: SpecialCtx): Promise<void> {
  const reads = mixedReadPaths(c.env);
  const readReqs = reads.map((path) => ({ method: 'GET' as const, path }));
  // A short mixed warm-up first, as for mixed-rate (the first creations of a server pay for start-up).
  if (!c.smoke) await Promise.all([load(c.env.url, c.headers, Math.min(c.timing.warmup, 1), { requests: readReqs }), writeLoad(c, Math.min(c.timing.warmup, 1), 50)]);
  const round = { duration: Math.max(0.5, c.timing.duration / c.rounds), warmup: 0 };
  // The write load is a process of its own that takes a moment to start sending: the reads'
  // measurement begins `settle` seconds after it was started, and it goes on until theirs ends.
  const settle = c.smoke ? 0 : 1.5;
  const alone: Measure[] = [];
  const withWrites: Measure[] = [];
  const writesDone: Measure[] = [];
  let writeRate = 1;
  const readsAlone = async (first: boolean) => {
    alone.push(await measure({ ...round, warmup: first ? c.timing.warmup : c.smoke ? 0 : 1 }, c.env.url, c.headers, { requests: readReqs }));
    // Asked for at a ninth of the first read-only rate, every round.
    if (first) writeRate = Math.max(1, Math.round(alone[0]!.rps / 9));
  };
  const readsWithWrites = async () => {
    const writing = writeLoad(c, settle + round.duration + (c.smoke ? 0 : 0.5), writeRate);
    await new Promise((r) => setTimeout(r, settle * 1000));
    withWrites.push(await load(c.env.url, c.headers, round.duration, { requests: readReqs }));
    writesDone.push(await writing);
  };
  // Reads alone warm up again after a round with writes, whose work can linger.
  await alternate(c.rounds, readsAlone, readsWithWrites);
  const readOnly = combine(alone);
  const r = combine(withWrites);
  const w = combine(writesDone);
  const share = w.okRps / (w.okRps + r.rps || 1);
  const ratio = median(withWrites.map((m, i) => m.p90 / (alone[i]!.p90 || 1)));
  c.row({ scenario: 'mixed: read-only reads', m: readOnly, baseline: '-', result: `p90 ${readOnly.p90} ms`, goal: '(reference)', met: null });
  c.row({
    scenario: `mixed: reads with ${fmt(share * 100, 0)} % writes`,
    m: r,
    baseline: `writes ${fmt(w.okRps, 0)}/s of ${writeRate}/s asked, p90 ${w.p90} ms`,
    result: `read p90 ${fmt(ratio, 2)} × read-only (median of ${c.rounds} rounds)`,
    ratio,
    goal: '≤ 1.2 × read-only p90',
    met: r.total > 0 && w.okRps > 0 && ratio <= 1.2,
  });
}

/** A constant-arrival run of `streams` from its own process (bench/arrival.ts). */
async function arrival(c: SpecialCtx, seconds: number, streams: Stream[], settleSeconds = 0): Promise<StreamResult[]> {
  const results = await runArrival(c.env.url, c.headers, seconds, streams, settleSeconds);
  for (const r of results) if (r.used) c.env.seeded.nextPostBranch += r.used;
  return results;
}

const asMeasure = (r: StreamResult, seconds: number): Measure => ({ rps: r.rate, okRps: r.ok / seconds, mean: r.mean, p50: r.p50, p90: r.p90, p99: r.p99, errors: r.failed, non2xx: 0, total: r.sent });

/**
 * Mixed load at a constant arrival rate (GitLab's performance tool's way): reads arrive at
 * BENCH_MIXED_RATE per second (450 by default: with the writes, 500 req/s, the GitLab tool's rate
 * for 25k users) for the whole run, and creations at a ninth of that rate (so that writes are 10 %
 * of the requests) only in every other window of WINDOW_S seconds. Each window with writes is
 * compared with the one without before it (leaving out its first SKIP_S seconds, where the last
 * writes are still answered), and the result is the median of those ratios of read p90: on this
 * shared machine the reads-alone p90 moved by 3 x from one run of seconds to the next, so rounds
 * of separate runs (reads alone, then with writes; until the twenty-sixth pass) measured the
 * neighbours as much as the writes, while adjacent windows of one run see the same neighbours.
 */
const WINDOW_S = 1;
const SKIP_S = 0.5;

async function mixedArrival(c: SpecialCtx): Promise<void> {
  const { reads, writes } = mixedStreams(c.env);
  const readRate = reads.rate;
  const writeRate = writes().rate;
  // Twice the measured time of a ratio scenario (both sides of it), in windows.
  const seconds = c.smoke ? 0.5 : 2 * c.timing.duration;
  const window = c.smoke ? 0.25 : WINDOW_S;
  const skip = c.smoke ? 0.1 : SKIP_S;
  // The warm-up runs the mixed load itself: the first creations of a server pay once for what
  // later ones find ready (the branch list read from packed-refs, the merge snapshot of a commit
  // pair, compiled code), which is start-up, not what writes cost reads.
  if (!c.smoke) await arrival(c, c.timing.warmup, [reads, writes()]);
  const [r, w] = await arrival(c, seconds, [{ ...reads, windows: { seconds: window, skip } }, { ...writes(), gate: window }], c.smoke ? 0 : 1);
  const wins = r!.windows ?? [];
  const ratios: number[] = [];
  for (let i = 1; i < wins.length; i += 2) if (wins[i - 1]!.n && wins[i]!.n) ratios.push(wins[i]!.p90 / (wins[i - 1]!.p90 || 1));
  const ratio = ratios.length ? median(ratios) : Infinity;
  const off = r!.pooled!.off;
  const on = r!.pooled!.on;
  const onSeconds = seconds / 2;
  // Reads arrive at readRate in every window; n counts those measured (not the skipped starts).
  const asWindowMeasure = (p: typeof on): Measure => ({ rps: readRate, okRps: readRate, mean: 0, p50: p.p50, p90: p.p90, p99: p.p99, errors: 0, non2xx: 0, total: p.n });
  const label = `mixed at a constant ${fmt(readRate + writeRate, 0)} req/s`;
  c.row({ scenario: `${label}: reads, windows without writes (${readRate}/s)`, m: asWindowMeasure(off), baseline: '-', result: `p90 ${off.p90} ms`, goal: '(reference)', met: null });
  c.row({
    scenario: `${label}: reads, windows with 10 % writes`,
    m: asWindowMeasure(on),
    baseline: `writes ${fmt(w!.ok / (onSeconds || 1), 0)}/s of ${fmt(writeRate, 0)}/s asked in their windows, ${w!.ok} created, p90 ${w!.p90} ms`,
    result: `read p90 ${fmt(ratio, 2)} × the window before (median of ${ratios.length}; all windows together ${fmt(on.p90 / (off.p90 || 1), 2)} ×)`,
    ratio,
    goal: '≤ 1.2 × read-only p90',
    met: off.n > 0 && w!.ok > 0 && r!.failed + w!.failed === 0 && ratio <= 1.2,
  });
}

/**
 * GitLab performance tool style: each read scenario in turn at a constant 500 requests/s
 * (constant arrival, bench/arrival.ts) for BENCH_RATE_DURATION seconds (60), passing when the p90
 * time to first byte is under 200 ms and more than 99 % succeed.
 */
async function constantRate(c: SpecialCtx): Promise<void> {
  const rate = 500;
  const seconds = c.smoke ? 0.5 : Number(process.env.BENCH_RATE_DURATION ?? 60);
  const reads = scenarios.filter((s): s is RatioScenario => s.kind === 'ratio' && !s.large);
  for (const sc of reads) {
    const [r] = await runArrival(c.env.url, c.headers, seconds, [{ name: sc.name, rate, paths: [sc.path(c.env)] }]);
    const success = r.sent ? (r.ok / r.sent) * 100 : 0;
    c.row({
      scenario: `rate-500: ${sc.name}, ${seconds} s`,
      m: { ...asMeasure(r, seconds), ...r.ttfb },
      baseline: '-',
      result: `p90 TTFB ${r.ttfb.p90} ms, ${fmt(success, 2)} % ok, ${fmt(r.rate, 0)} req/s`,
      goal: 'p90 TTFB < 200 ms, > 99 % ok at 500 req/s',
      met: r.ttfb.p90 < 200 && success > 99 && r.rate >= rate * 0.95,
    });
  }
}

/**
 * Latency of one request at a time (no queueing), for the depth goals. `path(k)` gives the k-th
 * request's path: each is different, so that neither a kept response nor a kept read result
 * answers it and the depth's own cost is measured (the same URL over and over measured the caches).
 */
async function single(c: SpecialCtx, path: (k: number) => string): Promise<Measure> {
  let k = 0;
  const requests = [{ method: 'GET' as const, setupRequest: (req: autocannon.Request) => ({ ...req, path: path(k++) }) }];
  return measure({ duration: c.smoke ? 0.5 : Math.max(3, Math.round(c.timing.duration / 2)), warmup: c.smoke ? 0 : 1 }, c.env.url, c.headers, { connections: 1, requests });
}

/** Distinct starting points per side: more than one connection sends in one measurement, so no path comes twice. */
const SPREAD = 10_000;

// GET /users?pagination=keyset at depth 400,000 vs the first pages
async function keysetDepth(c: SpecialCtx): Promise<void> {
  const base = '/api/v4/users?pagination=keyset&order_by=id&sort=asc&per_page=20';
  const start = c.env.seeded.firstUserId;
  const first = await single(c, (k) => `${base}&id_after=${start + (k % SPREAD)}`);
  const deep = await single(c, (k) => `${base}&id_after=${start + 400_000 + (k % SPREAD)}`);
  const ratio = deep.mean / (first.mean || 1);
  c.row({ scenario: 'keyset users: pages within the first 10,000 (1 conn)', m: first, baseline: '-', result: `mean ${fmt(first.mean, 2)} ms`, goal: '(reference)', met: null });
  c.row({ scenario: 'keyset users: depth 400,000–410,000 (1 conn)', m: deep, baseline: '-', result: `mean ${fmt(ratio, 2)} × first pages`, ratio, goal: '≤ 1.5 × first page', met: first.total > 0 && deep.total > 0 && deep.errors + deep.non2xx === 0 && ratio <= 1.5 });
}

// GET /projects/:id/merge_requests?page=2501… (offset 50,000 and a little more) of 500,000
async function offsetDepth(c: SpecialCtx): Promise<void> {
  const m = await single(c, (k) => `/api/v4/projects/${c.env.seeded.stressProjectId}/merge_requests?per_page=20&page=${2501 + (k % 500)}`);
  c.row({ scenario: 'offset MR pages at depth 50,000–60,000 of 500,000 (1 conn)', m, baseline: '-', result: `p90 ${m.p90} ms`, goal: 'p90 ≤ 50 ms', met: m.total > 0 && m.errors + m.non2xx === 0 && m.p90 <= 50 });
}

/** The bounded count (stops past 10,000) of a list with 500,000 matches, timed on the server's database, its read cache off. */
async function countCost(c: SpecialCtx): Promise<void> {
  const m = await single(c, () => `/api/v4/projects/${c.env.seeded.stressProjectId}/merge_requests?per_page=20`);
  // Without its read cache: the same statement over and over would be answered from it.
  const database = createDatabase({ databaseUrl: c.databaseUrl, dataDir: c.dataDir, readCache: false });
  const times: number[] = [];
  try {
    const pid = c.env.seeded.stressProjectId!;
    for (let i = 0; i < (c.smoke ? 5 : 200); i++) {
      const start = performance.now();
      await database.db
        .selectFrom((eb) => eb.selectFrom('merge_requests').select((e) => e.lit(1).as('one')).where('project_id', '=', pid).limit(10_001).as('bounded'))
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst();
      times.push(performance.now() - start);
    }
  } finally {
    await database.close();
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  c.row({ scenario: 'count of a 500,000 MR list (bounded at 10,001)', m, baseline: 'page 1 with the count, 1 conn', result: `count ${fmt(median, 2)} ms (median SQL)`, goal: '≤ 2 ms', met: median <= 2 });
}

export const special = { mrCreate, mixed, mixedArrival, constantRate, keysetDepth, offsetDepth, countCost, oauthToken };
