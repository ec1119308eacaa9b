// POST /projects/:id/share, DELETE /projects/:id/share/:group_id and what sharing changes:
// access, /projects?membership, shared_with_groups, the groups module's shared-project lists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

type U = { id: number; username: string; token: string };
let s: TestServer;
let alice: U; // owns the projects
let bob: U; // owns the groups projects get shared with
let carol: U; // member of bob's group
let dave: U; // Developer on alice's project
let erin: U; // outsider
let team: any; // bob's public group, carol Developer
let inner: any; // team/inner
let hidden: any; // bob's private group
let secret: any; // alice's private personal project
let second: any; // alice's private personal project, shared with team/inner
let agroup: any; // alice's private group
let aproj: any; // private project in agroup

async function ok(method: string, path: string, token: string, json?: Record<string, unknown>) {
  const r = await s.request(method, path, { token, json });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
}

const ids = (body: any[]) => body.map((p: any) => p.id).sort((a: number, b: number) => a - b);

beforeAll(async () => {
  s = await startServer();
  [alice, bob, carol, dave, erin] = await Promise.all(['alice', 'bob', 'carol', 'dave', 'erin'].map((n) => s.createUser(n)));
  team = await ok('POST', '/groups', bob.token, { name: 'Team', path: 'team', visibility: 'public' });
  inner = await ok('POST', '/groups', bob.token, { name: 'Inner', path: 'inner', parent_id: team.id, visibility: 'public' });
  hidden = await ok('POST', '/groups', bob.token, { name: 'Hidden', path: 'hidden', visibility: 'private' });
  await ok('POST', `/groups/${team.id}/members`, bob.token, { user_id: carol.id, access_level: 30 });
  secret = await ok('POST', '/projects', alice.token, { name: 'Secret', path: 'secret', visibility: 'private' });
  second = await ok('POST', '/projects', alice.token, { name: 'Second', path: 'second', visibility: 'private' });
  await ok('POST', `/projects/${secret.id}/members`, alice.token, { user_id: dave.id, access_level: 30 });
  agroup = await ok('POST', '/groups', alice.token, { name: 'A Group', path: 'agroup', visibility: 'private' });
  aproj = await ok('POST', '/projects', alice.token, { name: 'A Proj', path: 'aproj', namespace_id: agroup.id, visibility: 'private' });
});
afterAll(async () => {
  await s?.close();
});

