// To-do lists: what makes a to-do (assignment, review requests, mentions in descriptions and
// comments, directly addressed people, marking), who gets none (those who may not read the
// target or an internal comment), what makes it done (the user's own action, mark as done), the
// list's filters and entity, and python-gitlab's and gitbeaker's calls.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let bob: U;
let carol: U;
let dave: U;
let guest: U;
let outsider: U;
let project: { id: number; path_with_namespace: string };
const KEYS = ['id', 'project', 'author', 'action_name', 'target_type', 'target', 'target_url', 'body', 'state', 'created_at', 'updated_at'];

const todos = async (u: U, query = '') => {
  const r = await s.request('GET', `/todos${query}`, { token: u.token });
  expect(r.status).toBe(200);
  return r.body as any[];
};

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('tdowner');
  bob = await s.createUser('tdbob');
  carol = await s.createUser('tdcarol');
  dave = await s.createUser('tddave');
  guest = await s.createUser('tdguest');
  outsider = await s.createUser('tdoutsider');
  project = await createProject(s, 'tasks', { token: owner.token });
  await addMember(s, project.id, bob.id, 30);
  await addMember(s, project.id, carol.id, 30);
  await addMember(s, project.id, dave.id, 40);
  await addMember(s, project.id, guest.id, 10);
}, 60_000);

afterAll(async () => closeServer(s));

