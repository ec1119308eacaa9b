// GET /projects/:id/members/all and /groups/:id/members/all list the members who reach the source
// through a share (a project shared with a group, a group or an ancestor shared with a group), at
// the level the share gives them: what the access rules grant, no more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

type U = { id: number; username: string; token: string };
let s: TestServer;
let alice: U; // owns ag
let bob: U; // owns team
let carol: U; // Maintainer of team
let dave: U; // Reporter of team/inner
let erin: U; // outsider
let spy: U; // Developer of alice's private group hush
let mini: U; // Minimal Access member of team
let ag: any; // alice's private group
let sub: any; // ag/sub
let p: any; // ag/p, shared with team/inner at Developer
let q: any; // ag/sub/q
let team: any; // bob's public group (a group shared with must be visible to the sharer)
let inner: any;

async function ok(method: string, path: string, token: string, json?: Record<string, unknown>) {
  const r = await s.request(method, path, { token, json });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
}

/** username → access_level of a members/all page. */
async function levels(path: string, token: string, query?: Record<string, string>): Promise<Record<string, number>> {
  const r = await s.request('GET', path, { token, query });
  expect(r.status).toBe(200);
  expect(r.headers.get('x-total')).toBe(String(r.body.length));
  return Object.fromEntries(r.body.map((m: any) => [m.username, m.access_level]));
}

beforeAll(async () => {
  s = await startServer();
  [alice, bob, carol, dave, erin, spy, mini] = await Promise.all(['alice', 'bob', 'carol', 'dave', 'erin', 'spy', 'mini'].map((n) => s.createUser(n)));
  ag = await ok('POST', '/groups', alice.token, { name: 'AG', path: 'ag', visibility: 'private' });
  sub = await ok('POST', '/groups', alice.token, { name: 'Sub', path: 'sub', parent_id: ag.id, visibility: 'private' });
  p = await ok('POST', '/projects', alice.token, { name: 'P', path: 'p', namespace_id: ag.id, visibility: 'private' });
  q = await ok('POST', '/projects', alice.token, { name: 'Q', path: 'q', namespace_id: sub.id, visibility: 'private' });
  team = await ok('POST', '/groups', bob.token, { name: 'Team', path: 'team', visibility: 'public' });
  inner = await ok('POST', '/groups', bob.token, { name: 'Inner', path: 'inner', parent_id: team.id, visibility: 'public' });
  await ok('POST', `/groups/${team.id}/members`, bob.token, { user_id: carol.id, access_level: 40 });
  await ok('POST', `/groups/${inner.id}/members`, bob.token, { user_id: dave.id, access_level: 20 });
  await ok('POST', `/groups/${team.id}/members`, bob.token, { user_id: mini.id, access_level: 5 });
});
afterAll(async () => {
  await s?.close();
});