describe('POST /projects/:id/share', () => {
  it('is invisible to members of the group before sharing', async () => {
    expect((await s.request('GET', `/projects/${secret.id}`, { token: carol.token })).status).toBe(404);
  });

  it('refuses bad input with 400 and changes nothing', async () => {
    const path = `/projects/${secret.id}/share`;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ group_access: 20 }, /\\"group_id\\" not given/],
      [{ group_id: team.id }, /\\"group_access\\" not given/],
      [{ group_id: team.id, group_access: 99 }, /group_access does not have a valid value/],
      [{ group_id: 'abc', group_access: 20 }, /group_id is invalid/],
      [{ group_id: team.id, group_access: 20, expires_at: 'tomorrow' }, /expires_at is invalid/],
      [{ group_id: team.id, group_access: 20, expires_at: '2099-02-30' }, /expires_at is invalid/],
      [{ group_id: '99999999999999999999', group_access: 20 }, /group_id/],
      [{ group_id: team.id, group_access: 'owner' }, /group_access/],
      [{ group_id: team.id, group_access: 5 }, /group_access does not have a valid value/],
    ];
    for (const [json, msg] of cases) {
      const r = await s.request('POST', path, { token: alice.token, json });
      expect(r.status, JSON.stringify(json)).toBe(400);
      expect(r.text).toMatch(msg);
    }
    const past = await s.request('POST', path, { token: alice.token, json: { group_id: team.id, group_access: 20, expires_at: '2020-01-01' } });
    expect(past.status).toBe(400);
    expect(past.body).toEqual({ message: { expires_at: ['cannot be a date in the past'] } });
    const project = await s.request('GET', `/projects/${secret.id}`, { token: alice.token });
    expect(project.body.shared_with_groups).toEqual([]);
  });

  it('needs a signed-in Maintainer; hides private projects from outsiders', async () => {
    const json = { group_id: team.id, group_access: 20 };
    expect((await s.request('POST', `/projects/${secret.id}/share`, { token: null, json })).status).toBe(401);
    const outsider = await s.request('POST', `/projects/${secret.id}/share`, { token: erin.token, json });
    expect(outsider.status).toBe(404);
    expect(outsider.body).toEqual({ message: '404 Project Not Found' });
    const developer = await s.request('POST', `/projects/${secret.id}/share`, { token: dave.token, json });
    expect(developer.status).toBe(403);
  });

  it('answers 404 Not Found for a group that does not exist or that the caller cannot see', async () => {
    for (const groupId of [999999, hidden.id]) {
      const r = await s.request('POST', `/projects/${secret.id}/share`, { token: alice.token, json: { group_id: groupId, group_access: 20 } });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: 'Not Found' });
    }
  });

  it('creates the link (201) and refuses a second one (409)', async () => {
    const r = await s.request('POST', `/projects/${secret.id}/share`, { token: alice.token, json: { group_id: team.id, group_access: 20 } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(Number), project_id: secret.id, group_id: team.id, group_access: 20, expires_at: null });
    const again = await s.request('POST', `/projects/${secret.id}/share`, { token: alice.token, json: { group_id: team.id, group_access: 30 } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: 'Group already shared with this group' });
  });

  it('accepts arguments in the query string (python-gitlab) and a future expires_at', async () => {
    const r = await s.request('POST', `/projects/${second.id}/share`, {
      token: alice.token,
      query: { group_id: String(inner.id), group_access: '30', expires_at: '2099-12-31' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ project_id: second.id, group_id: inner.id, group_access: 30, expires_at: '2099-12-31' });
  });

  it('gives group members the lower of both levels, inherited members included', async () => {
    const seen = await s.request('GET', `/projects/${secret.id}`, { token: carol.token });
    expect(seen.status).toBe(200);
    // Reporter (20) through the link: not enough to manage the project.
    const manage = await s.request('POST', `/projects/${secret.id}/share`, { token: carol.token, json: { group_id: inner.id, group_access: 10 } });
    expect(manage.status).toBe(403);
    // carol is a member of team, so of team/inner, which second is shared with.
    expect((await s.request('GET', `/projects/${second.id}`, { token: carol.token })).status).toBe(200);
    // Another user who is in no linked group still cannot see it.
    expect((await s.request('GET', `/projects/${secret.id}`, { token: erin.token })).status).toBe(404);
  });

  it('shows shared_with_groups on the project, single and in lists', async () => {
    const one = await s.request('GET', `/projects/${secret.id}`, { token: alice.token });
    expect(one.body.shared_with_groups).toEqual([
      { group_id: team.id, group_name: 'Team', group_full_path: 'team', group_access_level: 20, expires_at: null },
    ]);
    const list = await s.request('GET', '/projects', { token: alice.token, query: { owned: 'true' } });
    const byId = new Map(list.body.map((p: any) => [p.id, p]));
    expect((byId.get(secret.id) as any).shared_with_groups.map((g: any) => g.group_id)).toEqual([team.id]);
    expect((byId.get(second.id) as any).shared_with_groups).toEqual([
      { group_id: inner.id, group_name: 'Inner', group_full_path: 'team/inner', group_access_level: 30, expires_at: '2099-12-31' },
    ]);
  });

  it('hides a private group from shared_with_groups for callers who cannot see it', async () => {
    const p = await ok('POST', '/projects', bob.token, { name: 'Open', path: 'open', visibility: 'public' });
    await ok('POST', `/projects/${p.id}/share`, bob.token, { group_id: hidden.id, group_access: 10 });
    const owner = await s.request('GET', `/projects/${p.id}`, { token: bob.token });
    expect(owner.body.shared_with_groups.map((g: any) => g.group_id)).toEqual([hidden.id]);
    const outsider = await s.request('GET', `/projects/${p.id}`, { token: erin.token });
    expect(outsider.body.shared_with_groups).toEqual([]);
    const admin = await s.request('GET', `/projects/${p.id}`);
    expect(admin.body.shared_with_groups.map((g: any) => g.group_id)).toEqual([hidden.id]);
  });

  it('lets only Owners grant Owner', async () => {
    const p = await ok('POST', '/projects', alice.token, { name: 'Maint', path: 'maint', visibility: 'private' });
    await ok('POST', `/projects/${p.id}/members`, alice.token, { user_id: bob.id, access_level: 40 });
    const owner = await s.request('POST', `/projects/${p.id}/share`, { token: bob.token, json: { group_id: team.id, group_access: 50 } });
    expect(owner.status).toBe(403);
    const maint = await s.request('POST', `/projects/${p.id}/share`, { token: bob.token, json: { group_id: team.id, group_access: 40 } });
    expect(maint.status).toBe(201);
  });

  it('refuses sharing when the project group has share_with_group_lock', async () => {
    const g = await ok('POST', '/groups', alice.token, { name: 'Locked', path: 'locked', visibility: 'private' });
    const p = await ok('POST', '/projects', alice.token, { name: 'L', path: 'l', namespace_id: g.id, visibility: 'private' });
    await ok('PUT', `/groups/${g.id}`, alice.token, { share_with_group_lock: true });
    const r = await s.request('POST', `/projects/${p.id}/share`, { token: alice.token, json: { group_id: team.id, group_access: 20 } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'The project sharing with group is disabled' });
  });
});

