// npm run soak: one Labwright process under steady mixed reads and writes from this (separate)
// process at a fixed rate; reports errors, latency and the server's RSS over time, and fails on any
// error or on RSS growth past a bound.
//   SOAK_SECONDS (120)  SOAK_RATE requests/s (20)  SOAK_WINDOW_SECONDS (10)  SOAK_RSS_BOUND_MB (64)
//   LABWRIGHT_TEST_DB=sqlite|postgres (sqlite)
import { readFileSync } from 'node:fs';
import { call, createInstallation, DB_KIND, startProcess, type Reply } from '../test/reliability/processes.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 120);
const RATE = Number(process.env.SOAK_RATE ?? 20);
const WINDOW_S = Number(process.env.SOAK_WINDOW_SECONDS ?? 10);
const RSS_BOUND_MB = Number(process.env.SOAK_RSS_BOUND_MB ?? 64);
const MAX_IN_FLIGHT = 200;

interface Window {
  start: number;
  latencies: number[];
  errors: number;
  rssMb: number;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

function pct(xs: number[], p: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function main(): Promise<void> {
  const inst = await createInstallation(DB_KIND);
  const server = await startProcess(inst);
  const pid = server.child.pid!;
  const c = (method: string, path: string, opts?: Parameters<typeof call>[3]) => call(server.url, method, path, opts);
  let serial = 0;
  const tag = Date.now().toString(36);

  // Fixtures: users with tokens (rotated as the run goes), a project when the module exists.
  const tokens: Array<{ userId: number; token: string; busy: boolean }> = [];
  for (let i = 0; i < 5; i++) {
    const u = await c('POST', '/users', { json: { username: `soak${tag}${i}`, email: `soak${tag}${i}@example.com`, name: 'soak', password: 'password-1234-soak' } });
    const t = await c('POST', `/users/${u.body.id}/personal_access_tokens`, { json: { name: 'soak', scopes: ['api'] } });
    tokens.push({ userId: u.body.id, token: t.body.token, busy: false });
  }
  const project = await c('POST', '/projects', { json: { name: `soak-${tag}`, initialize_with_readme: true } });
  const projectId: number | null = project.status === 201 ? project.body.id : null;

  const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)];
  type Op = { name: string; expect: number[]; run: () => Promise<Reply> };
  const ops: Array<[number, Op]> = [
    [20, { name: 'GET /user', expect: [200], run: () => c('GET', '/user', { token: pick(tokens.filter((t) => !t.busy)).token }) }],
    [15, { name: 'GET /users', expect: [200], run: () => c('GET', '/users?per_page=20') }],
    [10, { name: 'GET /users/:id', expect: [200], run: () => c('GET', `/users/${pick(tokens).userId}`) }],
    [10, { name: 'GET /personal_access_tokens', expect: [200], run: () => c('GET', '/personal_access_tokens?per_page=20') }],
    [10, { name: 'GET /version', expect: [200], run: () => c('GET', '/version') }],
    [5, { name: 'POST /users', expect: [201], run: () => c('POST', '/users', { json: { username: `soakw${tag}${++serial}`, email: `soakw${tag}${serial}@example.com`, name: 'w', password: 'password-1234-soak' } }) }],
    [8, { name: 'POST /users/:id/personal_access_tokens', expect: [201], run: () => c('POST', `/users/${pick(tokens).userId}/personal_access_tokens`, { json: { name: 'w', scopes: ['read_api'] } }) }],
    [7, { name: 'PUT /users/:id', expect: [200], run: () => c('PUT', `/users/${pick(tokens).userId}`, { json: { bio: `bio ${++serial}` } }) }],
    [5, { name: 'POST /personal_access_tokens/self/rotate', expect: [200], run: () => rotate() }],
  ];
  if (projectId !== null) {
    ops.push([7, { name: 'GET /projects/:id', expect: [200], run: () => c('GET', `/projects/${projectId}`) }]);
    ops.push([3, { name: 'GET /projects/:id/repository/tree', expect: [200], run: () => c('GET', `/projects/${projectId}/repository/tree`) }]);
  }