describe('members reached through shares', () => {
  it('before any share, only direct and inherited members', async () => {
    expect(await levels(`/projects/${p.id}/members/all`, alice.token)).toEqual({ alice: 50 });
    expect(await levels(`/groups/${sub.id}/members/all`, alice.token)).toEqual({ alice: 50 });
  });

  it('a project shared with a group lists that group’s members and its ancestors’, capped at the share’s level', async () => {
    await ok('POST', `/projects/${p.id}/share`, alice.token, { group_id: inner.id, group_access: 30 });
    // carol is Maintainer of team, inner's parent: capped at Developer; dave is Reporter of inner.
    expect(await levels(`/projects/${p.id}/members/all`, alice.token)).toEqual({ alice: 50, bob: 30, carol: 30, dave: 20 });
    const one = await s.request('GET', `/projects/${p.id}/members/all/${carol.id}`, { token: alice.token });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: carol.id, username: 'carol', access_level: 30, state: 'active' });
    // Not direct members.
    expect((await s.request('GET', `/projects/${p.id}/members/${carol.id}`, { token: alice.token })).status).toBe(404);
    expect(await levels(`/projects/${p.id}/members`, alice.token)).toEqual({});
    // The access rules agree: carol reads the private project, and sees the same list; erin does neither.
    expect((await s.request('GET', `/projects/${p.id}`, { token: carol.token })).status).toBe(200);
    expect(await levels(`/projects/${p.id}/members/all`, carol.token)).toEqual({ alice: 50, bob: 30, carol: 30, dave: 20 });
    expect((await s.request('GET', `/projects/${p.id}/members/all`, { token: erin.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${p.id}/members/all/${erin.id}`, { token: alice.token })).status).toBe(404);
    // The group of the project does not gain them.
    expect(await levels(`/groups/${ag.id}/members/all`, alice.token)).toEqual({ alice: 50 });
  });

  it('filters apply to shared members too', async () => {
    expect(await levels(`/projects/${p.id}/members/all`, alice.token, { query: 'car' })).toEqual({ carol: 30 });
    expect(await levels(`/projects/${p.id}/members/all`, alice.token, { 'user_ids[]': String(dave.id) })).toEqual({ dave: 20 });
    expect(await levels(`/projects/${p.id}/members/all`, alice.token, { 'skip_users[]': String(carol.id) })).toEqual({ alice: 50, bob: 30, dave: 20 });
  });

  it('a group shared with a group: its members/all, its subgroups’ and its projects’ list the shared group’s members', async () => {
    await ok('POST', `/groups/${ag.id}/share`, alice.token, { group_id: team.id, group_access: 20 });
    // Members of team (not of its subgroup inner), capped at Reporter.
    expect(await levels(`/groups/${ag.id}/members/all`, alice.token)).toEqual({ alice: 50, bob: 20, carol: 20 });
    expect(await levels(`/groups/${sub.id}/members/all`, alice.token)).toEqual({ alice: 50, bob: 20, carol: 20 });
    expect(await levels(`/projects/${q.id}/members/all`, alice.token)).toEqual({ alice: 50, bob: 20, carol: 20 });
    // The project share gives more on p: the highest level counts.
    expect(await levels(`/projects/${p.id}/members/all`, alice.token)).toEqual({ alice: 50, bob: 30, carol: 30, dave: 20 });
    // What carol may do matches: Reporter on sub reads it, a Reporter may not add members.
    expect((await s.request('GET', `/groups/${sub.id}`, { token: carol.token })).status).toBe(200);
    const add = await s.request('POST', `/groups/${sub.id}/members`, { token: carol.token, json: { user_id: erin.id, access_level: 10 } });
    expect(add.status).toBe(403);
  });

  it('a direct membership at a lower level does not hide a higher shared one; a higher one wins', async () => {
    await ok('POST', `/projects/${q.id}/members`, alice.token, { user_id: carol.id, access_level: 10 });
    expect((await levels(`/projects/${q.id}/members/all`, alice.token)).carol).toBe(20);
    await ok('PUT', `/projects/${q.id}/members/${carol.id}`, alice.token, { access_level: 40 });
    const r = await s.request('GET', `/projects/${q.id}/members/all/${carol.id}`, { token: alice.token });
    expect(r.body.access_level).toBe(40);
  });

  it('removing a share removes the members it brought', async () => {
    const del = await s.request('DELETE', `/projects/${p.id}/share/${inner.id}`, { token: alice.token });
    expect(del.status).toBe(204);
    expect(await levels(`/projects/${p.id}/members/all`, alice.token)).toEqual({ alice: 50, bob: 20, carol: 20 });
    const gdel = await s.request('DELETE', `/groups/${ag.id}/share/${team.id}`, { token: alice.token });
    expect(gdel.status).toBe(204);
    expect(await levels(`/projects/${p.id}/members/all`, alice.token)).toEqual({ alice: 50 });
    expect(await levels(`/groups/${sub.id}/members/all`, alice.token)).toEqual({ alice: 50 });
    expect((await s.request('GET', `/projects/${p.id}`, { token: carol.token })).status).toBe(404);
  });
});

describe('shares the viewer cannot see', () => {
  let hush: any; // alice's private group, spy Developer
  let open: any; // alice's public personal project, shared with hush
  let pubg: any; // alice's public group, shared with hush

  beforeAll(async () => {
    hush = await ok('POST', '/groups', alice.token, { name: 'Hush', path: 'hush', visibility: 'private' });
    await ok('POST', `/groups/${hush.id}/members`, alice.token, { user_id: spy.id, access_level: 30 });
    open = await ok('POST', '/projects', alice.token, { name: 'Open', path: 'open', visibility: 'public' });
    await ok('POST', `/projects/${open.id}/share`, alice.token, { group_id: hush.id, group_access: 40 });
    pubg = await ok('POST', '/groups', alice.token, { name: 'Pub G', path: 'pubg', visibility: 'public' });
    await ok('POST', `/groups/${pubg.id}/share`, alice.token, { group_id: hush.id, group_access: 20 });
  });

  it('a project’s members/all shows a hidden group’s members only to members of the project', async () => {
    expect(await levels(`/projects/${open.id}/members/all`, alice.token)).toEqual({ alice: 50, spy: 30 });
    expect(await levels(`/projects/${open.id}/members/all`, spy.token)).toEqual({ alice: 50, spy: 30 });
    expect(await levels(`/projects/${open.id}/members/all`, erin.token)).toEqual({ alice: 50 });
    const anonymous = await s.request('GET', `/projects/${open.id}/members/all`, { token: null });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.map((m: any) => m.username)).toEqual(['alice']);
    expect((await s.request('GET', `/projects/${open.id}/members/all/${spy.id}`, { token: erin.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${open.id}/members/all/${spy.id}`, { token: alice.token })).body.access_level).toBe(30);
  });

  it('a group’s members/all shows a hidden group’s members only to those who can see that group', async () => {
    expect(await levels(`/groups/${pubg.id}/members/all`, alice.token)).toEqual({ alice: 50, spy: 20 });
    expect(await levels(`/groups/${pubg.id}/members/all`, spy.token)).toEqual({ alice: 50, spy: 20 });
    expect(await levels(`/groups/${pubg.id}/members/all`, erin.token)).toEqual({ alice: 50 });
    expect((await s.request('GET', `/groups/${pubg.id}/members/all/${spy.id}`, { token: erin.token })).status).toBe(404);
  });

  it('a group’s shared_with_groups names a hidden group only to those who can see it, its Owners included', async () => {
    await ok('POST', `/groups/${pubg.id}/members`, alice.token, { user_id: bob.id, access_level: 50 });
    const shown = (r: any) => r.body.shared_with_groups.map((g: any) => g.group_full_path);
    expect(shown(await s.request('GET', `/groups/${pubg.id}`, { token: alice.token }))).toEqual(['hush']);
    expect(shown(await s.request('GET', `/groups/${pubg.id}`, { token: spy.token }))).toEqual(['hush']);
    expect(shown(await s.request('GET', `/groups/${pubg.id}`, { token: bob.token }))).toEqual([]);
    expect(shown(await s.request('GET', `/groups/${pubg.id}`, { token: erin.token }))).toEqual([]);
    expect(shown(await s.request('GET', `/groups/${pubg.id}`, { token: null }))).toEqual([]);
    // Also in the GroupDetail a write answers with.
    const put = await s.request('PUT', `/groups/${pubg.id}`, { token: bob.token, json: { description: 'public' } });
    expect(put.status).toBe(200);
    expect(shown(put)).toEqual([]);
  });

  it('Minimal Access members of a shared group are not listed', async () => {
    await ok('POST', `/groups/${pubg.id}/share`, alice.token, { group_id: team.id, group_access: 30 });
    const all = await levels(`/groups/${pubg.id}/members/all`, alice.token);
    expect(all).toEqual({ alice: 50, spy: 20, bob: 50, carol: 30 });
    expect(all.mini).toBeUndefined();
  });
});
