#!/usr/bin/env node
// npm run fuzz: the route fuzzer (test/fuzz) for far longer than in npm test, on SQLite and then
// PostgreSQL (LABWRIGHT_TEST_ONLY=sqlite|postgres for one).
//   FUZZ_RUNS       cases in all per database (default 10000, spread evenly over the routes)
//   FUZZ_SEED       fast-check seed (default: a new one each run, printed so a run can be repeated)
//   FUZZ_ROUTE      a regular expression on "METHOD /path" to fuzz only some routes
//   FUZZ_HEAP_BOUND_MB  heap growth allowed between the first and last quarter (default 40)
import { spawnSync } from 'node:child_process';

const runs = process.env.FUZZ_RUNS ?? '10000';
const seed = process.env.FUZZ_SEED ?? String(Math.floor(Math.random() * 2 ** 31));
const only = process.env.LABWRIGHT_TEST_ONLY;
const dbs = only ? [only] : ['sqlite', 'postgres'];
let failed = false;
for (const db of dbs) {
  console.log(`\n=== fuzz on ${db}: ${runs} cases, seed ${seed} ===\n`);
  const r = spawnSync('npx', ['vitest', 'run', 'test/fuzz/routes.test.ts'], {
    stdio: 'inherit',
    env: { ...process.env, LABWRIGHT_TEST_DB: db, FUZZ_RUNS: runs, FUZZ_SEED: seed, FUZZ_TIMEOUT_MS: String(6 * 3600 * 1000) },
  });
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
