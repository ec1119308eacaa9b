// Project and group members through the real HTTP app: list, add, change, remove, inherited
// members, GitLab's errors, and who may grant what.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

type U = { id: number; username: string; token: string };
let s: TestServer;
let owner: U, maint: U, dev: U, outsider: U, newbie: U;
let project: any;
let group: { id: number; full_path: string };
let groupProject: any;

/** A group through the API when the groups module is mounted, else through its service. */
async function makeGroup(token: string, username: string, path: string, visibility = 'private', parentId?: number) {
  const r = await s.request('POST', '/groups', { token, json: { name: path, path, visibility, ...(parentId ? { parent_id: parentId } : {}) } });
  if (r.status === 201) return r.body as { id: number; full_path: string };
  const { createGroup } = await import('../../src/services/groups/write.js');
  const { findUserByUsername } = await import('../../src/db/repositories/users.js');
  const user = (await findUserByUsername(s.app.lw.db, username))!;
  const parent = parentId ? await s.app.lw.db.selectFrom('namespaces').selectAll().where('id', '=', parentId).executeTakeFirst() : null;
  return createGroup(s.app.lw, user, { name: path, path, parent: parent ?? null, visibility, description: '', settings: {} }, null);
}

async function add(token: string, src: string, userId: number, level: number, extra: Record<string, unknown> = {}) {
  return s.request('POST', `${src}/members`, { token, json: { user_id: userId, access_level: level, ...extra } });
}

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('owner');
  maint = await s.createUser('maint');
  dev = await s.createUser('dev');
  outsider = await s.createUser('outsider');
  newbie = await s.createUser('newbie');
  project = (await s.request('POST', '/projects', { token: owner.token, json: { name: 'proj' } })).body;
  group = await makeGroup(owner.token, 'owner', 'team');
  groupProject = (await s.request('POST', '/projects', { token: owner.token, json: { name: 'gp', namespace_id: group.id } })).body;
});
afterAll(async () => {
  await s?.close();
});

