// CPU profile of the real server under one scenario's load:
//   node --import tsx bench/profile.ts <scenario> [--db sqlite|postgres] [--seconds 10] [--top 40] [--large]
// BENCH_PROF_INTERVAL sets the sampling interval in µs (V8's default 1000).
// BENCH_COMPILED=1 profiles the bundle a previous `npm run bench` built (what `npm start` runs)
// instead of the sources; KEEP=1 leaves the data directory (and the .cpuprofile, whose path is printed).
// The main thread is profiled; the response refresher's thread is not.
// Seeds the default data set (with `--large` also the large ones, as a full `npm run bench` does), restarts the server with `node --cpu-prof`, loads the scenario's path
// with autocannon (50 connections), stops the server, and prints the functions with the most self
// time (and the .cpuprofile path, for Chrome DevTools or speedscope).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, COMPILED, load, runArrival, startLabwright, stop } from './load.js';
import { mixedStreams, scenarios, type ScenarioEnv } from './scenarios.js';
import { seed } from './seed.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  startTime: number;
  endTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const names = args.filter((a, i) => !a.startsWith('--') && !['--db', '--seconds', '--top'].includes(args[i - 1]));
if (names.length === 0) names.push('user');
const db = opt('--db', 'sqlite') as 'sqlite' | 'postgres';
const seconds = Number(opt('--seconds', '10'));
const top = Number(opt('--top', '40'));

/** Self time per function over the samples taken during the last `windowUs` before `endUs`. */
function summarise(file: string, fromUs: number, toUs: number): void {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = prof.startTime;
  prof.samples.forEach((id, i) => {
    t += prof.timeDeltas[i] ?? 0;
    // Only the measured load: start-up (module loading) and shutdown would otherwise dominate.
    if (t < fromUs || t > toUs) return;
    self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFrame = new Map<string, number>();
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    const where = f.url.replace(/^file:\/\/.*?\/(node_modules|src|bench)\//, '$1/');
    const key = `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
    byFrame.set(key, (byFrame.get(key) ?? 0) + us);
  }
  const rows = [...byFrame.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  console.log(`self time, ${(total / 1e6).toFixed(1)} s sampled:`);
  for (const [k, us] of rows) console.log(`${((us / total) * 100).toFixed(1).padStart(5)} %  ${k}`);
}

/** Offset between wall-clock µs and the monotonic clock the V8 profiler stamps samples with. */
function hrOffsetUs(): number {
  return Date.now() * 1000 - Number(process.hrtime.bigint() / 1000n);
}

async function main(): Promise<void> {
  let server = await startLabwright(db);
  try {
    const seeded = await seed(server, { large: args.includes('--large') });
    for (const name of names) {
      const sc = scenarios.find((s) => s.name === name);
      if (!name.startsWith('/') && name !== 'mixed-rate' && (!sc || sc.kind !== 'ratio')) throw new Error(`no ratio scenario named ${name}`);
      const dir = join(server.dataDir, `profile-${name}`);
      await stop(server.child);
      server = await startLabwright(db, server, ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(process.env.BENCH_PROF_INTERVAL ? [`--cpu-prof-interval=${process.env.BENCH_PROF_INTERVAL}`] : []), ...(process.env.BENCH_COMPILED ? [COMPILED] : [])]);
      const env: ScenarioEnv = { url: server.url, token: server.token, seeded, db };
      const url = `${server.url}${sc && sc.kind === 'ratio' ? sc.path(env) : name}`;
      const headers = { 'PRIVATE-TOKEN': server.token };
      // The measured window [from, to] (this process's clock) and what the load gave.
      let from: number;
      let to: number;
      if (name === 'mixed-rate') {
        // The constant-arrival mixed load: MR reads at BENCH_MIXED_RATE/s, creations at a ninth of that.
        const { reads, writes } = mixedStreams(env);
        // Warmed with the mixed load itself, as special.ts does (first creations pay once for the merge snapshot).
        seeded.nextPostBranch += (await runArrival(server.url, headers, 2, [reads, writes()]))[1]!.used;
        // The arrival process takes about a second to start, and waits for the last answers after.
        from = performance.now() + 1000;
        const [r, w] = await runArrival(server.url, headers, seconds, [reads, writes()]);
        to = Math.min(performance.now(), from + seconds * 1000);
        seeded.nextPostBranch += w.used;
        console.log(`\nmixed-rate on ${db}: reads p50 ${r.p50} p90 ${r.p90} p99 ${r.p99} ms; writes ${w.ok} created, p90 ${w.p90} ms`);
      } else {
        // Warm up before the profiled part matters: module loading would otherwise dominate.
        await load(url, headers, 2);
        from = performance.now();
        const m = await load(url, headers, seconds);
        to = performance.now();
        console.log(`\n${name} on ${db}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, p90 ${m.p90} ms`);
      }
      await stop(server.child);
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) throw new Error('no profile written');
      // The profile's clock is the server's monotonic clock in µs; both processes share the boot-time origin.
      summarise(join(dir, file), (performance.timeOrigin + from) * 1000 - hrOffsetUs(), (performance.timeOrigin + to) * 1000 - hrOffsetUs());
      console.log(`profile: ${join(dir, file)}`);
    }
  } finally {
    if (!process.env.KEEP) await cleanup(server);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