describe('membership lists through shares', () => {
  it('GET /projects?membership=true and min_access_level include project shares', async () => {
    const member = await s.request('GET', '/projects', { token: carol.token, query: { membership: 'true' } });
    expect(ids(member.body)).toEqual(expect.arrayContaining([secret.id, second.id]));
    const reporter = await s.request('GET', '/projects', { token: carol.token, query: { min_access_level: '20' } });
    expect(ids(reporter.body)).toEqual(expect.arrayContaining([secret.id, second.id]));
    // secret gives Reporter, second Developer (min of the link's 30 and carol's 30).
    const developer = await s.request('GET', '/projects', { token: carol.token, query: { min_access_level: '30' } });
    expect(ids(developer.body)).toContain(second.id);
    expect(ids(developer.body)).not.toContain(secret.id);
    const outsider = await s.request('GET', '/projects', { token: erin.token, query: { membership: 'true' } });
    expect(ids(outsider.body)).not.toContain(secret.id);
  });

  it('GET /projects includes projects of groups shared with the user group (group_group_links)', async () => {
    expect(ids((await s.request('GET', '/projects', { token: carol.token, query: { membership: 'true' } })).body)).not.toContain(aproj.id);
    await ok('POST', `/groups/${agroup.id}/share`, alice.token, { group_id: team.id, group_access: 20 });
    const member = await s.request('GET', '/projects', { token: carol.token, query: { membership: 'true' } });
    expect(ids(member.body)).toContain(aproj.id);
    const all = await s.request('GET', '/projects', { token: carol.token });
    expect(ids(all.body)).toContain(aproj.id);
    const developer = await s.request('GET', '/projects', { token: carol.token, query: { min_access_level: '30' } });
    expect(ids(developer.body)).not.toContain(aproj.id);
    await ok('DELETE', `/groups/${agroup.id}/share/${team.id}`, alice.token);
    expect(ids((await s.request('GET', '/projects', { token: carol.token })).body)).not.toContain(aproj.id);
  });
});

