// After each merge request creation, 50 simultaneous reads of one 100-item list, in process (as
// bench/inject-create.ts): the cost of making a list again after a write empties the kept
// responses, when many requests want it at once. Not part of `npm run bench`; on a seeded copy
// (bench/seed-only.ts; each run uses up `post-N` branches), with DATABASE_URL for PostgreSQL.
//   node --import tsx bench/herd-probe.ts <dataDir> [rounds]
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { mrCreateBody, ROOT_TOKEN, SECRET } from './load.js';

const [dir, rounds = '40'] = process.argv.slice(2);
const app = await buildApp(loadConfig({ ...process.env, LABWRIGHT_DATA_DIR: dir, LABWRIGHT_SECRET: SECRET, LOG_LEVEL: 'warn' }));
const headers = { 'private-token': ROOT_TOKEN, 'content-type': 'application/json' };
let branch = 1;
let readMs = 0;
const cpu0 = process.cpuUsage();
for (let i = 0; i < Number(rounds); i++) {
  const r = await app.inject({ method: 'POST', url: '/api/v4/projects/2/merge_requests', headers, payload: mrCreateBody(branch++) });
  if (r.statusCode !== 201) throw new Error(r.body);
  const t = performance.now();
  const rs = await Promise.all(Array.from({ length: 50 }, () => app.inject({ method: 'GET', url: '/api/v4/projects/2/merge_requests?per_page=100', headers })));
  readMs += performance.now() - t;
  if (rs.some((x) => x.statusCode !== 200)) throw new Error('read failed');
}
const c = process.cpuUsage(cpu0);
console.log(`reads ${(readMs / Number(rounds)).toFixed(1)} ms per burst of 50, cpu ${((c.user + c.system) / 1000 / Number(rounds)).toFixed(1)} ms per round, ${JSON.stringify(app.lw.responses?.stats())}`);
await app.close();
