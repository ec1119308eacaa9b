// To-dos of groups and projects themselves: a failed transfer leaves the requester a
// `transfer_failed` to-do (spec document 3 §4.3), a request to join asks the approvers with
// `member_access_requested` to-dos, done once the request is answered; GitLab's entity (a `group`
// instead of a `project`, the Namespace or Project entity as target), the filters, and
// python-gitlab's listing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { schemaProblems } from '../fuzz/schema-oracle.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let alice: U;
let bob: U;
let carol: U;
let asker: U;
const GROUP_KEYS = ['id', 'group', 'author', 'action_name', 'target_type', 'target', 'target_url', 'body', 'state', 'created_at', 'updated_at'];
const PROJECT_KEYS = ['id', 'project', 'author', 'action_name', 'target_type', 'target', 'target_url', 'body', 'state', 'created_at', 'updated_at'];

const todos = async (u: U, query = '') => {
  const r = await s.request('GET', `/todos${query}`, { token: u.token });
  expect(r.status).toBe(200);
  // Every answer matches the registry's Todo schema (group and project targets included).
  expect(schemaProblems({ method: 'GET', path: '/api/v4/todos' }, { method: 'GET', status: 200, contentType: 'application/json', body: Buffer.from(JSON.stringify(r.body)) })).toEqual([]);
  return r.body as any[];
};

async function mkGroup(token: string, body: Record<string, unknown>) {
  const r = await s.request('POST', '/groups', { token, json: body });
  if (r.status !== 201) throw new Error(`create group: ${r.status} ${r.text}`);
  return r.body;
}

async function addGroupMember(token: string, groupId: number, userId: number, level: number) {
  const r = await s.request('POST', `/groups/${groupId}/members`, { token, json: { user_id: userId, access_level: level } });
  if (r.status !== 201) throw new Error(`add member: ${r.status} ${r.text}`);
}

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('tgalice');
  bob = await s.createUser('tgbob');
  carol = await s.createUser('tgcarol');
  asker = await s.createUser('tgasker');
}, 60_000);

afterAll(async () => closeServer(s));

