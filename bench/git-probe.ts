// What git processes started by requests cost the other requests (docs/benchmarks.md, findings
// 81-82): the mixed-rate reads (450/s, bench/scenarios.ts) alone and beside GET
// .../repository/commits at BENCH_GIT_RATE/s (30 by default), each on a URL of its own so that none
// is answered from the kept responses and each runs git. Each round restarts the server and prints
// the reads' and the commits' p50/p90/p99. Not part of `npm run bench`.
//   node --import tsx bench/git-probe.ts [sqlite|postgres] [rounds]
import type { StreamResult } from './arrival.js';
import { buildCompiled, cleanup, COMPILED, median, runArrival, startLabwright, stop, type LabwrightServer } from './load.js';
import { mixedReadPaths } from './scenarios.js';
import { seed } from './seed.js';

const db = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const rounds = Number(process.argv[3] ?? 2);
const seconds = 5;
const gitRate = Number(process.env.BENCH_GIT_RATE ?? 30);

await buildCompiled();
let server: LabwrightServer = await startLabwright(db);
const seeded = await seed(server, { large: false });
let serial = 0;

async function round(): Promise<number> {
  await stop(server.child);
  server = await startLabwright(db, server, [COMPILED]);
  const env = { url: server.url, token: server.token, seeded, db } as const;
  const headers = { 'PRIVATE-TOKEN': server.token };
  const reads = { name: 'reads', rate: 450, paths: mixedReadPaths(env) };
  const commits = () => ({
    name: 'commits',
    rate: gitRate,
    paths: Array.from({ length: Math.ceil(gitRate * (seconds + 4)) }, () => `/api/v4/projects/${seeded.mrProjectId}/repository/commits?ref_name=topic&per_page=5&probe=${++serial}`),
  });
  await runArrival(server.url, headers, 2, [reads, commits()], 0);
  const [alone] = (await runArrival(server.url, headers, seconds, [reads], 1)) as [StreamResult];
  const [r, g] = (await runArrival(server.url, headers, seconds, [reads, commits()], 1)) as [StreamResult, StreamResult];
  const ratio = r.p90 / (alone.p90 || 1);
  console.log(
    `reads alone p50 ${alone.p50} p90 ${alone.p90} p99 ${alone.p99}; beside commits p50 ${r.p50} p90 ${r.p90} p99 ${r.p99} ms (${ratio.toFixed(2)} ×); commits ${g.ok} ok ${g.failed} failed, p50 ${g.p50} p90 ${g.p90} p99 ${g.p99} ms`,
  );
  return ratio;
}

try {
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) ratios.push(await round());
  console.log(`read p90 beside git ÷ alone, ${db}: ${ratios.map((x) => x.toFixed(2)).join(' ')} (median ${median(ratios).toFixed(2)})`);
} finally {
  await stop(server.child);
  await cleanup(server);
}
