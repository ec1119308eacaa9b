// Refresh rounds (http/response-cache.ts, http/refresher.ts): after a write of this process, the
// responses read lately are made again by the refresher thread from one snapshot and replace the
// store before the write is answered. What a client must be able to rely on: once a write is
// answered, every read shows it (from the store too); a read answered before never shows a write
// that was not answered yet... unless it was made from the newer data, and then it waits; a view
// made again for a caller who has since lost access is not kept; without the refresher, nothing
// waits and nothing is stale.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let dev: { id: number; username: string; token: string };
let pid: number;

const stats = () => s.app.lw.responses!.stats();
/** Rounds given up so far (one not done in 500 ms: on a loaded machine the store is emptied instead). */
const givenUp = () => stats().restarts['round too slow'] ?? 0;

/** GETs `path` until it is answered from the store (twice at most after the first). */
async function kept(path: string, token?: string) {
  for (let i = 0; i < 4; i++) {
    const before = stats().hits;
    const r = await s.request('GET', path, { token });
    expect(r.status).toBe(200);
    if (stats().hits === before + 1) return r;
  }
  throw new Error(`${path} was never answered from the store`);
}

beforeAll(async () => {
  s = await startServer({ LABWRIGHT_RESPONSE_REFRESH: 'eager' });
  expect(await s.app.lw.refresher!.whenReady()).toBe(true);
  dev = await s.createUser('refresh-dev');
  pid = (await createProject(s, 'refreshed')).id;
  await addMember(s, pid, dev.id, 30);
});
afterAll(async () => {
  await closeServer(s);
});