describe('issues', () => {
  let issue: any;

  it('assignees, mentioned and directly addressed people get to-dos; outsiders of a private project none', async () => {
    const r = await s.request('POST', `/projects/${project.id}/issues`, {
      token: owner.token,
      json: { title: 'Broken build', assignee_ids: [bob.id], description: '@tddave @tdguest please look.\n\nAlso cc @tdcarol and @tdoutsider, not `@tdbob`.' },
    });
    expect(r.status).toBe(201);
    issue = r.body;
    const bobs = await todos(bob);
    expect(bobs).toHaveLength(1);
    expect(Object.keys(bobs[0])).toEqual(KEYS);
    expect(bobs[0]).toMatchObject({
      action_name: 'assigned',
      target_type: 'Issue',
      target_url: `${s.url}/${project.path_with_namespace}/-/issues/${issue.iid}`,
      body: 'Broken build',
      state: 'pending',
      author: { id: owner.id, username: 'tdowner' },
      project: { id: project.id, path_with_namespace: project.path_with_namespace, name_with_namespace: expect.any(String) },
    });
    expect(Object.keys(bobs[0].project)).toEqual(['id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at']);
    expect(bobs[0].target).toMatchObject({ id: issue.id, iid: issue.iid, title: 'Broken build' });
    expect(bobs[0].target).not.toHaveProperty('subscribed');
    expect((await todos(dave)).map((t) => t.action_name)).toEqual(['directly_addressed']);
    expect((await todos(guest)).map((t) => t.action_name)).toEqual(['directly_addressed']);
    expect((await todos(carol)).map((t) => t.action_name)).toEqual(['mentioned']);
    expect(await todos(outsider)).toEqual([]);
    expect(await todos(owner)).toEqual([]);
  });

  it('a comment mentioning someone makes a to-do with its text and anchor; an internal one only for those who may read it', async () => {
    const note = await s.request('POST', `/projects/${project.id}/issues/${issue.iid}/notes`, { token: owner.token, json: { body: 'What do you think, @tdcarol?' } });
    expect(note.status).toBe(201);
    const [newest] = await todos(carol);
    expect(newest).toMatchObject({ action_name: 'mentioned', body: 'What do you think, @tdcarol?', target_url: `${s.url}/${project.path_with_namespace}/-/issues/${issue.iid}#note_${note.body.id}` });
    await s.request('POST', `/projects/${project.id}/issues/${issue.iid}/notes`, { token: owner.token, json: { body: '@tdguest @tdcarol secret', internal: true } });
    expect((await todos(guest)).length).toBe(1);
    expect((await todos(carol))[0]).toMatchObject({ action_name: 'directly_addressed', body: '@tdguest @tdcarol secret' });
  });

  it("acting on the issue marks only the actor's to-dos done", async () => {
    await s.request('POST', `/projects/${project.id}/issues/${issue.iid}/notes`, { token: carol.token, json: { body: 'On it' } });
    expect(await todos(carol)).toEqual([]);
    expect((await todos(carol, '?state=done')).map((t) => t.state)).toEqual(['done', 'done', 'done']);
    // The owner closing it leaves bob's to-do pending (GitLab's rule: only your own action).
    await s.request('PUT', `/projects/${project.id}/issues/${issue.iid}`, { token: owner.token, json: { state_event: 'close' } });
    expect(await todos(bob)).toHaveLength(1);
    await s.request('PUT', `/projects/${project.id}/issues/${issue.iid}`, { token: owner.token, json: { state_event: 'reopen' } });
  });

  it('reassigning and editing notify only the new people', async () => {
    await s.request('PUT', `/projects/${project.id}/issues/${issue.iid}`, { token: owner.token, json: { assignee_ids: [carol.id] } });
    expect((await todos(carol)).map((t) => t.action_name)).toEqual(['assigned']);
    expect(await todos(bob)).toHaveLength(1);
    await s.request('PUT', `/projects/${project.id}/issues/${issue.iid}`, { token: owner.token, json: { description: '@tddave @tdguest please look.\n\nAlso @tdbob now.' } });
    expect((await todos(bob)).map((t) => t.action_name)).toEqual(['mentioned', 'assigned']);
    expect(await todos(dave)).toHaveLength(1);
  });

  it('marks an issue as a to-do (201, then 304), done one by one or all at once', async () => {
    const r = await s.request('POST', `/projects/${project.id}/issues/${issue.iid}/todo`, { token: dave.token });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ action_name: 'marked', body: 'Broken build', author: { id: dave.id } });
    expect(r.body.target.subscribed).toBe(false);
    const again = await s.request('POST', `/projects/${project.id}/issues/${issue.iid}/todo`, { token: dave.token });
    expect(again.status).toBe(304);
    expect((await s.request('POST', `/projects/${project.id}/issues/999/todo`, { token: dave.token })).status).toBe(404);
    const done = await s.request('POST', `/todos/${r.body.id}/mark_as_done`, { token: dave.token });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ id: r.body.id, state: 'done' });
    expect((await s.request('POST', `/todos/${r.body.id}/mark_as_done`, { token: bob.token })).status).toBe(404);
    expect((await s.request('POST', '/todos/999999/mark_as_done', { token: dave.token })).status).toBe(404);
    const all = await s.request('POST', '/todos/mark_as_done', { token: dave.token });
    expect(all.status).toBe(204);
    expect(await todos(dave)).toEqual([]);
  });
  it('editing a comment notifies only the people it newly mentions', async () => {
    const note = await s.request('POST', `/projects/${project.id}/issues/${issue.iid}/notes`, { token: owner.token, json: { body: 'ping @tdbob' } });
    const before = (await todos(bob)).length;
    const daveBefore = (await todos(dave)).length;
    await s.request('PUT', `/projects/${project.id}/issues/${issue.iid}/notes/${note.body.id}`, { token: owner.token, json: { body: 'ping @tdbob and @tddave' } });
    expect((await todos(bob)).length).toBe(before);
    const daves = await todos(dave);
    expect(daves.length).toBe(daveBefore + 1);
    expect(daves[0]).toMatchObject({ action_name: 'mentioned', body: 'ping @tdbob and @tddave' });
  });
});