describe('transfer_failed', () => {
  it('a failed group transfer answers 400, changes nothing and leaves the requester a to-do with the reason', async () => {
    const mover = await mkGroup(alice.token, { name: 'TG Mover', path: 'tg-mover', visibility: 'private' });
    const inner = await mkGroup(alice.token, { name: 'TG Inner', path: 'tg-inner', parent_id: mover.id, visibility: 'private' });
    const r = await s.request('POST', `/groups/${mover.id}/transfer`, { token: alice.token, json: { group_id: inner.id } });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('Transfer failed: Cannot transfer group to one of its subgroup.');
    expect((await s.request('GET', `/groups/${mover.id}`, { token: alice.token })).body.parent_id).toBe(null);

    const list = await todos(alice);
    expect(list).toHaveLength(1);
    const t = list[0];
    expect(Object.keys(t)).toEqual(GROUP_KEYS);
    expect(t).toMatchObject({
      action_name: 'transfer_failed',
      target_type: 'Namespace',
      state: 'pending',
      body: 'Failed to transfer tg-mover to tg-mover/tg-inner. Cannot transfer group to one of its subgroup.',
      target_url: `${s.url}/groups/tg-mover`,
      author: { id: alice.id, username: 'tgalice' },
      group: { id: mover.id, name: 'TG Mover', path: 'tg-mover', kind: 'group', full_path: 'tg-mover', parent_id: null, web_url: `${s.url}/groups/tg-mover` },
    });
    expect(Object.keys(t.group)).toEqual(['id', 'name', 'path', 'kind', 'full_path', 'parent_id', 'avatar_url', 'web_url']);
    // The target is the namespaces API's entity (Entities::Namespace), as the owner sees it.
    expect(t.target).toMatchObject({ id: mover.id, kind: 'group', full_path: 'tg-mover', projects_count: 0, members_count_with_descendants: 1 });

    // Becoming top level when already there: a second to-do (failures are not merged).
    const again = await s.request('POST', `/groups/${mover.id}/transfer`, { token: alice.token });
    expect(again.status).toBe(400);
    const two = await todos(alice, '?action=transfer_failed&type=Namespace');
    expect(two.map((x) => x.body)).toEqual(['Failed to transfer tg-mover to the top level. Group is already a root group.', t.body]);
    // The group filter takes a group's own to-dos (and its subgroups'); the project filter does not.
    expect(await todos(alice, `?group_id=${mover.id}`)).toHaveLength(2);
    expect(await todos(alice, `?group_id=${inner.id}`)).toHaveLength(0);
    expect(await todos(alice, '?project_id=1')).toHaveLength(0);

    const done = await s.request('POST', `/todos/${t.id}/mark_as_done`, { token: alice.token });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ id: t.id, state: 'done', action_name: 'transfer_failed' });
    expect(await todos(alice)).toHaveLength(1);
  });

  it('no to-do for a transfer that worked, one the caller may not make (403), or an unknown target (404)', async () => {
    const a = await mkGroup(bob.token, { name: 'TG Ok', path: 'tg-ok' });
    const dest = await mkGroup(bob.token, { name: 'TG Dest', path: 'tg-dest' });
    expect((await s.request('POST', `/groups/${a.id}/transfer`, { token: bob.token, json: { group_id: dest.id } })).status).toBe(201);
    expect((await s.request('POST', `/groups/${a.id}/transfer`, { token: carol.token, json: { group_id: dest.id } })).status).toBe(404);
    expect((await s.request('POST', `/groups/${a.id}/transfer`, { token: bob.token, json: { group_id: 999999 } })).status).toBe(404);
    expect(await todos(bob)).toHaveLength(0);
    expect(await todos(carol)).toHaveLength(0);
  });

  it("the target group's refusal (no right to make subgroups there) is a failure with a to-do", async () => {
    const mine = await mkGroup(carol.token, { name: 'TG Mine', path: 'tg-mine' });
    const theirs = await mkGroup(bob.token, { name: 'TG Theirs', path: 'tg-theirs', visibility: 'public' });
    const r = await s.request('POST', `/groups/${mine.id}/transfer`, { token: carol.token, json: { group_id: theirs.id } });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe("Transfer failed: You don't have enough permissions.");
    const list = await todos(carol);
    expect(list.map((x) => [x.action_name, x.body])).toEqual([['transfer_failed', "Failed to transfer tg-mine to tg-theirs. You don't have enough permissions."]]);
  });

  it('a failed project transfer leaves a to-do on the project; deleting the group takes group to-dos with it', async () => {
    const g = await mkGroup(alice.token, { name: 'TG Home', path: 'tg-home' });
    const project = await createProject(s, 'tg-proj', { token: alice.token, extra: { namespace_id: g.id } });
    const r = await s.request('PUT', `/projects/${project.id}/transfer`, { token: alice.token, json: { namespace: g.id } });
    expect(r.status).toBe(400);
    const list = await todos(alice, '?type=Project');
    expect(list).toHaveLength(1);
    expect(Object.keys(list[0])).toEqual(PROJECT_KEYS);
    expect(list[0]).toMatchObject({
      action_name: 'transfer_failed',
      target_type: 'Project',
      project: { id: project.id, path_with_namespace: 'tg-home/tg-proj' },
      target: { id: project.id, path_with_namespace: 'tg-home/tg-proj', namespace: { id: g.id } },
      target_url: `${s.url}/tg-home/tg-proj`,
    });
    expect(list[0].body).toMatch(/^Failed to transfer tg-home\/tg-proj to tg-home\. /);
    // Entities::Project: no `permissions` of the caller.
    expect(list[0].target.permissions).toBeUndefined();

    const doomed = await mkGroup(alice.token, { name: 'TG Doomed', path: 'tg-doomed' });
    await s.request('POST', `/groups/${doomed.id}/transfer`, { token: alice.token });
    const before = (await todos(alice, '?type=Namespace')).length;
    expect((await s.request('DELETE', `/groups/${doomed.id}`, { token: alice.token })).status).toBe(202);
    expect((await todos(alice, '?type=Namespace')).length).toBe(before - 1);
  });
});

