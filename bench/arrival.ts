// Constant-arrival load in its own process: requests are sent on a fixed schedule (request k of a
// stream is due at start + k / rate), whatever the server's answers, as GitLab's performance tool
// (k6, constant arrival rate) does. Latency is counted from the moment a request was due, not
// when it left, so a server that falls behind cannot hide it (no coordinated omission).
// autocannon's overallRate is a per-connection quota per second, sent in bursts, which measures
// the bursts' own queueing instead. Forked by special.ts; prints one JSON line.
//   node --import tsx bench/arrival.ts <url> <headers JSON> <seconds> <streams JSON> [settle seconds]
// With a settle time, the load runs that much longer first and what was due in it is not counted
// (this process's own start: its code compiles while the first requests go out).
// Windows (mixed-rate): a stream with `gate` sends only in the odd windows of `gate` seconds (the
// "on" windows), counted from the end of the settle time; a stream with `windows` also reports the
// p90 of each window, leaving out what was due in the first `skip` seconds of an "off" window (the
// last writes' answers and the work they left, which belong to the window before).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { mrCreateBody } from './load.js';

export interface Stream {
  name: string;
  rate: number;
  /** GET these paths in turn; or, with `create`, POST merge requests from the seeded `post-N` branches. */
  paths?: string[];
  create?: { projectId: number; firstBranch: number };
  /** Send only in the odd windows of this many seconds (see the header). */
  gate?: number;
  /** Report each window's p90 (windows of `seconds`; `skip` seconds left out of each even one). */
  windows?: { seconds: number; skip: number };
}

/** One window of a stream with `windows`: odd ones are those a gated stream sends in. */
export interface WindowResult {
  on: boolean;
  n: number;
  p90: number;
}