describe('project members', () => {
  it('lists the personal namespace owner as Owner', async () => {
    const r = await s.request('GET', `/projects/${project.id}/members`, { token: owner.token });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-total')).toBe('1');
    expect(r.body).toHaveLength(1);
    expect(r.body[0]).toMatchObject({ id: owner.id, username: 'owner', access_level: 50, expires_at: null, state: 'active', web_url: `${s.url}/owner` });
  });

  it('adds, reads, changes and removes members', async () => {
    const a = await add(owner.token, `/projects/${project.id}`, maint.id, 40);
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ id: maint.id, username: 'maint', access_level: 40, expires_at: null });
    expect(a.body.created_by.username).toBe('owner');
    const d = await add(owner.token, `/projects/${project.id}`, dev.id, 30, { expires_at: '2999-01-31' });
    expect(d.status).toBe(201);
    expect(d.body.expires_at).toBe('2999-01-31');
    const one = await s.request('GET', `/projects/${project.id}/members/${dev.id}`, { token: dev.token });
    expect(one.status).toBe(200);
    expect(one.body.access_level).toBe(30);
    const up = await s.request('PUT', `/projects/${project.id}/members/${dev.id}`, { token: maint.token, json: { access_level: 20 } });
    expect(up.status).toBe(200);
    expect(up.body.access_level).toBe(20);
    expect(up.body.expires_at).toBe('2999-01-31');
    const clear = await s.request('PUT', `/projects/${project.id}/members/${dev.id}`, { token: maint.token, json: { access_level: 30, expires_at: null } });
    expect(clear.body.expires_at).toBeNull();
    const list = await s.request('GET', `/projects/${project.id}/members`, { token: dev.token, query: { query: 'mai' } });
    expect(list.body.map((m: any) => m.username)).toEqual(['maint']);
    // The new member can now read the private project.
    const seen = await s.request('GET', `/projects/${project.id}`, { token: dev.token });
    expect(seen.status).toBe(200);
    expect(seen.body.permissions.project_access.access_level).toBe(30);
  });

  it('answers GitLab errors for duplicates, unknown users and members', async () => {
    const dup = await add(owner.token, `/projects/${project.id}`, maint.id, 30);
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ message: 'Member already exists' });
    const unknownUser = await add(owner.token, `/projects/${project.id}`, 999999, 30);
    expect(unknownUser.status).toBe(404);
    expect(unknownUser.body).toEqual({ message: '404 User Not Found' });
    const missing = await s.request('GET', `/projects/${project.id}/members/${newbie.id}`, { token: owner.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Member Not Found' });
    const missingPut = await s.request('PUT', `/projects/${project.id}/members/${newbie.id}`, { token: owner.token, json: { access_level: 30 } });
    expect(missingPut.body).toEqual({ message: '404 Member Not Found' });
    const missingDel = await s.request('DELETE', `/projects/${project.id}/members/${newbie.id}`, { token: owner.token });
    expect(missingDel.body).toEqual({ message: '404 Member Not Found' });
  });

  it('validates access_level, user_id and expires_at', async () => {
    const cases: Array<[Record<string, unknown>, number, unknown]> = [
      [{ user_id: newbie.id }, 400, { message: '400 Bad request - "access_level" not given' }],
      [{ user_id: newbie.id, access_level: 35 }, 400, { error: 'access_level does not have a valid value' }],
      [{ user_id: newbie.id, access_level: 5 }, 400, { error: 'access_level does not have a valid value' }],
      [{ user_id: newbie.id, access_level: 'developer' }, 400, { error: 'access_level is invalid' }],
      [{ user_id: newbie.id, access_level: null }, 400, { error: 'access_level is invalid' }],
      [{ user_id: 'abc', access_level: 30 }, 400, { error: 'user_id is invalid' }],
      [{ access_level: 30 }, 400, { error: 'user_id, username are missing, at least one parameter must be provided' }],
      [{ user_id: newbie.id, access_level: 30, expires_at: 'tomorrow' }, 400, { error: 'expires_at is invalid' }],
      [{ user_id: newbie.id, access_level: 30, expires_at: '2001-01-01' }, 400, { message: { expires_at: ['cannot be a date in the past or today'] } }],
      [{ username: 'no-such-user', access_level: 30 }, 404, { message: '404 User Not Found' }],
    ];
    for (const [json, status, body] of cases) {
      const r = await s.request('POST', `/projects/${project.id}/members`, { token: owner.token, json });
      expect({ json, status: r.status, body: r.body }).toEqual({ json, status, body });
    }
    const none = await s.request('GET', `/projects/${project.id}/members/${newbie.id}`, { token: owner.token });
    expect(none.status).toBe(404);
    const byName = await s.request('POST', `/projects/${project.id}/members`, { token: owner.token, form: { username: 'NEWBIE', access_level: '10' } });
    expect(byName.status).toBe(201);
    expect(byName.body.username).toBe('newbie');
    await s.request('DELETE', `/projects/${project.id}/members/${newbie.id}`, { token: owner.token });
  });

  it('only Owners grant Owner; Maintainers cannot touch Owners; others cannot manage', async () => {
    const r = await add(maint.token, `/projects/${project.id}`, newbie.id, 50);
    expect(r.status).toBe(403);
    const promote = await s.request('PUT', `/projects/${project.id}/members/${dev.id}`, { token: maint.token, json: { access_level: 50 } });
    expect(promote.status).toBe(403);
    const demoteOwner = await s.request('PUT', `/projects/${project.id}/members/${owner.id}`, { token: maint.token, json: { access_level: 10 } });
    expect(demoteOwner.status).toBe(403);
    const removeOwner = await s.request('DELETE', `/projects/${project.id}/members/${owner.id}`, { token: maint.token });
    expect(removeOwner.status).toBe(403);
    // The personal namespace owner cannot be removed even by themselves.
    const selfRemove = await s.request('DELETE', `/projects/${project.id}/members/${owner.id}`, { token: owner.token });
    expect(selfRemove.status).toBe(403);
    const byDev = await add(dev.token, `/projects/${project.id}`, newbie.id, 10);
    expect(byDev.status).toBe(403);
    const byOutsider = await add(outsider.token, `/projects/${project.id}`, newbie.id, 10);
    expect(byOutsider.status).toBe(404);
    expect(byOutsider.body).toEqual({ message: '404 Project Not Found' });
    const listOutsider = await s.request('GET', `/projects/${project.id}/members`, { token: outsider.token });
    expect(listOutsider.status).toBe(404);
    const anon = await s.request('GET', `/projects/${project.id}/members`, { token: null });
    expect(anon.status).toBe(404);
    const ok = await add(owner.token, `/projects/${project.id}`, newbie.id, 50);
    expect(ok.status).toBe(201);
    const del = await s.request('DELETE', `/projects/${project.id}/members/${newbie.id}`, { token: owner.token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
  });

  it('racing adds of one member give one 201 and 409s', async () => {
    const racer = await s.createUser('racer');
    const results = await Promise.all(Array.from({ length: 6 }, () => add(owner.token, `/projects/${project.id}`, racer.id, 30)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body).toEqual({ message: 'Member already exists' });
    await s.request('DELETE', `/projects/${project.id}/members/${racer.id}`, { token: owner.token });
  });

  it('members may leave on their own', async () => {
    await add(owner.token, `/projects/${project.id}`, newbie.id, 10);
    const leave = await s.request('DELETE', `/projects/${project.id}/members/${newbie.id}`, { token: newbie.token });
    expect(leave.status).toBe(204);
    const gone = await s.request('GET', `/projects/${project.id}`, { token: newbie.token });
    expect(gone.status).toBe(404);
  });

  it('an expired membership gives no access and can be replaced', async () => {
    await add(owner.token, `/projects/${project.id}`, newbie.id, 30);
    await s.app.lw.db.updateTable('members').set({ expires_at: '2001-01-01' }).where('user_id', '=', newbie.id).where('source_type', '=', 'Project').execute();
    await s.settle();
    const denied = await s.request('GET', `/projects/${project.id}`, { token: newbie.token });
    expect(denied.status).toBe(404);
    const again = await add(owner.token, `/projects/${project.id}`, newbie.id, 20);
    expect(again.status).toBe(201);
    await s.request('DELETE', `/projects/${project.id}/members/${newbie.id}`, { token: owner.token });
  });
});

describe('group members and inheritance', () => {
  it('the group creator is Owner; members/all of a group project includes inherited members', async () => {
    const g = await s.request('GET', `/groups/${group.id}/members`, { token: owner.token });
    expect(g.status).toBe(200);
    expect(g.body.map((m: any) => [m.username, m.access_level])).toEqual([['owner', 50]]);
    const added = await add(owner.token, `/groups/${group.id}`, dev.id, 30);
    expect(added.status).toBe(201);
    const direct = await s.request('GET', `/projects/${groupProject.id}/members`, { token: dev.token });
    expect(direct.body).toEqual([]);
    const all = await s.request('GET', `/projects/${groupProject.id}/members/all`, { token: dev.token });
    expect(all.status).toBe(200);
    expect(all.body.map((m: any) => [m.username, m.access_level]).sort()).toEqual([['dev', 30], ['owner', 50]]);
    const allOne = await s.request('GET', `/projects/${groupProject.id}/members/all/${dev.id}`, { token: dev.token });
    expect(allOne.body.access_level).toBe(30);
    const proj = await s.request('GET', `/projects/${groupProject.id}`, { token: dev.token });
    expect(proj.body.permissions).toEqual({ project_access: null, group_access: { access_level: 30, notification_level: 3 } });
  });

  it('subgroup projects inherit from every ancestor; a project membership may not be below the inherited one', async () => {
    const sub = await makeGroup(owner.token, 'owner', 'sub', 'private', group.id);
    const p = (await s.request('POST', '/projects', { token: owner.token, json: { name: 'deep', namespace_id: sub.full_path } })).body;
    expect(p.path_with_namespace).toBe('team/sub/deep');
    const seen = await s.request('GET', `/projects/${encodeURIComponent('team/sub/deep')}`, { token: dev.token });
    expect(seen.status).toBe(200);
    // Inherited from the top-level group, two levels up (read with the project on PostgreSQL).
    expect(seen.body.permissions).toEqual({ project_access: null, group_access: { access_level: 30, notification_level: 3 } });
    const lower = await add(owner.token, `/projects/${p.id}`, dev.id, 20);
    expect(lower.status).toBe(400);
    expect(lower.body).toEqual({ message: { access_level: ['should be greater than or equal to Developer inherited membership from group team'] } });
    const higher = await add(owner.token, `/projects/${p.id}`, dev.id, 40);
    expect(higher.status).toBe(201);
    const all = await s.request('GET', `/projects/${p.id}/members/all`, { token: dev.token, query: { query: 'dev' } });
    expect(all.body.map((m: any) => [m.username, m.access_level])).toEqual([['dev', 40]]);
    const subAll = await s.request('GET', `/groups/${sub.id}/members/all`, { token: dev.token });
    expect(subAll.body.map((m: any) => m.username).sort()).toEqual(['dev', 'owner']);
  });

  it('group members: Owner manages, Maintainer may not; last Owner stays; Minimal Access allowed', async () => {
    await add(owner.token, `/groups/${group.id}`, maint.id, 40);
    const byMaint = await add(maint.token, `/groups/${group.id}`, newbie.id, 10);
    expect(byMaint.status).toBe(403);
    const minimal = await add(owner.token, `/groups/${group.id}`, newbie.id, 5);
    expect(minimal.status).toBe(201);
    const lastOwnerDemote = await s.request('PUT', `/groups/${group.id}/members/${owner.id}`, { token: owner.token, json: { access_level: 40 } });
    expect(lastOwnerDemote.status).toBe(403);
    const lastOwnerLeave = await s.request('DELETE', `/groups/${group.id}/members/${owner.id}`, { token: owner.token });
    expect(lastOwnerLeave.status).toBe(403);
    const byPath = await s.request('GET', `/groups/team/members/${maint.id}`, { token: owner.token });
    expect(byPath.status).toBe(200);
    const outsiderList = await s.request('GET', `/groups/${group.id}/members`, { token: outsider.token });
    expect(outsiderList.status).toBe(404);
    expect(outsiderList.body).toEqual({ message: '404 Group Not Found' });
    const unknown = await s.request('GET', '/groups/999999/members', { token: owner.token });
    expect(unknown.status).toBe(404);
    const bad = await add(owner.token, `/groups/${group.id}`, outsider.id, 60);
    expect(bad.body).toEqual({ error: 'access_level does not have a valid value' });
    const dup = await add(owner.token, `/groups/${group.id}`, maint.id, 40);
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ message: 'Member already exists' });
    const del = await s.request('DELETE', `/groups/${group.id}/members/${maint.id}`, { token: owner.token });
    expect(del.status).toBe(204);
  });

  it('creating projects in a group needs Developer; visibility is capped by the group', async () => {
    const g = await makeGroup(owner.token, 'owner', 'makers', 'private');
    await add(owner.token, `/groups/${g.id}`, dev.id, 30);
    await add(owner.token, `/groups/${g.id}`, maint.id, 20);
    const hidden = await s.request('POST', '/projects', { token: outsider.token, json: { name: 'x', namespace_id: g.id } });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ message: '404 Namespace Not Found' });
    const reporter = await s.request('POST', '/projects', { token: maint.token, json: { name: 'x', namespace_id: 'makers' } });
    expect(reporter.status).toBe(400);
    expect(reporter.body).toEqual({ message: { namespace: ['is not valid'] } });
    const tooOpen = await s.request('POST', '/projects', { token: dev.token, json: { name: 'x', namespace_id: g.id, visibility: 'public' } });
    expect(tooOpen.status).toBe(400);
    expect(tooOpen.body).toEqual({ message: { visibility_level: ['public is not allowed in a private group.'] } });
    const ok = await s.request('POST', '/projects', { token: dev.token, json: { name: 'made', namespace_id: g.id } });
    expect(ok.status).toBe(201);
    expect(ok.body.namespace).toMatchObject({ id: g.id, kind: 'group', full_path: 'makers', web_url: `${s.url}/groups/makers` });
    expect(ok.body.owner).toBeUndefined();
    // The Developer who created it is not its Owner: deleting needs Owner.
    const del = await s.request('DELETE', `/projects/${ok.body.id}`, { token: dev.token });
    expect(del.status).toBe(403);
  });

  it('transfers a public personal project into a private group: path redirects, visibility drops', async () => {
    const g = await makeGroup(owner.token, 'owner', 'vault', 'private');
    const p = (await s.request('POST', '/projects', { token: owner.token, json: { name: 'opened', visibility: 'public' } })).body;
    const r = await s.request('PUT', `/projects/${p.id}/transfer`, { token: owner.token, json: { namespace: 'vault' } });
    expect(r.status).toBe(200);
    expect(r.body.path_with_namespace).toBe('vault/opened');
    expect(r.body.visibility).toBe('private');
    const old = await s.request('GET', '/projects/owner%2Fopened', { token: owner.token });
    expect(old.status).toBe(301);
    // Gone from outsiders now.
    const hidden = await s.request('GET', `/projects/${p.id}`, { token: outsider.token });
    expect(hidden.status).toBe(404);
    // Outsiders are not told where it went either: no 301 with the new id, no 405.
    const oldOutsider = await s.request('GET', '/projects/owner%2Fopened', { token: outsider.token });
    expect(oldOutsider.status).toBe(404);
    expect(oldOutsider.headers.get('location')).toBeNull();
    expect(oldOutsider.body).toEqual({ message: '404 Project Not Found' });
    const putOutsider = await s.request('PUT', '/projects/owner%2Fopened', { token: outsider.token, json: { description: 'x' } });
    expect(putOutsider.status).toBe(404);
    const oldSub = await s.request('GET', '/projects/owner%2Fopened/members', { token: null });
    expect(oldSub.status).toBe(404);
  });

  it('two Owners removing each other at once leave the group with one Owner', async () => {
    const g = await makeGroup(owner.token, 'owner', 'duel');
    await add(owner.token, `/groups/${g.id}`, maint.id, 50);
    for (let round = 0; round < 3; round++) {
      const [a, b] = await Promise.all([
        s.request('DELETE', `/groups/${g.id}/members/${maint.id}`, { token: owner.token }),
        s.request('DELETE', `/groups/${g.id}/members/${owner.id}`, { token: maint.token }),
      ]);
      // One wins; the loser is refused (403 last Owner, or 404 once it no longer sees the private group).
      expect([a.status, b.status].filter((st) => st === 204)).toHaveLength(1);
      expect([a.status, b.status].every((st) => st === 204 || st === 403 || st === 404), `${a.status} ${a.text} / ${b.status} ${b.text}`).toBe(true);
      const owners = (await s.request('GET', `/groups/${g.id}/members`, { token: s.rootToken })).body.filter((m: any) => m.access_level === 50);
      expect(owners).toHaveLength(1);
      // Put the removed Owner back for the next round.
      const gone = a.status === 204 ? maint : owner;
      expect((await add(s.rootToken, `/groups/${g.id}`, gone.id, 50)).status).toBe(201);
    }
  });

  it('member search treats _ and % literally', async () => {
    const r = await s.request('GET', `/projects/${project.id}/members/all`, { token: owner.token, query: { query: 'own_r' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    const plain = await s.request('GET', `/projects/${project.id}/members/all`, { token: owner.token, query: { query: 'owne' } });
    expect(plain.body.map((m: any) => m.username)).toContain('owner');
  });

  it('paginates member lists with GitLab headers', async () => {
    const r = await s.request('GET', `/groups/${group.id}/members`, { token: owner.token, query: { per_page: 1 } });
    expect(r.body).toHaveLength(1);
    expect(r.headers.get('x-per-page')).toBe('1');
    expect(r.headers.get('x-next-page')).toBe('2');
    expect(r.headers.get('link')).toContain('rel="next"');
  });
});
