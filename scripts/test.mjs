#!/usr/bin/env node
// npm test: the whole suite on SQLite, then again on PostgreSQL when one is reachable.
// LABWRIGHT_REQUIRE_POSTGRES=1 (set by .ci/run) turns an unreachable PostgreSQL into a failure.
import { spawnSync } from 'node:child_process';
import pg from 'pg';

const pgUrl = process.env.LABWRIGHT_TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
const extra = process.argv.slice(2);

function run(db) {
  console.log(`\n=== Labwright test suite on ${db} ===\n`);
  const r = spawnSync('npx', ['vitest', 'run', ...extra], {
    stdio: 'inherit',
    env: { ...process.env, LABWRIGHT_TEST_DB: db, LABWRIGHT_TEST_POSTGRES_URL: pgUrl },
  });
  return r.status ?? 1;
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    await client.end();
    return true;
  } catch (err) {
    console.log(`PostgreSQL at ${pgUrl} is not reachable: ${err.message}`);
    return false;
  }
}

const only = process.env.LABWRIGHT_TEST_ONLY; // sqlite | postgres
let failed = false;
if (only !== 'postgres') failed = run('sqlite') !== 0 || failed;
if (only !== 'sqlite') {
  if (await postgresReachable()) {
    failed = run('postgres') !== 0 || failed;
  } else if (process.env.LABWRIGHT_REQUIRE_POSTGRES === '1') {
    console.log('FAIL: PostgreSQL is required (LABWRIGHT_REQUIRE_POSTGRES=1) but unreachable.');
    failed = true;
  } else {
    console.log('SKIPPED: the PostgreSQL run (no PostgreSQL reachable). Only SQLite was tested.');
  }
}
process.exit(failed ? 1 : 0);