describe('merge requests', () => {
  it('assignees and reviewers get to-dos; merging marks the merger\'s done; a Guest of a private project may not mark one', async () => {
    await commit(s, project.id, 'feature', { 'f.txt': 'x' }, { from: 'main' });
    const mr = await openMr(s, project.id, 'feature', { assignee_ids: [bob.id], reviewer_ids: [carol.id], description: 'See @tddave' }, owner.token);
    expect((await todos(bob, '?type=MergeRequest')).map((t) => t.action_name)).toEqual(['assigned']);
    const [review] = await todos(carol, '?type=MergeRequest');
    expect(review).toMatchObject({ action_name: 'review_requested', target_type: 'MergeRequest', target_url: `${s.url}/${project.path_with_namespace}/-/merge_requests/${mr.iid}` });
    expect(review.target).toMatchObject({ iid: mr.iid, merge_status: expect.any(String) });
    expect((await todos(dave, '?type=MergeRequest')).map((t) => t.action_name)).toEqual(['mentioned']);
    // Guests of a private project read no merge requests: no to-do, and marking is 403.
    expect((await s.request('POST', `/projects/${project.id}/merge_requests/${mr.iid}/todo`, { token: guest.token })).status).toBe(403);
    // A new reviewer on update.
    await s.request('PUT', `/projects/${project.id}/merge_requests/${mr.iid}`, { token: owner.token, json: { reviewer_ids: [carol.id, dave.id] } });
    expect((await todos(dave, '?type=MergeRequest')).map((t) => t.action_name)).toEqual(['review_requested', 'mentioned']);
    expect(await todos(carol, '?type=MergeRequest')).toHaveLength(1);
    // The Maintainer who merges: their to-dos on it are done, the others' stay.
    const merged = await s.request('PUT', `/projects/${project.id}/merge_requests/${mr.iid}/merge`, { token: dave.token });
    expect(merged.status, merged.text).toBe(200);
    expect(await todos(dave, '?type=MergeRequest')).toEqual([]);
    expect(await todos(carol, '?type=MergeRequest')).toHaveLength(1);
    expect(await todos(bob, '?type=MergeRequest')).toHaveLength(1);
  });
});

describe('visibility and limits', () => {
  it("hides a to-do from an internal comment once its user no longer reads internal notes", async () => {
    const rep = await s.createUser('tdrep');
    await addMember(s, project.id, rep.id, 20);
    await commit(s, project.id, 'internal-src', { 'i.txt': 'i' }, { from: 'main' });
    const mr = await openMr(s, project.id, 'internal-src', {}, owner.token);
    await s.request('POST', `/projects/${project.id}/merge_requests/${mr.iid}/notes`, { token: owner.token, json: { body: '@tdrep secret plan', internal: true } });
    expect((await todos(rep)).map((t) => t.body)).toEqual(['@tdrep secret plan']);
    await s.request('PUT', `/projects/${project.id}/members/${rep.id}`, { token: owner.token, json: { access_level: 10 } });
    expect(await todos(rep)).toEqual([]);
  });

  it('mentions of a group the author may not see give nobody a to-do; members of a shared group get theirs', async () => {
    const hiddenOwner = await s.createUser('tdhiddenowner');
    const member = await s.createUser('tdhiddenmember');
    const hidden = (await s.request('POST', '/groups', { token: hiddenOwner.token, json: { name: 'tdhidden', path: 'tdhidden', visibility: 'private' } })).body;
    await s.request('POST', `/groups/${hidden.id}/members`, { token: hiddenOwner.token, json: { user_id: member.id, access_level: 30 } });
    const own = await createProject(s, 'td-outsider-own', { token: outsider.token, visibility: 'public' });
    await s.request('POST', `/projects/${own.id}/issues`, { token: outsider.token, json: { title: 'Click here', description: 'ping @tdhidden' } });
    expect(await todos(member)).toEqual([]);
    // Shared with the private group (which its Owner here may see), the project's issues reach its members.
    await s.request('POST', `/groups/${hidden.id}/members`, { token: hiddenOwner.token, json: { user_id: owner.id, access_level: 10 } });
    expect((await s.request('POST', `/projects/${project.id}/share`, { token: owner.token, json: { group_id: hidden.id, group_access: 30 } })).status).toBe(201);
    await s.request('POST', `/projects/${project.id}/issues`, { token: owner.token, json: { title: 'For the team', assignee_ids: [member.id] } });
    expect((await todos(member)).map((t) => t.action_name)).toEqual(['assigned']);
  });
});

