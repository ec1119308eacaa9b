// In-process cost of one request, without sockets or a load generator: builds the app on an
// existing data directory (a seeded bench set; `node --import tsx bench/seed-only.ts` prints one) and
// injects the same GET many times, printing wall and CPU microseconds per request. Combine with
// `node --cpu-prof` for a profile with no autocannon or kernel time in it.
//   node --import tsx bench/inject.ts <dataDir> <path> [requests] [token]
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { ROOT_TOKEN, SECRET } from './load.js';

const [dir, path, n = '2000', token = ROOT_TOKEN] = process.argv.slice(2);
if (!dir || !path) {
  console.error('usage: node --import tsx bench/inject.ts <dataDir> <path> [requests] [token]');
  process.exit(2);
}
const app = await buildApp(loadConfig({ ...process.env, LABWRIGHT_DATA_DIR: dir, LABWRIGHT_SECRET: SECRET, LOG_LEVEL: 'warn' }));
const headers = { 'private-token': token };
const first = await app.inject({ method: 'GET', url: path, headers });
console.log(`${first.statusCode}, ${first.body.length} bytes`);
for (let i = 0; i < 300; i++) await app.inject({ method: 'GET', url: path, headers });
const count = Number(n);
for (let round = 0; round < 3; round++) {
  const t = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < count; i++) await app.inject({ method: 'GET', url: path, headers });
  const c = process.cpuUsage(c0);
  console.log(`${path}: ${(((performance.now() - t) / count) * 1000).toFixed(0)} µs/request wall, ${((c.user + c.system) / count).toFixed(0)} µs CPU`);
}
if (process.env.BENCH_PG_PLANS && app.lw.database.dialect === 'postgres') {
  // Which named statements PostgreSQL plans again on every execution (custom plans only).
  const { rows } = await sql<{ name: string; generic_plans: number; custom_plans: number; statement: string }>`select name, generic_plans, custom_plans, statement from pg_prepared_statements order by custom_plans desc`.execute(app.lw.database.db);
  for (const r of rows) console.log(`[plans] generic ${r.generic_plans} custom ${r.custom_plans}  ${r.statement.slice(0, Number(process.env.BENCH_PG_PLANS) > 1 ? 4000 : 160)}`);
}
await app.close();