export interface StreamResult {
  name: string;
  sent: number;
  ok: number;
  failed: number;
  /** Requests answered per second while the load ran. */
  rate: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Time to first byte (the response's status line and headers) from the moment due. */
  ttfb: { p50: number; p90: number; p99: number };
  /** Branches used (creation streams). */
  used: number;
  /** Per window, with `windows`; and the percentiles of all "on" and all "off" windows together. */
  windows?: WindowResult[];
  pooled?: { on: Percentiles; off: Percentiles };
}

export interface Percentiles {
  n: number;
  p50: number;
  p90: number;
  p99: number;
}

const [url, headersJson, secondsArg, streamsJson, settleArg = '0'] = process.argv.slice(2);
const settleMs = Number(settleArg) * 1000;
const base = new URL(url);
const headers = JSON.parse(headersJson) as Record<string, string>;
const seconds = Number(secondsArg);
const streams = JSON.parse(streamsJson) as Stream[];
if (!(seconds > 0) || streams.some((st) => !(st.rate > 0) || !Number.isFinite(st.rate))) throw new Error(`bad seconds or rate: ${secondsArg} ${streamsJson}`);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

interface State {
  s: Stream;
  next: number;
  latencies: number[];
  ttfb: number[];
  /** Requests not answered yet: due time → whether their headers came. */
  pending: Map<number, boolean>;
  /** Requests answered before the load ended. */
  inTime: number;
  ok: number;
  failed: number;
  branch: number;
  /** With `windows`: latencies by window index. */
  byWindow: number[][];
}

function send(st: State, due: number): void {
  const k = st.next++;
  let method = 'GET';
  let path: string;
  let body: string | undefined;
  const h: Record<string, string> = { ...headers };
  if (st.s.create) {
    method = 'POST';
    path = `/api/v4/projects/${st.s.create.projectId}/merge_requests`;
    body = mrCreateBody(st.branch++);
    h['content-type'] = 'application/json';
    h['content-length'] = String(Buffer.byteLength(body));
  } else {
    const paths = st.s.paths!;
    path = paths[k % paths.length];
  }
  st.pending.set(due, false);
  const counted = due >= start + settleMs;
  const w = countedWindow(st.s, due);
  const finish = (ok: boolean) => {
    const now = performance.now();
    st.pending.delete(due);
    if (!counted) return;
    st.latencies.push(now - due);
    if (w !== null) (st.byWindow[w] ??= []).push(now - due);
    if (now <= end) st.inTime++;
    if (ok) st.ok++;
    else st.failed++;
  };
  const req = http.request({ host: base.hostname, port: base.port, path, method, headers: h, agent }, (res) => {
    if (counted) st.ttfb.push(performance.now() - due);
    st.pending.set(due, true);
    res.resume();
    res.on('end', () => finish(res.statusCode! >= 200 && res.statusCode! < 300));
  });
  // A connection error counts as a failure, timed like an answer.
  req.on('error', () => {
    if (st.pending.has(due)) finish(false);
  });
  req.end(body);
}

/** The window (of `seconds`) a due time falls in, counted from the end of the settle time; -1 before it. */
function windowOf(due: number, seconds: number): number {
  const t = due - (start + settleMs);
  return t < 0 ? -1 : Math.floor(t / (seconds * 1000));
}

/** The window a request due then is counted in (streams with `windows`), or null: none, or the skipped start of an "off" one. */
function countedWindow(s: Stream, due: number): number | null {
  if (!s.windows) return null;
  const w = windowOf(due, s.windows.seconds);
  if (w < 0) return null;
  const into = due - (start + settleMs) - w * s.windows.seconds * 1000;
  return w % 2 === 1 || into >= s.windows.skip * 1000 ? w : null;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const states: State[] = streams.map((s) => ({ s, next: 0, latencies: [], ttfb: [], pending: new Map(), inTime: 0, ok: 0, failed: 0, branch: s.create?.firstBranch ?? 0, byWindow: [] }));
const start = performance.now();
const end = start + settleMs + seconds * 1000;

await new Promise<void>((resolve) => {
  // A tight timer loop: setTimeout(0) wakes about every millisecond; every request whose time
  // has come is sent, each timed from its own due moment.
  const tick = () => {
    const now = performance.now();
    for (const st of states) {
      for (;;) {
        const due = start + (st.next * 1000) / st.s.rate;
        if (due > now || due >= end) break;
        // A gated stream is silent in the even windows (it sends through the settle time).
        if (st.s.gate && windowOf(due, st.s.gate) % 2 === 0) {
          st.next++;
          continue;
        }
        send(st, due);
      }
    }
    if (now >= end) resolve();
    else setTimeout(tick, 0);
  };
  tick();
});
// Let answers to the last requests come (a few seconds at most).
const answeredAll = () => states.every((st) => st.pending.size === 0);
const deadline = performance.now() + 5000;
while (!answeredAll() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
// Those still unanswered count as failed, with the time they have waited so far (a lower bound):
// leaving them out would make the percentiles look better than they were.
const gaveUp = performance.now();
for (const st of states) {
  for (const [due, headersCame] of st.pending) {
    if (due < start + settleMs) continue;
    st.latencies.push(gaveUp - due);
    const w = countedWindow(st.s, due);
    if (w !== null) (st.byWindow[w] ??= []).push(gaveUp - due);
    if (!headersCame) st.ttfb.push(gaveUp - due);
    st.failed++;
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

function pooledOf(windows: Array<number[] | undefined>): Percentiles {
  const l = windows.flatMap((x) => x ?? []).sort((a, b) => a - b);
  return { n: l.length, p50: round(percentile(l, 50)), p90: round(percentile(l, 90)), p99: round(percentile(l, 99)) };
}

const results: StreamResult[] = states.map((st) => {
  const sorted = [...st.latencies].sort((a, b) => a - b);
  return {
    name: st.s.name,
    // Counted ones only (the settle time's are not).
    sent: st.ok + st.failed,
    ok: st.ok,
    failed: st.failed,
    rate: st.inTime / seconds,
    mean: round(sorted.reduce((a, x) => a + x, 0) / (sorted.length || 1)),
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? 0),
    ttfb: ((t) => ({ p50: round(percentile(t, 50)), p90: round(percentile(t, 90)), p99: round(percentile(t, 99)) }))([...st.ttfb].sort((a, b) => a - b)),
    used: st.branch - (st.s.create?.firstBranch ?? 0),
    ...(st.s.windows
      ? {
          windows: Array.from({ length: Math.ceil((seconds - 1e-9) / st.s.windows.seconds) }, (_, w) => {
            const l = [...(st.byWindow[w] ?? [])].sort((a, b) => a - b);
            return { on: w % 2 === 1, n: l.length, p90: round(percentile(l, 90)) };
          }),
          pooled: {
            on: pooledOf(st.byWindow.filter((_, w) => w % 2 === 1)),
            off: pooledOf(st.byWindow.filter((_, w) => w % 2 === 0)),
          },
        }
      : {}),
  };
});
// Exit once written: requests still queued in the agent must not keep the process (and the bench) waiting.
process.stdout.write(`${JSON.stringify(results)}\n`, () => process.exit(0));
