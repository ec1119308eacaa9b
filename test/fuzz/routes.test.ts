// Property-based fuzzing of every route the app registers (discovered at run time). Bounded in
// `npm test` (FUZZ_RUNS_PER_ROUTE, default 4); `npm run fuzz` sets far more.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, TEST_DB, type TestServer } from '../helpers/server.js';
import { isKnown } from './known-failures.js';
import { runFuzz } from './run.js';

const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS_PER_ROUTE ?? 4);
/** Total cases (npm run fuzz); spread over the routes, overriding FUZZ_RUNS_PER_ROUTE. */
const TOTAL_RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : undefined;
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
/** Heap growth (MB, after GC) allowed between the first and last quarter of the run. */
const HEAP_BOUND_MB = Number(process.env.FUZZ_HEAP_BOUND_MB ?? 40);
/** Time budget of the bounded run (npm test); the long run (FUZZ_RUNS) has none. */
const BUDGET_MS = TOTAL_RUNS === undefined ? Number(process.env.FUZZ_BUDGET_MS ?? 50_000) : undefined;
const FILTER = process.env.FUZZ_ROUTE ? new RegExp(process.env.FUZZ_ROUTE) : undefined;
const VERBOSE = process.env.FUZZ_VERBOSE === '1' || RUNS_PER_ROUTE > 20 || TOTAL_RUNS !== undefined;

let s: TestServer;

beforeAll(async () => {
  s = await startServer();
});

afterAll(async () => {
  await s?.close();
});

it(
  `every route survives generated and hostile requests (${TEST_DB}, ${TOTAL_RUNS ? `${TOTAL_RUNS} in all` : `${RUNS_PER_ROUTE} per route`})`,
  async () => {
    const report = await runFuzz(s, { runsPerRoute: RUNS_PER_ROUTE, totalRuns: TOTAL_RUNS, budgetMs: BUDGET_MS, seed: SEED, filter: FILTER, log: VERBOSE ? console.log : undefined });
    const summary = {
      db: TEST_DB,
      routes: report.routes,
      cases: report.cases,
      seconds: Math.round(report.durationMs / 100) / 10,
      statuses: report.statuses,
      healedCallers: report.healed,
      heapMb: report.heapSamplesMb.map((x) => Math.round(x)),
      heapGrowthMb: Math.round(report.heapGrowthMb * 10) / 10,
    };
    console.log(`fuzz summary ${JSON.stringify(summary)}`);
    for (const f of report.failures) console.log(`fuzz failure ${JSON.stringify(f)}`);
    const known = report.failures.filter((f) => isKnown(f));
    for (const f of known) console.log(`KNOWN (not failing the run; see known-failures.ts): ${f.route} | ${f.problem} | ${isKnown(f)!.why}`);
    if (!FILTER) expect(report.routes).toBeGreaterThan(10);
    expect(report.failures.filter((f) => !isKnown(f)).map((f) => `${f.route} | ${f.problem} | ${f.method} ${f.target.slice(0, 120)} -> ${f.status}`)).toEqual([]);
    expect(report.heapGrowthMb).toBeLessThan(HEAP_BOUND_MB);
  },
  Number(process.env.FUZZ_TIMEOUT_MS ?? 240_000),
);
