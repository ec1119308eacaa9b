import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };
let g: any;
let sub: any;

async function project(token: string, body: Record<string, unknown>) {
  const r = await s.request('POST', '/projects', { token, json: body });
  if (r.status !== 201) throw new Error(`project: ${r.status} ${r.text}`);
  return r.body;
}

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  g = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Proj Group', path: 'pg', visibility: 'public' } })).body;
  sub = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Proj Sub', path: 'ps', parent_id: g.id, visibility: 'public' } })).body;
  await project(alice.token, { name: 'Public One', path: 'pub1', namespace_id: g.id, visibility: 'public' });
  await project(alice.token, { name: 'Private One', path: 'priv1', namespace_id: g.id, visibility: 'private' });
  await project(alice.token, { name: 'Deep', path: 'deep', namespace_id: sub.id, visibility: 'public' });
});
afterAll(async () => {
  await s?.close();
});

describe('GET /groups/:id/projects', () => {
  it('shows members everything, outsiders and anonymous callers only what they may see', async () => {
    const member = await s.request('GET', `/groups/${g.id}/projects`, { token: alice.token });
    expect(member.status).toBe(200);
    expect(member.body.map((p: any) => p.path).sort()).toEqual(['priv1', 'pub1']);
    const outsider = await s.request('GET', `/groups/${g.id}/projects`, { token: bob.token });
    expect(outsider.body.map((p: any) => p.path)).toEqual(['pub1']);
    const anon = await s.request('GET', `/groups/${g.id}/projects`, { token: null });
    expect(anon.body.map((p: any) => p.path)).toEqual(['pub1']);
  });

  it('include_subgroups, search, order_by, sort, simple, visibility, archived', async () => {
    const all = await s.request('GET', `/groups/${g.id}/projects?include_subgroups=true&order_by=path&sort=asc`, { token: alice.token });
    expect(all.body.map((p: any) => p.path)).toEqual(['deep', 'priv1', 'pub1']);
    const search = await s.request('GET', `/groups/${g.id}/projects?search=private`, { token: alice.token });
    expect(search.body.map((p: any) => p.path)).toEqual(['priv1']);
    const vis = await s.request('GET', `/groups/${g.id}/projects?visibility=private`, { token: alice.token });
    expect(vis.body.map((p: any) => p.path)).toEqual(['priv1']);
    const simple = await s.request('GET', `/groups/${g.id}/projects?simple=true`, { token: alice.token });
    expect(simple.body[0].permissions).toBeUndefined();
    const archived = await s.request('GET', `/groups/${g.id}/projects?archived=true`, { token: alice.token });
    expect(archived.body).toEqual([]);
    const bad = await s.request('GET', `/groups/${g.id}/projects?order_by=size`, { token: alice.token });
    expect(bad.status).toBe(400);
    const shared = await s.request('GET', `/groups/${g.id}/projects/shared`, { token: alice.token });
    expect(shared.status).toBe(200);
  });

  it('GroupDetail embeds projects (omitted with with_projects=false)', async () => {
    const r = await s.request('GET', `/groups/${g.id}`, { token: bob.token });
    expect(r.body.projects.map((p: any) => p.path)).toEqual(['pub1']);
    expect(r.body.shared_projects).toEqual([]);
    const without = await s.request('GET', `/groups/${g.id}?with_projects=false`, { token: bob.token });
    expect(without.body.projects).toBeUndefined();
    expect(without.body.shared_projects).toBeUndefined();
  });
});

describe('POST /groups/:id/projects/:project_id (admin)', () => {
  it('moves a project into the group; non-admins get 403', async () => {
    const p = await project(bob.token, { name: 'Loner', path: 'loner', visibility: 'public' });
    const denied = await s.request('POST', `/groups/${g.id}/projects/${p.id}`, { token: alice.token });
    expect(denied.status).toBe(403);
    const r = await s.request('POST', `/groups/${g.id}/projects/${p.id}`);
    expect(r.status).toBe(201);
    expect(r.body.path_with_namespace).toBe('pg/loner');
    const missing = await s.request('POST', `/groups/${g.id}/projects/999999`);
    expect(missing.status).toBe(404);
  });

  it('deleting a group deletes its projects', async () => {
    const d = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Gone', path: 'gone' } })).body;
    const p = await project(alice.token, { name: 'Inside', path: 'inside', namespace_id: d.id });
    expect((await s.request('DELETE', `/groups/${d.id}`, { token: alice.token })).status).toBe(202);
    expect((await s.request('GET', `/projects/${p.id}`, { token: alice.token })).status).toBe(404);
  });

  it('transfer moves project paths with the group', async () => {
    const t = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Target', path: 'target', visibility: 'public' } })).body;
    const r = await s.request('POST', `/groups/${sub.id}/transfer`, { token: alice.token, json: { group_id: t.id } });
    expect(r.status).toBe(201);
    const p = await s.request('GET', `/projects/${encodeURIComponent('target/ps/deep')}`, { token: alice.token });
    expect(p.status).toBe(200);
  });
});

describe('archive and shared groups', () => {
  it('archives and unarchives a group; archived/active filters follow', async () => {
    const a = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Old', path: 'old' } })).body;
    const r = await s.request('POST', `/groups/${a.id}/archive`, { token: alice.token });
    expect(r.status).toBe(201);
    expect(r.body.archived).toBe(true);
    expect((await s.request('POST', `/groups/${a.id}/archive`, { token: alice.token })).status).toBe(422);
    const archived = await s.request('GET', '/groups?archived=true', { token: alice.token });
    expect(archived.body.map((x: any) => x.id)).toEqual([a.id]);
    const inactive = await s.request('GET', '/groups?active=false', { token: alice.token });
    expect(inactive.body.map((x: any) => x.id)).toEqual([a.id]);
    const active = await s.request('GET', '/groups?active=true&per_page=100', { token: alice.token });
    expect(active.body.map((x: any) => x.id)).not.toContain(a.id);
    expect((await s.request('POST', `/groups/${a.id}/unarchive`, { token: bob.token })).status).toBe(404);
    expect((await s.request('POST', `/groups/${a.id}/unarchive`, { token: alice.token })).body.archived).toBe(false);
  });

  it('lists the groups a group was invited to', async () => {
    const host = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Host', path: 'host', visibility: 'public' } })).body;
    const guest = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Guest', path: 'guest', visibility: 'public' } })).body;
    await s.request('POST', `/groups/${host.id}/share`, { token: alice.token, json: { group_id: guest.id, group_access: 20 } });
    const r = await s.request('GET', `/groups/${guest.id}/groups/shared`, { token: bob.token });
    expect(r.status).toBe(200);
    expect(r.body.map((x: any) => x.id)).toEqual([host.id]);
  });
});
