// In-process cost of merge request creation, as bench/inject.ts is for reads: builds the app on a
// seeded bench data directory (bench/seed-only.ts; use a fresh copy, each run uses up branches)
// and creates merge requests from the seeded `post-N` branches, 10 at a time like the bench's 10
// connections. Under `node --cpu-prof`, a profile of creation alone.
//   node --import tsx bench/inject-create.ts <dataDir> [count]
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { mrCreateBody, ROOT_TOKEN, SECRET } from './load.js';

const [dir, n = '400', projectId = '2'] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node --import tsx bench/inject-create.ts <dataDir> [count] [projectId]');
  process.exit(2);
}
const app = await buildApp(loadConfig({ ...process.env, LABWRIGHT_DATA_DIR: dir, LABWRIGHT_SECRET: SECRET, LOG_LEVEL: 'warn' }));
const headers = { 'private-token': ROOT_TOKEN, 'content-type': 'application/json' };
let branch = 1;
async function one(): Promise<void> {
  const k = branch++;
  const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${projectId}/merge_requests`, headers, payload: mrCreateBody(k) });
  if (r.statusCode !== 201) throw new Error(`${r.statusCode} ${r.body}`);
}
for (let i = 0; i < 50; i++) await one();
const count = Number(n);
const t = performance.now();
const c0 = process.cpuUsage();
for (let i = 0; i < count; i += 10) await Promise.all(Array.from({ length: 10 }, one));
const c = process.cpuUsage(c0);
console.log(`${(count / ((performance.now() - t) / 1000)).toFixed(0)} created/s, ${((c.user + c.system) / count).toFixed(0)} µs CPU each`);
await app.close();