describe('member_access_requested', () => {
  it("a request to join a group asks its Owners (not its Maintainers); answering it makes their to-dos done", async () => {
    const g = await mkGroup(alice.token, { name: 'TG Club', path: 'tg-club', visibility: 'public' });
    await addGroupMember(alice.token, g.id, bob.id, 50);
    await addGroupMember(alice.token, g.id, carol.id, 40);
    const r = await s.request('POST', `/groups/${g.id}/access_requests`, { token: asker.token });
    expect(r.status).toBe(201);
    for (const owner of [alice, bob]) {
      const list = await todos(owner, '?action=member_access_requested');
      expect(list).toHaveLength(1);
      expect(Object.keys(list[0])).toEqual(GROUP_KEYS);
      expect(list[0]).toMatchObject({
        target_type: 'Namespace',
        body: 'tg-club',
        target_url: `${s.url}/groups/tg-club/-/group_members?tab=access_requests`,
        author: { id: asker.id },
        group: { id: g.id, full_path: 'tg-club' },
        target: { id: g.id, full_path: 'tg-club' },
      });
    }
    expect(await todos(carol, '?action=member_access_requested')).toHaveLength(0);
    expect(await todos(asker)).toHaveLength(0);

    const approve = await s.request('PUT', `/groups/${g.id}/access_requests/${asker.id}/approve`, { token: bob.token });
    expect(approve.status).toBe(201);
    expect(await todos(alice, '?action=member_access_requested')).toHaveLength(0);
    const done = await todos(alice, '?action=member_access_requested&state=done');
    expect(done.map((x) => x.body)).toEqual(['tg-club']);
  });

  it('a request to join a project asks its Maintainers; a withdrawal or denial makes the to-dos done', async () => {
    const project = await createProject(s, 'tg-open', { token: alice.token, visibility: 'public' });
    await addMember(s, project.id, bob.id, 40);
    await addMember(s, project.id, carol.id, 30);
    expect((await s.request('POST', `/projects/${project.id}/access_requests`, { token: asker.token })).status).toBe(201);
    const bobs = await todos(bob, `?project_id=${project.id}`);
    expect(bobs).toHaveLength(1);
    expect(Object.keys(bobs[0])).toEqual(PROJECT_KEYS);
    expect(bobs[0]).toMatchObject({
      action_name: 'member_access_requested',
      target_type: 'Project',
      body: `tgalice/tg-open`,
      target_url: `${s.url}/tgalice/tg-open/-/project_members?tab=access_requests`,
      target: { id: project.id, name: 'tg-open' },
    });
    expect(await todos(carol, `?project_id=${project.id}`)).toHaveLength(0);
    // Withdrawn by the requester.
    expect((await s.request('DELETE', `/projects/${project.id}/access_requests/${asker.id}`, { token: asker.token })).status).toBe(204);
    expect(await todos(bob, `?project_id=${project.id}`)).toHaveLength(0);
    // Asked again and denied: the new to-dos are done too.
    expect((await s.request('POST', `/projects/${project.id}/access_requests`, { token: asker.token })).status).toBe(201);
    expect(await todos(bob, `?project_id=${project.id}`)).toHaveLength(1);
    expect((await s.request('DELETE', `/projects/${project.id}/access_requests/${asker.id}`, { token: bob.token })).status).toBe(204);
    expect(await todos(bob, `?project_id=${project.id}`)).toHaveLength(0);
  });

  it('asks at most 10 approvers, those who signed in most recently first, never-signed-in people last (both databases)', async () => {
    const g = await mkGroup(alice.token, { name: 'TG Crowd', path: 'tg-crowd', visibility: 'public' });
    const owners: U[] = [];
    for (let i = 0; i < 11; i++) {
      const u = await s.createUser(`tgown${i}`);
      await addGroupMember(alice.token, g.id, u.id, 50);
      owners.push(u);
    }
    // alice (the creator) and two others have signed in; the other nine never did.
    const signedIn = [alice.id, owners[3]!.id, owners[7]!.id];
    for (const [i, id] of signedIn.entries()) {
      await s.app.lw.db.updateTable('users').set({ last_sign_in_at: `2026-0${i + 1}-01T00:00:00.000Z` }).where('id', '=', id).execute();
      await s.settle();
    }
    const late = await s.createUser('tglate');
    expect((await s.request('POST', `/groups/${g.id}/access_requests`, { token: late.token })).status).toBe(201);
    const asked = await s.app.lw.db.selectFrom('todos').select('user_id').where('target_type', '=', 'Namespace').where('target_id', '=', g.id).execute();
    expect(asked).toHaveLength(10);
    for (const id of signedIn) expect(asked.map((t) => t.user_id)).toContain(id);
  });

  it("a group's to-do is hidden from someone who can no longer read the group", async () => {
    const g = await mkGroup(alice.token, { name: 'TG Secret', path: 'tg-secret', visibility: 'private' });
    await addGroupMember(alice.token, g.id, carol.id, 50);
    await s.request('POST', `/groups/${g.id}/transfer`, { token: carol.token });
    expect(await todos(carol, `?group_id=${g.id}`)).toHaveLength(1);
    expect((await s.request('DELETE', `/groups/${g.id}/members/${carol.id}`, { token: alice.token })).status).toBe(204);
    expect(await todos(carol, `?group_id=${g.id}`)).toHaveLength(0);
  });

  it('python-gitlab lists them', async () => {
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
for t in gl.todos.list(action='transfer_failed', state='done', get_all=True):
    print(t.action_name, t.target_type, t.group['full_path'], t.target['kind'])
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, alice.token]);
    expect(stdout.trim().split('\n')).toEqual(['transfer_failed Namespace tg-mover group']);
  });
});