  async function rotate(): Promise<Reply> {
    const free = tokens.filter((t) => !t.busy);
    const t = pick(free);
    t.busy = true;
    const r = await c('POST', '/personal_access_tokens/self/rotate', { token: t.token });
    if (r.status === 200) t.token = r.body.token;
    t.busy = false;
    return r;
  }

  const total = ops.reduce((n, [w]) => n + w, 0);
  function chooseOp(): Op {
    let x = Math.random() * total;
    for (const [w, op] of ops) if ((x -= w) < 0) return op;
    return ops[0][1];
  }

  const windows: Window[] = [];
  const errors: string[] = [];
  let inFlight = 0;
  const started = Date.now();
  let current: Window = { start: started, latencies: [], errors: 0, rssMb: rssMb(pid) };
  console.log(`soak: ${SECONDS} s at ${RATE} req/s on ${DB_KIND}, server pid ${pid}, windows of ${WINDOW_S} s`);
  console.log('window  requests  errors  p50ms  p95ms  p99ms  rssMB');

  function closeWindow() {
    current.rssMb = rssMb(pid);
    windows.push(current);
    const w = current;
    console.log(`${String(windows.length).padStart(6)}  ${String(w.latencies.length).padStart(8)}  ${String(w.errors).padStart(6)}  ${pct(w.latencies, 50).toFixed(0).padStart(5)}  ${pct(w.latencies, 95).toFixed(0).padStart(5)}  ${pct(w.latencies, 99).toFixed(0).padStart(5)}  ${w.rssMb.toFixed(1).padStart(5)}`);
    current = { start: Date.now(), latencies: [], errors: 0, rssMb: 0 };
  }

  // Open loop: one request every 1/RATE s whatever the latency, so a slow server shows as latency.
  const interval = 1000 / RATE;
  let sent = 0;
  const pending = new Set<Promise<void>>();
  while (Date.now() - started < SECONDS * 1000) {
    const due = started + sent * interval;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (Date.now() - current.start >= WINDOW_S * 1000) closeWindow();
    sent++;
    if (inFlight >= MAX_IN_FLIGHT) {
      current.errors++;
      errors.push('more than 200 requests in flight: the server is not keeping up');
      continue;
    }
    const op = chooseOp();
    const w = current;
    inFlight++;
    const t0 = performance.now();
    const p = op
      .run()
      .then((r) => {
        w.latencies.push(performance.now() - t0);
        if (!op.expect.includes(r.status)) {
          w.errors++;
          if (errors.length < 50) errors.push(`${op.name} -> ${r.status} ${r.text.slice(0, 200)}`);
        }
      })
      .finally(() => {
        inFlight--;
        pending.delete(p);
      });
    pending.add(p);
  }
  await Promise.all(pending);
  closeWindow();
  await server.kill('SIGTERM');
  await inst.destroy();

  const all = windows.flatMap((w) => w.latencies);
  const errorCount = windows.reduce((n, w) => n + w.errors, 0);
  // RSS growth: the last quarter of the windows against the second window (the first warms up).
  const base = windows[Math.min(1, windows.length - 1)].rssMb;
  const tail = windows.slice(-Math.max(1, Math.floor(windows.length / 4))).map((w) => w.rssMb);
  const growth = pct(tail, 50) - base;
  console.log(`soak summary ${JSON.stringify({ db: DB_KIND, seconds: SECONDS, requests: all.length, errors: errorCount, p50: pct(all, 50), p99: pct(all, 99), rssBaseMb: base, rssGrowthMb: growth })}`);
  for (const e of errors) console.log(`soak error: ${e}`);
  let failed = false;
  if (errorCount > 0) {
    console.log(`FAIL: ${errorCount} errors`);
    failed = true;
  }
  if (growth > RSS_BOUND_MB) {
    console.log(`FAIL: server RSS grew ${growth.toFixed(1)} MB (bound ${RSS_BOUND_MB} MB)`);
    failed = true;
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
