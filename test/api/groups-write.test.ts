import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
});
afterAll(async () => {
  await s?.close();
});

async function mk(token: string, body: Record<string, unknown>) {
  const r = await s.request('POST', '/groups', { token, json: body });
  if (r.status !== 201) throw new Error(`create ${JSON.stringify(body)}: ${r.status} ${r.text}`);
  return r.body;
}

async function addMember(groupId: number, userId: number, level: number) {
  const now = new Date().toISOString();
  await s.app.lw.db
    .insertInto('members')
    .values({ source_type: 'Namespace', source_id: groupId, user_id: userId, access_level: level, expires_at: null, created_by_id: null, member_role_id: null, created_at: now, updated_at: now })
    .execute();
  await s.settle();
}

describe('PUT /groups/:id', () => {
  let g: any;
  let sub: any;
  beforeAll(async () => {
    g = await mk(alice.token, { name: 'Editable', path: 'editable', visibility: 'public' });
    sub = await mk(alice.token, { name: 'Kid', path: 'kid', parent_id: g.id, visibility: 'public' });
  });

  it('updates name, path, description and settings; the old path still finds the group', async () => {
    const r = await s.request('PUT', `/groups/${g.id}`, {
      token: alice.token,
      json: { name: 'Edited', path: 'edited', description: 'hello', project_creation_level: 'maintainer', two_factor_grace_period: 12, emails_disabled: true, default_branch: 'trunk' },
    });
    expect(r.status).toBe(200);
    expect(r.body.full_path).toBe('edited');
    expect(r.body.description).toBe('hello');
    expect(r.body.project_creation_level).toBe('maintainer');
    expect(r.body.two_factor_grace_period).toBe(12);
    expect(r.body.emails_enabled).toBe(false);
    expect(r.body.emails_disabled).toBe(true);
    expect(r.body.default_branch).toBe('trunk');
    const child = await s.request('GET', `/groups/${sub.id}`, { token: alice.token });
    expect(child.body.full_path).toBe('edited/kid');
    expect(child.body.full_name).toBe('Edited / Kid');
    const old = await s.request('GET', '/groups/editable', { token: alice.token });
    expect(old.status).toBe(200);
    expect(old.body.id).toBe(g.id);
  });

  it('lists show each group with its own settings, as GET /groups/:id does (with and without a settings row)', async () => {
    const parent = await mk(alice.token, { name: 'Listed', path: 'listed', visibility: 'public' });
    const tuned = await mk(alice.token, { name: 'Tuned', path: 'tuned', parent_id: parent.id, visibility: 'public' });
    const plain = await mk(alice.token, { name: 'Plain', path: 'plain', parent_id: parent.id, visibility: 'public' });
    expect((await s.request('PUT', `/groups/${tuned.id}`, { token: alice.token, json: { project_creation_level: 'noone', two_factor_grace_period: 7, lfs_enabled: false } })).status).toBe(200);
    expect((await s.request('POST', `/groups/${tuned.id}/archive`, { token: alice.token })).status).toBe(201);
    // A group whose settings row is gone reads with the defaults everywhere.
    await s.app.lw.db.deleteFrom('group_settings').where('namespace_id', '=', plain.id).execute();
    await s.settle();
    const single = async (id: number) => (await s.request('GET', `/groups/${id}?with_projects=false`, { token: alice.token })).body;
    const subgroups = (await s.request('GET', `/groups/${parent.id}/subgroups`, { token: alice.token })).body;
    const all = (await s.request('GET', '/groups?search=listed', { token: alice.token })).body;
    expect(all.map((x: any) => x.id).sort()).toEqual([parent.id, tuned.id, plain.id].sort());
    for (const g of [tuned, plain]) {
      const one = await single(g.id);
      for (const list of [subgroups, all]) {
        const listed = list.find((x: any) => x.id === g.id);
        for (const k of ['project_creation_level', 'two_factor_grace_period', 'lfs_enabled', 'archived', 'emails_enabled', 'request_access_enabled']) {
          expect([g.path, k, listed[k]]).toEqual([g.path, k, one[k]]);
        }
      }
    }
    expect(subgroups.find((x: any) => x.id === tuned.id)).toMatchObject({ project_creation_level: 'noone', two_factor_grace_period: 7, lfs_enabled: false, archived: true });
    expect(subgroups.find((x: any) => x.id === plain.id)).toMatchObject({ archived: false });
    expect(Object.keys(subgroups[0]).some((k) => k.startsWith('gs_'))).toBe(false);
  });

  it('refuses bad values with GitLab errors and changes nothing', async () => {
    for (const [body, field] of [
      [{ project_creation_level: 'everyone' }, 'project_creation_level'],
      [{ subgroup_creation_level: 'developer' }, 'subgroup_creation_level'],
      [{ enabled_git_access_protocol: 'ftp' }, 'enabled_git_access_protocol'],
      [{ shared_runners_setting: 'sometimes' }, 'shared_runners_setting'],
      [{ visibility: 'secret' }, 'visibility'],
      [{ lfs_enabled: 'maybe' }, 'lfs_enabled'],
      [{ two_factor_grace_period: 'soon' }, 'two_factor_grace_period'],
    ] as const) {
      const r = await s.request('PUT', `/groups/${g.id}`, { token: alice.token, json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatch(new RegExp(`^${field} (is invalid|does not have a valid value)$`));
    }
    const badPath = await s.request('PUT', `/groups/${g.id}`, { token: alice.token, json: { path: 'bad path' } });
    expect(badPath.status).toBe(400);
    expect(Object.keys(badPath.body.message)).toEqual(['path']);
    const after = await s.request('GET', `/groups/${g.id}`, { token: alice.token });
    expect(after.body.path).toBe('edited');
  });

  it('refuses lowering visibility below a subgroup, and raising a subgroup above its parent', async () => {
    const r = await s.request('PUT', `/groups/${g.id}`, { token: alice.token, json: { visibility: 'private' } });
    expect(r.status).toBe(400);
    expect(r.body.message.visibility_level[0]).toMatch(/sub-groups with higher visibility/);
    await s.request('PUT', `/groups/${sub.id}`, { token: alice.token, json: { visibility: 'private' } });
    const lowered = await s.request('PUT', `/groups/${g.id}`, { token: alice.token, json: { visibility: 'internal' } });
    expect(lowered.status).toBe(200);
    const up = await s.request('PUT', `/groups/${sub.id}`, { token: alice.token, json: { visibility: 'public' } });
    expect(up.status).toBe(400);
  });

  it('needs Owner: a Maintainer gets 403, an outsider of a public group 403, anonymous 401', async () => {
    await addMember(g.id, bob.id, 40);
    const m = await s.request('PUT', `/groups/${g.id}`, { token: bob.token, json: { description: 'x' } });
    expect(m.status).toBe(403);
    const anon = await s.request('PUT', `/groups/${g.id}`, { token: null, json: { description: 'x' } });
    expect(anon.status).toBe(401);
  });

  it('on Free, Premium and Ultimate settings are ignored and absent', async () => {
    const r = await s.request('PUT', `/groups/${g.id}`, {
      token: alice.token,
      json: { membership_lock: true, unique_project_download_limit: 5, wiki_access_level: 'disabled' },
    });
    expect(r.status).toBe(200);
    expect(r.body.membership_lock).toBeUndefined();
    expect(r.body.unique_project_download_limit).toBeUndefined();
    expect(r.body.wiki_access_level).toBeUndefined();
    expect(r.body.marked_for_deletion_on).toBeUndefined();
    expect(r.body.ai_settings).toBeUndefined();
  });
});

describe('transfer, share, delete', () => {
  it('transfers a group under another and back to the top level (201, the group as it was)', async () => {
    const a = await mk(alice.token, { name: 'Mover', path: 'mover', visibility: 'public' });
    const inner = await mk(alice.token, { name: 'Inner', path: 'inner', parent_id: a.id, visibility: 'public' });
    const dest = await mk(alice.token, { name: 'Dest', path: 'dest', visibility: 'internal' });
    const r = await s.request('POST', `/groups/${a.id}/transfer?group_id=${dest.id}`, { token: alice.token });
    expect(r.status).toBe(201);
    expect(r.body.parent_id).toBe(null);
    expect(r.body.full_path).toBe('mover');
    const after = await s.request('GET', `/groups/${a.id}`, { token: alice.token });
    expect(after.body.parent_id).toBe(dest.id);
    expect(after.body.full_path).toBe('dest/mover');
    expect(after.body.visibility).toBe('internal');
    const inn = await s.request('GET', `/groups/${inner.id}`, { token: alice.token });
    expect(inn.body.full_path).toBe('dest/mover/inner');
    expect(inn.body.full_name).toBe('Dest / Mover / Inner');
    const desc = await s.request('GET', `/groups/${dest.id}/descendant_groups`, { token: alice.token });
    expect(desc.body.map((x: any) => x.full_path).sort()).toEqual(['dest/mover', 'dest/mover/inner']);
    const subs = await s.request('GET', `/groups/${dest.id}/subgroups`, { token: alice.token });
    expect(subs.body.map((x: any) => x.full_path)).toEqual(['dest/mover']);
    // Into its own subgroup: refused.
    const loop = await s.request('POST', `/groups/${a.id}/transfer`, { token: alice.token, json: { group_id: inner.id } });
    expect(loop.status).toBe(400);
    expect(loop.body.message).toBe('Transfer failed: Cannot transfer group to one of its subgroup.');
    const top = await s.request('POST', `/groups/${a.id}/transfer`, { token: alice.token });
    expect(top.status).toBe(201);
    const back = await s.request('GET', `/groups/${inner.id}`, { token: alice.token });
    expect(back.body.full_path).toBe('mover/inner');
    const again = await s.request('POST', `/groups/${a.id}/transfer`, { token: alice.token });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('Transfer failed: Group is already a root group.');
    const denied = await s.request('POST', `/groups/${a.id}/transfer`, { token: bob.token, json: { group_id: dest.id } });
    expect(denied.status).toBe(403);
  });

  it('lists transfer locations the caller owns', async () => {
    const src = await mk(alice.token, { name: 'Src Loc', path: 'src-loc' });
    const r = await s.request('GET', `/groups/${src.id}/transfer_locations`, { token: alice.token, query: { per_page: 100 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body[0])).toEqual(['id', 'web_url', 'name', 'avatar_url', 'full_name', 'full_path']);
    expect(r.body.map((x: any) => x.id)).not.toContain(src.id);
    const bobs = await mk(bob.token, { name: 'Bobs', path: 'bobs' });
    expect(r.body.map((x: any) => x.id)).not.toContain(bobs.id);
  });

  it('shares a group with another; the invited members gain access; unshare removes it', async () => {
    const secret = await mk(alice.token, { name: 'Secret', path: 'secret' });
    const team = await mk(bob.token, { name: 'Team', path: 'team' });
    expect((await s.request('GET', `/groups/${secret.id}`, { token: bob.token })).status).toBe(404);
    // alice must be able to see the invited group: make it visible by sharing through admin instead.
    const hidden = await s.request('POST', `/groups/${secret.id}/share`, { token: alice.token, json: { group_id: team.id, group_access: 30 } });
    expect(hidden.status).toBe(404);
    const r = await s.request('POST', `/groups/${secret.id}/share`, { token: s.rootToken, json: { group_id: team.id, group_access: 30, expires_at: '2999-01-01' } });
    expect(r.status).toBe(200);
    expect(r.body.shared_with_groups).toEqual([{ group_id: team.id, group_name: 'Team', group_full_path: 'team', group_access_level: 30, expires_at: '2999-01-01' }]);
    expect((await s.request('GET', `/groups/${secret.id}`, { token: bob.token })).status).toBe(200);
    const again = await s.request('POST', `/groups/${secret.id}/share`, { token: s.rootToken, json: { group_id: team.id, group_access: 30 } });
    expect(again.status).toBe(409);
    const badLevel = await s.request('POST', `/groups/${secret.id}/share`, { token: s.rootToken, json: { group_id: team.id, group_access: 33 } });
    expect(badLevel.status).toBe(400);
    const missing = await s.request('POST', `/groups/${secret.id}/share`, { token: s.rootToken, json: { group_access: 30 } });
    expect(missing.status).toBe(400);
    const past = await s.request('POST', `/groups/${secret.id}/share`, { token: s.rootToken, json: { group_id: team.id, group_access: 30, expires_at: '2000-01-01' } });
    expect(past.status).toBe(400);
    const del = await s.request('DELETE', `/groups/${secret.id}/share/${team.id}`, { token: alice.token });
    expect(del.status).toBe(204);
    expect((await s.request('GET', `/groups/${secret.id}`, { token: bob.token })).status).toBe(404);
    const gone = await s.request('DELETE', `/groups/${secret.id}/share/${team.id}`, { token: alice.token });
    expect(gone.status).toBe(404);
    expect(gone.body.message).toBe('404 Group Link Not Found');
  });

  it('deletes a group with its subgroups at once (202)', async () => {
    const d = await mk(alice.token, { name: 'Doomed', path: 'doomed' });
    const k = await mk(alice.token, { name: 'Kid', path: 'kid', parent_id: d.id });
    const denied = await s.request('DELETE', `/groups/${d.id}`, { token: bob.token });
    expect(denied.status).toBe(404);
    const stale = await s.request('DELETE', `/groups/${d.id}`, { token: alice.token, headers: { 'If-Unmodified-Since': 'Sat, 01 Jan 2000 00:00:00 GMT' } });
    expect(stale.status).toBe(412);
    const r = await s.request('DELETE', `/groups/${d.id}`, { token: alice.token });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ message: '202 Accepted' });
    expect((await s.request('GET', `/groups/${d.id}`, { token: alice.token })).status).toBe(404);
    expect((await s.request('GET', `/groups/${k.id}`, { token: alice.token })).status).toBe(404);
    const reuse = await s.request('POST', '/groups', { token: alice.token, json: { name: 'Doomed', path: 'doomed' } });
    expect(reuse.status).toBe(201);
  });
});