describe('list', () => {
  it("filters by action, type, state, project, group and author; refuses unknown values with Grape's message", async () => {
    expect((await todos(bob, '?action=assigned')).every((t) => t.action_name === 'assigned')).toBe(true);
    expect((await todos(bob, `?project_id=${project.id}`)).length).toBeGreaterThan(0);
    expect(await todos(bob, '?project_id=999999')).toEqual([]);
    expect((await todos(bob, `?author_id=${owner.id}`)).length).toBeGreaterThan(0);
    expect(await todos(bob, `?author_id=${bob.id}`)).toEqual([]);
    const ns = (await s.request('GET', `/projects/${project.id}`, { token: owner.token })).body.namespace.id;
    expect(await todos(bob, `?group_id=${ns}`)).toEqual([]);
    for (const [q, err] of [['action=nope', 'action does not have a valid value'], ['state=closed', 'state does not have a valid value'], ['type=issue', 'type does not have a valid value']]) {
      const r = await s.request('GET', `/todos?${q}`, { token: bob.token });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: err });
    }
    expect((await s.request('GET', '/todos', { token: null })).status).toBe(401);
  });

  it('hides to-dos of targets the user may no longer read, and drops those of deleted issues', async () => {
    const r = await s.request('POST', `/projects/${project.id}/issues`, { token: owner.token, json: { title: 'Temp', assignee_ids: [outsider.id] } });
    expect(await todos(outsider)).toEqual([]);
    await addMember(s, project.id, outsider.id, 30);
    await s.request('PUT', `/projects/${project.id}/issues/${r.body.iid}`, { token: owner.token, json: { description: 'hi @tdoutsider' } });
    expect((await todos(outsider)).map((t) => t.action_name)).toEqual(['mentioned']);
    const member = (await s.request('GET', `/projects/${project.id}/members/${outsider.id}`, { token: owner.token })).body;
    expect(member.id).toBe(outsider.id);
    await s.request('DELETE', `/projects/${project.id}/members/${outsider.id}`, { token: owner.token });
    expect(await todos(outsider)).toEqual([]);
    expect((await s.request('DELETE', `/projects/${project.id}/issues/${r.body.iid}`, { token: owner.token })).status).toBe(204);
    const left = await s.app.lw.db.selectFrom('todos').select('id').where('target_type', '=', 'Issue').where('target_id', '=', r.body.id).execute();
    expect(left).toEqual([]);
  });

  it("python-gitlab's and gitbeaker's to-do calls", async () => {
    const issue = (await s.request('POST', `/projects/${project.id}/issues`, { token: owner.token, json: { title: 'Client check', description: '@tdcarol' } })).body;
    const api = new Gitlab({ host: s.url, token: carol.token });
    const listed: any[] = await api.TodoLists.all({ state: 'pending' });
    const mine = listed.find((t) => t.target.id === issue.id);
    expect(mine).toMatchObject({ action_name: 'directly_addressed' });
    const done: any = await api.TodoLists.done({ todoId: mine.id });
    expect(done.state).toBe('done');
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
p = gl.projects.get(int(sys.argv[3]))
issue = p.issues.get(int(sys.argv[4]))
issue.todo()
todos = gl.todos.list(get_all=True)
marked = [t for t in todos if t.action_name == 'marked'][0]
marked.mark_as_done()
state = marked.state
gl.todos.mark_all_as_done()
print(json.dumps({'state': state, 'left': len(gl.todos.list(get_all=True))}))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, carol.token, String(project.id), String(issue.iid)]);
    expect(JSON.parse(stdout)).toEqual({ state: 'done', left: 0 });
  });
});