describe('refresh rounds', () => {
  it('a write is answered once the kept responses show it, which are then still answered from the store', async () => {
    await commit(s, pid, 'r-1', { 'a.txt': 'a\n' }, { from: 'main' });
    await openMr(s, pid, 'r-1');
    const list = `/projects/${pid}/merge_requests`;
    const before = await kept(list);
    const rounds = stats().rounds;
    await commit(s, pid, 'r-2', { 'b.txt': 'b\n' }, { from: 'main' });
    const slow = givenUp();
    const created = await openMr(s, pid, 'r-2');
    expect(stats().rounds).toBeGreaterThan(rounds);
    const hits = stats().hits;
    const after = await s.request('GET', list);
    // From the store, made again by the round (unless it was given up): the new request is in it.
    if (givenUp() === slow) expect(stats().hits).toBe(hits + 1);
    expect(after.body.map((m: { id: number }) => m.id)).toContain(created.id);
    expect(after.body.length).toBe(before.body.length + 1);
    expect(after.headers.get('x-total')).toBe(String(before.body.length + 1));
  });

  it('reads racing writes never go back: a read begun after a write was answered shows it', async () => {
    const list = `/projects/${pid}/issues?per_page=100`;
    await kept(list);
    const answered: Array<{ name: string; at: number }> = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 15; i++) {
        const name = `race-${i}`;
        const r = await s.request('POST', `/projects/${pid}/issues`, { json: { title: name } });
        expect(r.status).toBe(201);
        answered.push({ name, at: performance.now() });
      }
      writing = false;
    })();
    const readers = Array.from({ length: 3 }, async () => {
      let seen = 0;
      while (writing) {
        const start = performance.now();
        const r = await s.request('GET', list);
        expect(r.status).toBe(200);
        const names = new Set(r.body.map((l: { title: string }) => l.title));
        // Every label whose creation was answered before this read began is in it.
        for (const a of answered) if (a.at < start) expect(names.has(a.name)).toBe(true);
        // And a reader never sees fewer than it saw before.
        const count = [...names].filter((n) => String(n).startsWith('race-')).length;
        expect(count).toBeGreaterThanOrEqual(seen);
        seen = count;
      }
    });
    await Promise.all([writer, ...readers]);
    expect(stats().refreshed + givenUp()).toBeGreaterThan(0);
  });

  it('a view made again for a caller who lost access is not kept: they are refused', async () => {
    const secret = (await createProject(s, 'refresh-private')).id;
    await addMember(s, secret, dev.id, 30);
    const path = `/projects/${secret}`;
    await kept(path, dev.token);
    await kept(path, dev.token);
    const member = await s.request('DELETE', `/projects/${secret}/members/${dev.id}`);
    expect(member.status).toBe(204);
    expect((await s.request('GET', path, { token: dev.token })).status).toBe(404);
  });

  it('a revoked token: its view is not made again, and the token is refused', async () => {
    const t = await s.request('POST', `/users/${dev.id}/personal_access_tokens`, { json: { name: 'refresh', scopes: ['read_api'] } });
    await kept(`/projects/${pid}`, t.body.token);
    const unmade = stats().unmade;
    const slow = givenUp();
    expect((await s.request('DELETE', `/personal_access_tokens/${t.body.id}`)).status).toBe(204);
    if (givenUp() === slow) expect(stats().unmade).toBeGreaterThan(unmade);
    expect((await s.request('GET', `/projects/${pid}`, { token: t.body.token })).status).toBe(401);
  });

  it('a merge request read made again still follows its branches', async () => {
    await commit(s, pid, 'r-moving', { 'm.txt': 'one\n' }, { from: 'main' });
    const mr = await openMr(s, pid, 'r-moving');
    const path = `/projects/${pid}/merge_requests/${mr.iid}`;
    await kept(path);
    // A write elsewhere: the round makes the read again (with its branch check).
    expect((await s.request('PUT', `/projects/${pid}`, { json: { description: 'refresh' } })).status).toBe(200);
    const again = await kept(path);
    const sha = await commit(s, pid, 'r-moving', { 'm.txt': 'two\n' });
    expect(again.body.sha).not.toBe(sha);
    const moved = await s.request('GET', path);
    expect(moved.body.sha).toBe(sha);
  });

  it('sudo and each caller keep their own view through a round', async () => {
    const mine = await kept('/user', dev.token);
    const viaSudo = await kept('/user', undefined);
    expect((await s.request('PUT', `/users/${dev.id}`, { json: { bio: 'refreshed bio' } })).status).toBe(200);
    const after = await s.request('GET', '/user', { token: dev.token });
    expect(after.body.username).toBe('refresh-dev');
    expect(after.body.bio).toBe('refreshed bio');
    expect(after.text).not.toBe(mine.text);
    const sudo = await s.request('GET', '/user', { headers: { Sudo: dev.username } });
    expect(sudo.text).toBe(after.text);
    expect((await s.request('GET', '/user')).text).toBe(viaSudo.text);
  });

  it('a read that would write when made again (its branch moved) is dropped, and the rest of the round stands', async () => {
    await commit(s, pid, 'r-writes', { 'w.txt': 'one\n' }, { from: 'main' });
    const mr = await openMr(s, pid, 'r-writes');
    const path = `/projects/${pid}/merge_requests/${mr.iid}`;
    const other = `/projects/${pid}`;
    await kept(path);
    await kept(other);
    // The source branch moves (git only): the next read of the request computes its status again
    // and writes it, which the refresher's read-only database refuses.
    const sha = await commit(s, pid, 'r-writes', { 'w.txt': 'two\n' });
    expect((await s.request('PUT', `/projects/${pid}`, { json: { description: 'moved' } })).status).toBe(200);
    // Whether the round made the project again (the usual case) or was given up (a loaded
    // machine: the store is emptied), the write shows, and the request is made here with its new
    // status. (That a refused write leaves the batch's snapshot whole: test/unit/response-refresh.)
    const project = await s.request('GET', other);
    expect(project.body.description).toBe('moved');
    const again = await s.request('GET', path);
    expect(again.body.sha).toBe(sha);
  });

  it('a response kept for a sudo target given by name is not made again for whoever has that name now', async () => {
    const alice = await s.createUser('refresh-alice');
    const carol = await s.createUser('refresh-carol');
    const byName = () => s.request('GET', '/user', { headers: { Sudo: 'refresh-alice' } });
    await byName();
    expect((await byName()).body.id).toBe(alice.id);
    // In one write of this process, alice is renamed and carol takes her name; the round that
    // follows makes the kept response again with the same Sudo header, which names carol now.
    await s.app.lw.database.transaction(async (trx) => {
      await trx.updateTable('users').set({ username: 'refresh-alice-2' }).where('id', '=', alice.id).execute();
      await trx.updateTable('users').set({ username: 'refresh-alice' }).where('id', '=', carol.id).execute();
    });
    // (Written straight to the database, it waits for no round: an API write after it does.)
    expect((await s.request('PUT', `/projects/${pid}`, { json: { description: 'renamed' } })).status).toBe(200);
    const byId = await s.request('GET', '/user', { headers: { Sudo: String(alice.id) } });
    expect(byId.body.id).toBe(alice.id);
    expect(byId.body.username).toBe('refresh-alice-2');
    expect((await byName()).body.id).toBe(carol.id);
  });

  it('HEAD is answered without a body through rounds', async () => {
    const path = `/projects/${pid}`;
    for (let i = 0; i < 3; i++) expect((await s.request('HEAD', path)).text).toBe('');
    expect((await s.request('PUT', path, { json: { description: 'head' } })).status).toBe(200);
    const head = await s.request('HEAD', path);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect((await s.request('GET', path)).body.description).toBe('head');
  });

  it("the refresher's internal header means nothing to the server", async () => {
    const header = { 'x-labwright-refresh': JSON.stringify({ n: 1, identity: { kind: 'personal', id: 1 } }) };
    expect((await s.request('GET', '/user', { token: null, headers: header })).status).toBe(401);
    expect((await s.request('GET', `/projects/${pid}`, { token: null, headers: header })).status).toBe(404);
    expect((await s.request('GET', '/user', { token: dev.token, headers: header })).body.username).toBe('refresh-dev');
  });

  it('without the refresher, rounds empty the store and nothing waits', async () => {
    const list = `/projects/${pid}/merge_requests`;
    await kept(list);
    await s.app.lw.refresher!.close();
    await commit(s, pid, 'r-3', { 'c.txt': 'c\n' }, { from: 'main' });
    const created = await openMr(s, pid, 'r-3');
    const after = await s.request('GET', list);
    expect(after.body.map((m: { id: number }) => m.id)).toContain(created.id);
    expect(stats().waiting).toBe(0);
  });
});
