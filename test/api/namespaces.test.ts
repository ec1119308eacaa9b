import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };
let g: any;
let sub: any;

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  g = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Space Team', path: 'space' } })).body;
  sub = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Rockets', path: 'rockets', parent_id: g.id } })).body;
});
afterAll(async () => {
  await s?.close();
});

describe('namespaces API', () => {
  it('is 401 for anonymous callers on every endpoint', async () => {
    for (const p of ['/namespaces', `/namespaces/${g.id}`, '/namespaces/space/exists']) {
      const r = await s.request('GET', p, { token: null });
      expect(r.status, p).toBe(401);
      expect(r.body).toEqual({ message: '401 Unauthorized' });
    }
  });

  it('lists the caller\'s namespaces with NamespaceBasic field order', async () => {
    const r = await s.request('GET', '/namespaces', { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body.map((n: any) => n.full_path)).toEqual(['alice', 'space', 'space/rockets']);
    expect(Object.keys(r.body[0]).slice(0, 8)).toEqual(['id', 'name', 'path', 'kind', 'full_path', 'parent_id', 'avatar_url', 'web_url']);
    expect(r.body[0].kind).toBe('user');
    expect(r.body[0].web_url).toBe(`${s.url}/alice`);
    expect(r.body[1].web_url).toBe(`${s.url}/groups/space`);
    expect(r.body[1].members_count_with_descendants).toBe(1);
    expect(r.body[1].plan).toBe('free');
    const bobs = await s.request('GET', '/namespaces', { token: bob.token });
    expect(bobs.body.map((n: any) => n.full_path)).toEqual(['bob']);
  });

  it('filters by search, full_path_search, top_level_only, owned_only', async () => {
    const a = await s.request('GET', '/namespaces?search=rock', { token: alice.token });
    expect(a.body.map((n: any) => n.full_path)).toEqual(['space/rockets']);
    const b = await s.request('GET', '/namespaces?search=space/rock&full_path_search=true', { token: alice.token });
    expect(b.body.map((n: any) => n.full_path)).toEqual(['space/rockets']);
    const c = await s.request('GET', '/namespaces?top_level_only=true', { token: alice.token });
    expect(c.body.map((n: any) => n.full_path)).toEqual(['alice', 'space']);
    const d = await s.request('GET', '/namespaces?owned_only=true', { token: alice.token });
    expect(d.body.length).toBe(3);
    const admin = await s.request('GET', '/namespaces?per_page=100');
    expect(admin.body.length).toBeGreaterThanOrEqual(5);
    const bad = await s.request('GET', '/namespaces?owned_only=maybe', { token: alice.token });
    expect(bad.status).toBe(400);
  });

  it('reads one namespace by id or URL-encoded path; others get 404', async () => {
    const byId = await s.request('GET', `/namespaces/${sub.id}`, { token: alice.token });
    expect(byId.status).toBe(200);
    expect(byId.body.full_path).toBe('space/rockets');
    const byPath = await s.request('GET', `/namespaces/${encodeURIComponent('space/rockets')}`, { token: alice.token });
    expect(byPath.body.id).toBe(sub.id);
    const hidden = await s.request('GET', `/namespaces/${g.id}`, { token: bob.token });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ message: '404 Namespace Not Found' });
    const otherUser = await s.request('GET', '/namespaces/alice', { token: bob.token });
    expect(otherUser.status).toBe(404);
    const missing = await s.request('GET', '/namespaces/99999', { token: alice.token });
    expect(missing.status).toBe(404);
  });

  it('/exists checks top-level paths, or paths under parent_id, and suggests a free one', async () => {
    const r = await s.request('GET', '/namespaces/space/exists', { token: bob.token });
    expect(r.body).toEqual({ exists: true, suggests: ['space1'] });
    const free = await s.request('GET', '/namespaces/nothing-here/exists', { token: bob.token });
    expect(free.body).toEqual({ exists: false, suggests: [] });
    const user = await s.request('GET', '/namespaces/alice/exists', { token: bob.token });
    expect(user.body.exists).toBe(true);
    const underTop = await s.request('GET', '/namespaces/rockets/exists', { token: alice.token });
    expect(underTop.body.exists).toBe(false);
    const under = await s.request('GET', `/namespaces/rockets/exists?parent_id=${g.id}`, { token: alice.token });
    expect(under.body).toEqual({ exists: true, suggests: ['rockets1'] });
    // A private parent the caller cannot see reveals nothing.
    const hidden = await s.request('GET', `/namespaces/rockets/exists?parent_id=${g.id}`, { token: bob.token });
    expect(hidden.body).toEqual({ exists: false, suggests: [] });
    const badParent = await s.request('GET', '/namespaces/rockets/exists?parent_id=abc', { token: bob.token });
    expect(badParent.status).toBe(400);
  });

  it('shows project and member counts changed by the request before (figures are reused only while nothing was written)', async () => {
    const read = async () => (await s.request('GET', `/namespaces/${g.id}`, { token: alice.token })).body;
    const before = await read();
    expect(await read()).toEqual(before);
    const project = await s.request('POST', '/projects', { token: alice.token, json: { name: 'counted', namespace_id: sub.id } });
    expect(project.status).toBe(201);
    const member = await s.request('POST', `/groups/${sub.id}/members`, { token: alice.token, json: { user_id: bob.id, access_level: 30 } });
    expect(member.status).toBe(201);
    const after = await read();
    expect(after.members_count_with_descendants).toBe(before.members_count_with_descendants + 1);
    const subNs = (await s.request('GET', `/namespaces/${sub.id}`, { token: alice.token })).body;
    expect(subNs.projects_count).toBe(1);
    const list = (await s.request('GET', '/namespaces', { token: alice.token })).body;
    expect(list.find((n: any) => n.id === sub.id).projects_count).toBe(1);
    // Undo, and the figures follow at once.
    expect((await s.request('DELETE', `/groups/${sub.id}/members/${bob.id}`, { token: alice.token })).status).toBe(204);
    expect((await read()).members_count_with_descendants).toBe(before.members_count_with_descendants);
  });
});
