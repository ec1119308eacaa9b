// What the mixed load's writes cost the reads, taken apart (issue 7, docs/benchmarks.md): the
// mixed-rate reads (450/s, the four merge request paths in turn, bench/arrival.ts) are measured in
// rounds of three runs each:
//   1. alone;
//   2. alone, while a separate process at nice 10 keeps one core busy for BENCH_HOG_DUTY of the
//      time (0.5 by default) and does nothing else: no writes, nothing of the server's (with
//      BENCH_HOG_IDLE=1 in the SCHED_IDLE class instead, through `chrt -i 0`);
//   3. with creations at 50/s added, as `npm run bench -- mixed-rate` runs them.
// For each run it prints the reads' p50/p90/p99 and the CPU time of the server's threads (main,
// the busiest other thread, which is the response refresher when it runs, and the rest: V8's
// helper threads and libuv's pool), from /proc. Linux only. Not part of `npm run bench`.
//   node --import tsx bench/contention-probe.ts [sqlite|postgres] [rounds]
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { StreamResult } from './arrival.js';
import { buildCompiled, cleanup, COMPILED, median, runArrival, startLabwright, stop } from './load.js';
import { mixedStreams } from './scenarios.js';
import { seed } from './seed.js';

const db = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const rounds = Number(process.argv[3] ?? 3);
const seconds = 5;
const duty = Number(process.env.BENCH_HOG_DUTY ?? 0.5);

/** CPU time (ms) by thread of process `pid`. */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime, in clock ticks (100 a second here).
      out.set(tid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/** A process at nice 10 (or SCHED_IDLE) busy for `share` of every 10 ms, for `ms`. */
function hog(share: number, ms: number): Promise<void> {
  const code = `const end = Date.now() + ${ms}; (function tick() { const t = performance.now(); while (performance.now() - t < ${share * 10}); if (Date.now() < end) setTimeout(tick, ${(1 - share) * 10}); })();`;
  const child = process.env.BENCH_HOG_IDLE
    ? spawn('chrt', ['-i', '0', process.execPath, '-e', code], { stdio: 'ignore' })
    : spawn('nice', ['-n', '10', process.execPath, '-e', code], { stdio: 'ignore' });
  return new Promise((resolve) => child.on('exit', () => resolve()));
}

await buildCompiled();
let server = await startLabwright(db);
const seeded = await seed(server, { large: false });
await stop(server.child);
server = await startLabwright(db, server, [COMPILED]);
const pid = server.child.pid!;
const env = { url: server.url, token: server.token, seeded, db } as const;
const headers = { 'PRIVATE-TOKEN': server.token };
const { reads, writes } = mixedStreams(env, 450);

let before = threadCpu(pid);
async function run(label: string, withWrites: boolean, withHog: boolean): Promise<number> {
  const hogging = withHog ? hog(duty, (seconds + 1.5) * 1000) : null;
  const results: StreamResult[] = await runArrival(server.url, headers, seconds, withWrites ? [reads, writes()] : [reads], 1);
  await hogging;
  for (const r of results) if (r.used) seeded.nextPostBranch += r.used;
  const now = threadCpu(pid);
  const used = [...now].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const);
  before = now;
  const main = used.find(([tid]) => tid === String(pid))?.[1] ?? 0;
  const others = used.filter(([tid]) => tid !== String(pid)).sort((a, b) => b[1] - a[1]);
  const busiest = others[0]?.[1] ?? 0;
  const rest = others.slice(1).reduce((a, [, ms]) => a + ms, 0);
  const r = results[0]!;
  const w = results[1];
  console.log(
    `${label.padEnd(16)} reads p50 ${r.p50} p90 ${r.p90} p99 ${r.p99} ms${w ? `; writes ${w.ok} ok, p90 ${w.p90} ms` : ''}; server CPU ms: main ${main}, busiest other thread ${busiest}, rest ${rest}`,
  );
  return r.p90;
}

try {
  // Warm-up with writes (a server's first creations pay once for start-up work).
  await runArrival(server.url, headers, 3, [reads, writes()], 0);
  const hogRatios: number[] = [];
  const writeRatios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const alone = await run('alone', false, false);
    hogRatios.push((await run(`${process.env.BENCH_HOG_IDLE ? 'idle' : 'nice-10'} hog ${duty}`, false, true)) / alone);
    writeRatios.push((await run('with writes', true, false)) / alone);
  }
  const show = (xs: number[]) => `${xs.map((x) => x.toFixed(2)).join(' ')} (median ${median(xs).toFixed(2)})`;
  console.log(`read p90 ÷ alone, ${db}: with the hog ${show(hogRatios)}; with writes ${show(writeRatios)}`);
} finally {
  await stop(server.child);
  await cleanup(server);
}
