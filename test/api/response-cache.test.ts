// Kept responses (src/http/response-cache.ts): a repeated read answers with the same bytes and
// headers, and never with a response that something since has made wrong: a write through the
// API, another process's write, a branch that moved, a lock that ran out, a new day, another
// caller. Each test first makes sure the response it then invalidates was kept.
import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runOutside, until } from '../helpers/outside.js';
import { startServer, TEST_DB, type TestResponse, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let dev: { id: number; username: string; token: string };
let pid: number;

const hits = () => s.app.lw.responses!.stats().hits;
const outside = (statement: string, params: unknown[]) => runOutside({ dataDir: s.dataDir, databaseUrl: s.app.lw.config.databaseUrl }, statement, params);

/** Headers a client compares, without those that differ on every response. */
function stableHeaders(r: TestResponse): Record<string, string> {
  const out: Record<string, string> = {};
  r.headers.forEach((value, name) => {
    if (!['date', 'x-request-id', 'keep-alive', 'connection'].includes(name)) out[name] = value;
  });
  return out;
}

/**
 * GETs `path` until an answer comes from the store (a token's first use writes its last-used time,
 * which the next read may see as a change), and checks it matches the one made before it.
 */
async function keptTwice(path: string, token?: string): Promise<TestResponse> {
  let made = await s.request('GET', path, { token });
  expect(made.status).toBe(200);
  for (let i = 0; i < 3; i++) {
    const before = hits();
    const again = await s.request('GET', path, { token });
    if (hits() === before + 1) {
      expect(again.text).toBe(made.text);
      expect(stableHeaders(again)).toEqual(stableHeaders(made));
      return again;
    }
    made = again;
  }
  throw new Error(`${path} was never answered from the store`);
}

// Every case twice: with the store emptied by each write of this process, and with refresh rounds
// (the refresher started at once), which make the responses read lately again before the write is
// answered (http/response-cache.ts).
describe.each(['false', 'eager'])('response cache (LABWRIGHT_RESPONSE_REFRESH=%s)', (refresh) => {
  beforeAll(async () => {
    s = await startServer({ LABWRIGHT_RESPONSE_REFRESH: refresh });
    if (refresh === 'eager') expect(await s.app.lw.refresher!.whenReady()).toBe(true);
    dev = await s.createUser('cache-dev');
    pid = (await createProject(s, 'cached')).id;
    await addMember(s, pid, dev.id, 30);
  });
  afterAll(async () => {
    await closeServer(s);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers a repeated list with the same bytes and pagination headers', async () => {
    await commit(s, pid, 'list-a', { 'a.txt': 'a\n' }, { from: 'main' });
    await commit(s, pid, 'list-b', { 'b.txt': 'b\n' }, { from: 'main' });
    await openMr(s, pid, 'list-a');
    await openMr(s, pid, 'list-b');
    const r = await keptTwice(`/projects/${pid}/merge_requests?per_page=1`);
    expect(r.headers.get('x-total')).toBe('2');
    expect(r.headers.get('x-next-page')).toBe('2');
    expect(r.headers.get('link')).toContain('rel="next"');
    expect(r.headers.get('content-type')).toBe('application/json');
  });

  it('HEAD is answered without a body, before and after a GET of the same URL is kept', async () => {
    for (let i = 0; i < 2; i++) {
      const head = await s.request('HEAD', `/projects/${pid}`);
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
    }
    const get = await keptTwice(`/projects/${pid}`);
    expect(get.body.id).toBe(pid);
    const head = await s.request('HEAD', `/projects/${pid}`);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe('application/json');
  });

  it('a write through the API is seen by the next read', async () => {
    const before = await keptTwice(`/projects/${pid}`);
    expect(before.body.description).not.toBe('changed');
    const put = await s.request('PUT', `/projects/${pid}`, { json: { description: 'changed' } });
    expect(put.status).toBe(200);
    expect((await s.request('GET', `/projects/${pid}`)).body.description).toBe('changed');
  });

  it('many callers at once right after a write: each gets its own, current answer', async () => {
    // A private project of root's with an open merge request: in root's list of all, not in dev's.
    const hidden = (await createProject(s, 'cache-hidden', { visibility: 'private' })).id;
    await commit(s, hidden, 'hidden', { 'h.txt': 'h\n' }, { from: 'main' });
    const secret = await openMr(s, hidden, 'hidden');
    await keptTwice('/merge_requests?scope=all');
    await commit(s, pid, 'shared-flight', { 'f.txt': 'f\n' }, { from: 'main' });
    const mr = await openMr(s, pid, 'shared-flight');
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        i % 3 === 2 ? s.request('GET', '/user', { token: i % 2 ? dev.token : undefined }) : s.request('GET', '/merge_requests?scope=all', { token: i % 2 ? dev.token : undefined }),
      ),
    );
    const byCaller = new Map<string, string>();
    answers.forEach((a, i) => {
      expect(a.status).toBe(200);
      const caller = i % 2 ? 'cache-dev' : 'root';
      if (i % 3 === 2) {
        expect(a.body.username).toBe(caller);
        return;
      }
      const ids = a.body.map((m: any) => m.id);
      expect(ids).toContain(mr.id);
      expect(ids.includes(secret.id)).toBe(caller === 'root');
      // The same bytes for every request of one caller.
      expect(a.text).toBe(byCaller.get(caller) ?? a.text);
      byCaller.set(caller, a.text);
    });
    expect(byCaller.get('root')).not.toBe(byCaller.get('cache-dev'));
  });

  it('a read begun after a write does not share a response begun before it', async () => {
    const list = `/projects/${pid}/merge_requests?per_page=100`;
    const rc = s.app.lw.responses!;
    const takeOff = rc.takeOff.bind(rc);
    // Flights stay in the air (their waiters are not answered) until the gate opens.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const spy = vi.spyOn(rc, 'takeOff').mockImplementation((key, era) => {
      const land = takeOff(key, era);
      return (made) => void gate.then(() => land(made));
    });
    try {
      await commit(s, pid, 'overlap', { 'o.txt': 'o\n' }, { from: 'main' });
      // Made before the creation: its flight is still registered when the creation is answered.
      expect((await s.request('GET', list)).status).toBe(200);
      const created = await s.request('POST', `/projects/${pid}/merge_requests`, { json: { source_branch: 'overlap', target_branch: 'main', title: 'overlap' } });
      expect(created.status).toBe(201);
      // Were it to join that flight, it would wait for the gate, then get the list without the new one.
      setTimeout(open, 300);
      const after = await s.request('GET', list);
      expect(after.body.map((m: any) => m.id)).toContain(created.body.id);
    } finally {
      open();
      spy.mockRestore();
    }
  });

  it("another process's write is seen (SQLite: at once; PostgreSQL: once its notice comes)", async () => {
    await keptTwice(`/projects/${pid}`);
    await outside('update projects set description = ? where id = ?', ['from elsewhere', pid]);
    const description = async () => (await s.request('GET', `/projects/${pid}`)).body.description;
    if (TEST_DB === 'sqlite') expect(await description()).toBe('from elsewhere');
    else expect(await until(async () => (await description()) === 'from elsewhere')).toBe(true);
  });

  it('each caller has its own responses: users, sudo, anonymous', async () => {
    const mine = await keptTwice('/user', dev.token);
    expect(mine.body.username).toBe('cache-dev');
    const root = await keptTwice('/user');
    expect(root.body.username).toBe('root');
    const sudo = await s.request('GET', '/user', { headers: { Sudo: 'cache-dev' } });
    expect(sudo.text).toBe(mine.text);
    expect((await s.request('GET', '/user')).body.username).toBe('root');
    expect((await s.request('GET', `/projects/${pid}`, { token: null })).status).toBe(404);
    expect((await s.request('GET', `/projects/${pid}`, { token: 'glpat-not-a-token' })).status).toBe(401);
  });

  it('a Host header holding a path cannot make one request answer for another', async () => {
    const u = new URL(s.url);
    const viaHost = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: '/api/v4/users/1', headers: { Host: `${u.host}/api/v4/groups?x=` } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(viaHost.status).toBe(200);
    expect(JSON.parse(viaHost.body).username).toBe('root');
    for (let i = 0; i < 2; i++) {
      const groups = await s.request('GET', '/api/v4/groups?x=/api/v4/users/1', { token: null });
      expect(Array.isArray(groups.body)).toBe(true);
    }
  });

  it('a revoked token is refused although its response was kept', async () => {
    const t = await s.request('POST', `/users/${dev.id}/personal_access_tokens`, { json: { name: 'short', scopes: ['read_api'] } });
    await keptTwice(`/projects/${pid}`, t.body.token);
    expect((await s.request('DELETE', `/personal_access_tokens/${t.body.id}`)).status).toBe(204);
    expect((await s.request('GET', `/projects/${pid}`, { token: t.body.token })).status).toBe(401);
  });

  it('a token on the query string is never part of a kept key', async () => {
    const before = hits();
    for (const name of ['private_token', 'private%5Ftoken', 'private_token']) {
      const r = await s.request('GET', `/user?${name}=${dev.token}`, { token: null });
      expect(r.body.username).toBe('cache-dev');
    }
    expect(hits()).toBe(before);
    for (const key of (s.app.lw.responses as unknown as { entries: Map<string, unknown> }).entries.keys()) expect(key).not.toContain(dev.token);
  });

  it('a merge request read follows its branches, which the database does not hold', async () => {
    await commit(s, pid, 'moving', { 'm.txt': 'one\n' }, { from: 'main' });
    const mr = await openMr(s, pid, 'moving');
    const first = await keptTwice(`/projects/${pid}/merge_requests/${mr.iid}`);
    const sha = await commit(s, pid, 'moving', { 'm.txt': 'two\n' });
    expect(first.body.sha).not.toBe(sha);
    const after = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`);
    expect(after.body.sha).toBe(sha);
    expect(after.body.diff_refs.head_sha).toBe(sha);
  });

  it('a user shown as locked is shown unlocked once the lock has run out', async () => {
    const until = new Date(Date.now() + 1500).toISOString();
    await s.app.lw.db.updateTable('users').set({ locked_until: until }).where('id', '=', dev.id).execute();
    await s.settle();
    const locked = await keptTwice(`/users/${dev.id}`);
    expect(locked.body.locked).toBe(true);
    await new Promise((r) => setTimeout(r, Date.parse(until) - Date.now() + 50));
    expect((await s.request('GET', `/users/${dev.id}`)).body.locked).toBe(false);
  });

  it('a membership that expires ends with the day, without any write', async () => {
    const guest = await s.createUser('cache-guest');
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const add = await s.request('POST', `/projects/${pid}/members`, { json: { user_id: guest.id, access_level: 10, expires_at: tomorrow } });
    expect(add.status, add.text).toBe(201);
    // Five minutes before midnight, then just after: the token's last-used time is written at the
    // first, and not again within ten minutes, so nothing but the date changes in between.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse(`${tomorrow}T00:00:00Z`) - 5 * 60_000);
    await keptTwice(`/projects/${pid}`, guest.token);
    const epoch = s.app.lw.database.writeEpoch();
    vi.setSystemTime(Date.parse(`${tomorrow}T00:00:01Z`));
    expect((await s.request('GET', `/projects/${pid}`, { token: guest.token })).status).toBe(404);
    expect(s.app.lw.database.writeEpoch()).toBe(epoch);
  });

  it('searches are not kept: each counts against the search limit', async () => {
    const before = hits();
    for (let i = 0; i < 3; i++) expect((await s.request('GET', `/projects/${pid}/merge_requests?search=list`)).status).toBe(200);
    expect(hits()).toBe(before);
  });
});