describe('the groups module reads the links', () => {
  it('GET /groups/:id/projects/shared lists shared projects the caller can see', async () => {
    const carolView = await s.request('GET', `/groups/${team.id}/projects/shared`, { token: carol.token });
    expect(carolView.status).toBe(200);
    expect(ids(carolView.body)).toEqual(expect.arrayContaining([secret.id]));
    const outsider = await s.request('GET', `/groups/${team.id}/projects/shared`, { token: erin.token });
    expect(ids(outsider.body)).not.toContain(secret.id);
  });

  it('GET /groups/:id/projects with_shared (default true) and GroupDetail shared_projects', async () => {
    const withShared = await s.request('GET', `/groups/${team.id}/projects`, { token: carol.token });
    expect(ids(withShared.body)).toContain(secret.id);
    const without = await s.request('GET', `/groups/${team.id}/projects`, { token: carol.token, query: { with_shared: 'false' } });
    expect(ids(without.body)).not.toContain(secret.id);
    const detail = await s.request('GET', `/groups/${team.id}`, { token: carol.token });
    expect(detail.body.shared_projects.map((p: any) => p.id)).toContain(secret.id);
  });

  it('DELETE /groups/:id/shared_projects/:project_id removes the link (Owner of the group)', async () => {
    const p = await ok('POST', '/projects', alice.token, { name: 'Temp', path: 'temp', visibility: 'private' });
    await ok('POST', `/projects/${p.id}/share`, alice.token, { group_id: team.id, group_access: 10 });
    expect((await s.request('DELETE', `/groups/${team.id}/shared_projects/${p.id}`, { token: carol.token })).status).toBe(403);
    expect((await s.request('DELETE', `/groups/${team.id}/shared_projects/${p.id}`, { token: bob.token })).status).toBe(204);
    expect((await s.request('GET', `/projects/${p.id}`, { token: alice.token })).body.shared_with_groups).toEqual([]);
    expect((await s.request('GET', `/projects/${p.id}`, { token: carol.token })).status).toBe(404);
  });
});

describe('DELETE /projects/:id/share/:group_id', () => {
  it('checks rights and input', async () => {
    expect((await s.request('DELETE', `/projects/${secret.id}/share/${team.id}`, { token: erin.token })).status).toBe(404);
    expect((await s.request('DELETE', `/projects/${secret.id}/share/${team.id}`, { token: dave.token })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${secret.id}/share/abc`, { token: alice.token })).status).toBe(400);
    expect((await s.request('DELETE', `/projects/${secret.id}/share/99999999999999999999`, { token: alice.token })).status).toBe(400);
    const unknown = await s.request('DELETE', `/projects/${secret.id}/share/999999`, { token: alice.token });
    expect(unknown.status).toBe(404);
    // By full path too, as clients send it.
    const byPath = await s.request('GET', `/projects/${encodeURIComponent('alice/secret')}`, { token: alice.token });
    expect(byPath.body.shared_with_groups.map((g: any) => g.group_id)).toEqual([team.id]);
  });

  it('removes the link (204), then 404 Group Link Not Found', async () => {
    const r = await s.request('DELETE', `/projects/${secret.id}/share/${team.id}`, { token: alice.token });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    const again = await s.request('DELETE', `/projects/${secret.id}/share/${team.id}`, { token: alice.token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Group Link Not Found' });
    expect((await s.request('GET', `/projects/${secret.id}`, { token: carol.token })).status).toBe(404);
    const member = await s.request('GET', '/projects', { token: carol.token, query: { membership: 'true' } });
    expect(ids(member.body)).not.toContain(secret.id);
  });

  it('links go with their group', async () => {
    const doomed = await ok('POST', '/groups', bob.token, { name: 'Doomed', path: 'doomed', visibility: 'public' });
    const p = await ok('POST', '/projects', alice.token, { name: 'Stays', path: 'stays', visibility: 'private' });
    await ok('POST', `/projects/${p.id}/share`, alice.token, { group_id: doomed.id, group_access: 10 });
    expect((await s.request('DELETE', `/groups/${doomed.id}`, { token: bob.token })).status).toBe(202);
    expect((await s.request('GET', `/projects/${p.id}`, { token: alice.token })).body.shared_with_groups).toEqual([]);
    expect((await s.request('DELETE', `/projects/${p.id}/share/${doomed.id}`, { token: alice.token })).status).toBe(404);
  });

  it('links go with their project', async () => {
    const p = await ok('POST', '/projects', alice.token, { name: 'Gone', path: 'gone', visibility: 'private' });
    await ok('POST', `/projects/${p.id}/share`, alice.token, { group_id: team.id, group_access: 10 });
    expect((await s.request('DELETE', `/projects/${p.id}`, { token: alice.token })).status).toBe(202);
    const shared = await s.request('GET', `/groups/${team.id}/projects/shared`);
    expect(ids(shared.body)).not.toContain(p.id);
  });
});
