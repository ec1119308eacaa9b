#!/usr/bin/env node
// npm test: the whole suite on SQLite, then again on PostgreSQL when one is reachable.
// LABWRIGHT_REQUIRE_POSTGRES=1 (set by .ci/run) turns an unreachable PostgreSQL into a failure.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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

// The browser tests drive Debian's Chromium and one client test runs Debian's python3-gitlab.
// On a fresh machine (root with apt, as CI and developers have) install them once.
function ensureSystemPackages() {
  const missing = [];
  if (!existsSync(process.env.LABWRIGHT_CHROMIUM ?? '/usr/bin/chromium')) missing.push('chromium');
  if (spawnSync('/usr/bin/python3', ['-c', 'import gitlab']).status !== 0) missing.push('python3-gitlab');
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0 || spawnSync('which', ['apt-get']).status !== 0) {
    console.log(`Missing system packages for some tests: ${missing.join(', ')} (apt-get install ${missing.join(' ')}).`);
    return;
  }
  console.log(`Installing ${missing.join(', ')} with apt-get for the browser and python-gitlab tests…`);
  spawnSync('apt-get', ['update'], { stdio: 'inherit' });
  spawnSync('apt-get', ['install', '-y', ...missing], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

ensureSystemPackages();
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
