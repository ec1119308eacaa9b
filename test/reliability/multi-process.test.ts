// Two real Labwright processes on one database (SQLite file or PostgreSQL, per LABWRIGHT_TEST_DB),
// sharing rate-limit counters through Redis, behind a round-robin in the test.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInstallation, DB_KIND, pool, roundRobin, startProcess, type Installation, type ServerProcess } from './processes.js';
import { createTokenOp, createUserOp, type Call, iidProblems, newLedger, rotateOp, setUpProject, verifyLedger } from './workload.js';

const REDIS_BASE = process.env.LABWRIGHT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// An odd period keeps this file's window keys apart from other tests using the same Redis.
const PERIOD = 3593;
const ANON_LIMIT = 12;

let inst: Installation;
let servers: ServerProcess[] = [];
let redisUp = false;
let rr: Call;
let clientSerial = 0;

async function redisReachable(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

beforeAll(async () => {
  redisUp = await redisReachable(REDIS_BASE);
  // A Redis database of its own (1–15) so other test files' counters never mix with these.
  const redisUrl = `${REDIS_BASE.replace(/\/\d*$/, '')}/${1 + Math.floor(Math.random() * 15)}`;
  const env: Record<string, string> = { LABWRIGHT_TRUST_PROXY: 'true', LABWRIGHT_RATE_LIMIT_UNAUTHENTICATED: String(ANON_LIMIT), LABWRIGHT_RATE_LIMIT_PERIOD: String(PERIOD) };
  if (redisUp) env.REDIS_URL = redisUrl;
  else console.log(`Redis at ${REDIS_BASE} is not reachable: the shared rate-limit test is skipped`);
  inst = await createInstallation(DB_KIND, env);
  if (DB_KIND === 'postgres') {
    // Both start at once on an empty database: migrations (advisory lock) and the root bootstrap race on purpose.
    servers = await Promise.all([startProcess(inst), startProcess(inst)]);
  } else {
    // KNOWN FAILURE (reported, not ours to fix): on an empty SQLite file two processes starting at once
    // run the migrations side by side ("table merge_requests already exists"), because Kysely takes no
    // migration lock on SQLite and runs no transaction around DDL there. Start one, then the other.
    servers = [await startProcess(inst)];
    servers.push(await startProcess(inst));
  }
  const balance = roundRobin(servers.map((s) => s.url));
  // Like a load balancer in front of many clients: each request comes from its own address, so the
  // per-IP limit (which refused tokens count against) only bites in the test that means it to.
  rr = (method, path, opts = {}) => balance(method, path, { ...opts, headers: { 'X-Forwarded-For': `10.1.${(clientSerial >> 8) & 255}.${clientSerial++ & 255}`, ...opts.headers } });
}, 180_000);

afterAll(async () => {
  for (const s of servers) await s.kill('SIGTERM');
  await inst?.destroy();
});

function outputs(): string {
  return servers.map((s, i) => `--- process ${i} ---\n${s.output().slice(-3000)}`).join('\n');
}

describe(`two processes on one ${DB_KIND} database`, () => {
  it('concurrent user and token writes through both: no 5xx, every 2xx is a row, nothing else is', async () => {
    const l = newLedger();
    await pool(40, 8, () => createUserOp(rr, l, 'mp'));
    await pool(60, 8, () => createTokenOp(rr, l));
    // Two rotations of one token at once, through different processes: one wins.
    await pool(10, 4, () => rotateOp(rr, l, true));
    expect(l.errors, outputs()).toEqual([]);
    expect(l.statuses['no answer'] ?? 0).toBe(0);
    expect(l.users.size).toBe(40);
    expect(await verifyLedger(rr, l)).toEqual([]);
    // Rows equal acknowledgements: the users that carry this run's prefix are exactly the 201s.
    const listed = await rr('GET', `/users?search=mp&per_page=100`);
    const ours = (listed.body as Array<{ id: number; username: string }>).filter((u) => /^mp[a-z0-9]+\d+$/.test(u.username));
    expect(ours.map((u) => u.id).sort((a, b) => a - b)).toEqual([...l.users.keys()].sort((a, b) => a - b));
    for (const userId of l.users.keys()) {
      const tokens = await rr('GET', `/personal_access_tokens?user_id=${userId}&per_page=100`);
      const acknowledged = l.tokens.filter((t) => t.userId === userId).map((t) => t.id).sort((a, b) => a - b);
      expect((tokens.body as Array<{ id: number }>).map((t) => t.id).sort((a, b) => a - b)).toEqual(acknowledged);
    }
  }, 180_000);

  it('merge requests created through both processes get unique, gap-free iids', async () => {
    const projectId = await setUpProject(rr, `mp-${Date.now()}`);
    if (projectId === null) return console.log('no project could be created: merge request part skipped');
    // Branches first (git work), then the merge requests all at once so their iid allocations race.
    const branches = await pool(12, 4, async (i) => {
      const b = await rr('POST', `/projects/${projectId}/repository/branches`, { json: { branch: `mp-${i}`, ref: 'main' } });
      return b.status;
    });
    expect(branches.every((s) => s === 201)).toBe(true);
    const created = await pool(12, 12, (i) => rr('POST', `/projects/${projectId}/merge_requests`, { json: { source_branch: `mp-${i}`, target_branch: 'main', title: `mp ${i}` } }));
    const failed = created.filter((r) => r.status >= 500 || r.status === 0).map((r) => `${r.status} ${r.text.slice(0, 200)}`);
    expect(failed, outputs()).toEqual([]);
    const ok = created.filter((r) => r.status === 201);
    expect(ok.length).toBe(12);
    expect(new Set(ok.map((r) => r.body.iid)).size).toBe(12);
    expect(await iidProblems(rr, projectId)).toEqual([]);
  }, 180_000);

  it('notes written through both processes at once: every 201 is a note, and the merge request counts them all (security case 40)', async () => {
    const projectId = await setUpProject(rr, `mpn-${Date.now()}`);
    if (projectId === null) return console.log('no project could be created: notes part skipped');
    expect((await rr('POST', `/projects/${projectId}/repository/branches`, { json: { branch: 'mpn', ref: 'main' } })).status).toBe(201);
    const mr = await rr('POST', `/projects/${projectId}/merge_requests`, { json: { source_branch: 'mpn', target_branch: 'main', title: 'notes' } });
    expect(mr.status).toBe(201);
    const base = `/projects/${projectId}/merge_requests/${mr.body.iid}`;
    // Comments and threads at once, then replies and resolutions racing each other.
    const made = await pool(40, 12, (i) => rr('POST', `${base}/${i % 4 === 0 ? 'discussions' : 'notes'}`, { json: { body: `note ${i}` } }));
    const threads = made.filter((r) => r.status === 201 && r.body.individual_note === false).map((r) => r.body.id as string);
    const more = await pool(threads.length * 3, 12, (i) => {
      const t = threads[i % threads.length];
      if (i < threads.length) return rr('PUT', `${base}/discussions/${t}`, { json: { resolved: true } });
      return rr('POST', `${base}/discussions/${t}/notes`, { json: { body: `reply ${i}` } });
    });
    const all = [...made, ...more];
    const failed = all.filter((r) => r.status >= 500 || r.status === 0).map((r) => `${r.status} ${r.text.slice(0, 200)}`);
    expect(failed, outputs()).toEqual([]);
    expect(all.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    const created = all.filter((r) => r.status === 201).length;
    const listed = await rr('GET', `${base}/notes?per_page=100`);
    expect(listed.body.length).toBe(created);
    const unresolved = (listed.body as Array<{ resolvable: boolean; resolved?: boolean }>).filter((n) => n.resolvable && !n.resolved).length;
    const got = await rr('GET', base);
    expect(got.body.user_notes_count).toBe(created);
    // The counter behind the discussions merge check agrees with the notes themselves.
    const threadsNow = await rr('GET', `${base}/discussions?per_page=100`);
    expect(threadsNow.body.length).toBe(40);
    const fromThreads = (threadsNow.body as Array<{ notes: Array<{ resolvable: boolean; resolved?: boolean }> }>).flatMap((d) => d.notes).filter((n) => n.resolvable && !n.resolved).length;
    expect(fromThreads).toBe(unresolved);
    const row = await rr('PUT', `/projects/${projectId}`, { json: { only_allow_merge_if_all_discussions_are_resolved: true } });
    expect(row.status).toBe(200);
    expect((await rr('GET', base)).body.blocking_discussions_resolved).toBe(unresolved === 0);

    // A merge request deleted while notes are written to it, through both processes: no 5xx, no
    // deadlock, and no note left behind.
    expect((await rr('POST', `/projects/${projectId}/repository/branches`, { json: { branch: 'mpn2', ref: 'main' } })).status).toBe(201);
    const doomed = await rr('POST', `/projects/${projectId}/merge_requests`, { json: { source_branch: 'mpn2', target_branch: 'main', title: 'doomed' } });
    const dbase = `/projects/${projectId}/merge_requests/${doomed.body.iid}`;
    const seed = await rr('POST', `${dbase}/discussions`, { json: { body: 'first' } });
    const race = await pool(30, 12, (i) => {
      if (i === 12) return rr('DELETE', dbase);
      if (i % 3 === 0) return rr('PUT', `${dbase}/discussions/${seed.body.id}`, { json: { resolved: i % 2 === 0 } });
      return rr('POST', `${dbase}/${i % 2 ? 'notes' : `discussions/${seed.body.id}/notes`}`, { json: { body: `racing ${i}` } });
    });
    const bad = race.filter((r) => r.status >= 500 || r.status === 0 || ![200, 201, 204, 404].includes(r.status)).map((r) => `${r.status} ${r.text.slice(0, 200)}`);
    expect(bad, outputs()).toEqual([]);
    expect(race[12]!.status).toBe(204);
    const { queryOutside } = await import('../helpers/outside.js');
    const left = await queryOutside(inst, 'select count(*) as n from notes where noteable_id = ?', [doomed.body.id]);
    expect(Number(left[0]!.n)).toBe(0);
  }, 180_000);

  it('a protected branch rule made through one process binds the other (its rule cache lives a second at most)', async () => {
    const projectId = await setUpProject(rr, `mp-rules-${Date.now()}`);
    if (projectId === null) return console.log('no project could be created: rule part skipped');
    const [viaA, viaB] = servers.map((s) => roundRobin([s.url]));
    const u = await viaA('POST', '/users', { json: { username: `mpdev${Date.now()}`, email: `mpdev${Date.now()}@example.com`, name: 'mp dev', password: 'password-1234' } });
    const t = await viaA('POST', `/users/${u.body.id}/personal_access_tokens`, { json: { name: 't', scopes: ['api'] } });
    expect((await viaA('POST', `/projects/${projectId}/members`, { json: { user_id: u.body.id, access_level: 30 } })).status).toBe(201);
    let n = 0;
    const devCommit = (via: typeof viaA) =>
      via('POST', `/projects/${projectId}/repository/commits`, { token: t.body.token, json: { branch: 'main', commit_message: `c${n}`, actions: [{ action: 'create', file_path: `f${n++}.txt`, content: 'x' }] } });
    /** Polls for up to 5 s: another process may answer from a rule cache a second old. */
    async function eventually(via: typeof viaA, status: number): Promise<number> {
      let last = 0;
      for (let i = 0; i < 25; i++) {
        last = (await devCommit(via)).status;
        if (last === status) return last;
        await new Promise((r) => setTimeout(r, 200));
      }
      return last;
    }
    // main is protected from the start (Maintainers push): the Developer is refused through both.
    expect((await devCommit(viaA)).status).toBe(403);
    expect((await devCommit(viaB)).status).toBe(403);
    // Unprotected through A: A takes the Developer's commit at once, B within its cache's second.
    expect((await viaA('DELETE', `/projects/${projectId}/protected_branches/main`)).status).toBe(204);
    expect((await devCommit(viaA)).status).toBe(201);
    expect(await eventually(viaB, 201)).toBe(201);
    // Protected again through B: A refuses within a second.
    expect((await viaB('POST', `/projects/${projectId}/protected_branches`, { json: { name: 'main' } })).status).toBe(201);
    expect((await devCommit(viaB)).status).toBe(403);
    expect(await eventually(viaA, 403)).toBe(403);
  }, 180_000);

  it('the anonymous rate limit is one budget across both processes', async () => {
    // Redis runs on every Labwright machine (CI included); without it this test cannot say anything.
    expect(redisUp, 'Redis at 127.0.0.1:6379 is needed for the shared rate limit').toBe(true);
    // Stay clear of a window boundary so one burst is counted in one window.
    const periodMs = PERIOD * 1000;
    if (periodMs - (Date.now() % periodMs) < 10_000) await new Promise((r) => setTimeout(r, periodMs - (Date.now() % periodMs) + 100));
    const replies = [];
    const client = { 'X-Forwarded-For': `10.200.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` };
    for (let i = 0; i < ANON_LIMIT + 8; i++) replies.push(await rr('GET', '/version', { token: null, headers: client }));
    const ok = replies.filter((r) => r.status !== 429).length;
    const limited = replies.filter((r) => r.status === 429);
    // Each process alone would have let all of them through (half the burst each, under the limit).
    expect(ok).toBe(ANON_LIMIT);
    expect(limited.length).toBe(8);
    expect(limited[0].headers.get('ratelimit-name')).toBe('throttle_unauthenticated_api');
  }, 60_000);
});
