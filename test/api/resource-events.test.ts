// Resource events: the label, milestone and state history of merge requests and issues, as
// GitLab's resource_*_events APIs show it: labels and milestones given at creation and changed
// later, closes, reopens and merges, issues closed by a commit or by a merge request; who may
// read it; python-gitlab's calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let outsider: U;
let project: { id: number; path_with_namespace: string; default_branch: string };
let m1: any;
let m2: any;

const base = () => `/projects/${project.id}`;

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('reowner');
  dev = await s.createUser('redev');
  outsider = await s.createUser('reoutsider');
  project = await createProject(s, 'history', { token: owner.token });
  await addMember(s, project.id, dev.id, 30);
  m1 = (await s.request('POST', `${base()}/milestones`, { token: owner.token, json: { title: 'v1' } })).body;
  m2 = (await s.request('POST', `${base()}/milestones`, { token: owner.token, json: { title: 'v2' } })).body;
}, 60_000);

afterAll(async () => closeServer(s));

describe('resource events', () => {
  it("records a merge request's labels, milestone and states, in GitLab's entities", async () => {
    await commit(s, project.id, 'feature', { 'f.txt': 'f' }, { from: 'main' });
    const mr = await openMr(s, project.id, 'feature', { labels: 'bug,ui', milestone_id: m1.id }, dev.token);
    const put = (json: Record<string, unknown>) => s.request('PUT', `${base()}/merge_requests/${mr.iid}`, { token: dev.token, json });
    expect((await put({ remove_labels: 'bug', add_labels: 'docs' })).status).toBe(200);
    expect((await put({ milestone_id: m2.id })).status).toBe(200);
    expect((await put({ state_event: 'close' })).status).toBe(200);
    expect((await put({ state_event: 'reopen' })).status).toBe(200);
    expect((await s.request('PUT', `${base()}/merge_requests/${mr.iid}/merge`, { token: owner.token })).status).toBe(200);

    const labels = await s.request('GET', `${base()}/merge_requests/${mr.iid}/resource_label_events`, { token: dev.token });
    expect(labels.body.map((e: any) => [e.action, e.label.name, e.user.username])).toEqual([
      ['add', 'bug', 'redev'],
      ['add', 'ui', 'redev'],
      ['add', 'docs', 'redev'],
      ['remove', 'bug', 'redev'],
    ]);
    expect(Object.keys(labels.body[0])).toEqual(['id', 'user', 'created_at', 'resource_type', 'resource_id', 'label', 'action']);
    expect(labels.body[0]).toMatchObject({ resource_type: 'MergeRequest', resource_id: mr.id });
    expect(Object.keys(labels.body[0].label)).toEqual(['id', 'name', 'color', 'description', 'description_html', 'text_color']);

    const milestones = await s.request('GET', `${base()}/merge_requests/${mr.iid}/resource_milestone_events`, { token: dev.token });
    expect(milestones.body.map((e: any) => [e.action, e.milestone.title, e.state])).toEqual([
      ['add', 'v1', 'opened'],
      ['remove', 'v1', 'opened'],
      ['add', 'v2', 'opened'],
    ]);
    expect(Object.keys(milestones.body[0])).toEqual(['id', 'user', 'created_at', 'resource_type', 'resource_id', 'milestone', 'action', 'state']);

    const states = await s.request('GET', `${base()}/merge_requests/${mr.iid}/resource_state_events`, { token: dev.token });
    expect(states.body.map((e: any) => [e.state, e.user.username])).toEqual([
      ['closed', 'redev'],
      ['reopened', 'redev'],
      ['merged', 'reowner'],
    ]);
    expect(Object.keys(states.body[0])).toEqual(['id', 'user', 'created_at', 'resource_type', 'resource_id', 'source_commit', 'source_merge_request_id', 'state']);
    const one = await s.request('GET', `${base()}/merge_requests/${mr.iid}/resource_state_events/${states.body[2].id}`, { token: dev.token });
    expect(one.body).toEqual(states.body[2]);
    expect((await s.request('GET', `${base()}/merge_requests/${mr.iid}/resource_state_events/${labels.body[0].id}`, { token: dev.token })).body).toEqual({ message: '404 Not found' });
    expect((await s.request('GET', `${base()}/merge_requests/${mr.iid}/resource_state_events/abc`, { token: dev.token })).body).toEqual({ message: '404 Not found' });
  });

  it('records issues closed by a commit and by a merge request, with what closed them', async () => {
    const a = (await s.request('POST', `${base()}/issues`, { token: dev.token, json: { title: 'A', labels: 'bug' } })).body;
    const b = (await s.request('POST', `${base()}/issues`, { token: dev.token, json: { title: 'B' } })).body;
    const sha = (await s.request('POST', `${base()}/repository/commits`, { token: owner.token, json: { branch: 'main', commit_message: `Fix things\n\nCloses #${a.iid}`, actions: [{ action: 'create', file_path: 'fix.txt', content: 'x' }] } })).body.id;
    await commit(s, project.id, 'closer', { 'c.txt': 'c' }, { from: 'main' });
    const mr = await openMr(s, project.id, 'closer', { description: `Closes #${b.iid}` }, dev.token);
    expect((await s.request('PUT', `${base()}/merge_requests/${mr.iid}/merge`, { token: owner.token })).status).toBe(200);
    const sa = await s.request('GET', `${base()}/issues/${a.iid}/resource_state_events`, { token: dev.token });
    expect(sa.body.map((e: any) => [e.state, e.source_commit, e.source_merge_request_id, e.resource_type, e.user.username])).toEqual([['closed', sha, null, 'Issue', 'reowner']]);
    const sb = await s.request('GET', `${base()}/issues/${b.iid}/resource_state_events`, { token: dev.token });
    expect(sb.body.map((e: any) => [e.state, e.source_commit, e.source_merge_request_id, e.user.username])).toEqual([['closed', null, mr.id, 'reowner']]);
    expect((await s.request('GET', `${base()}/issues/${a.iid}/resource_label_events`, { token: dev.token })).body.map((e: any) => [e.action, e.label.name])).toEqual([['add', 'bug']]);
    // Reopened by hand, then closed by hand.
    await s.request('PUT', `${base()}/issues/${a.iid}`, { token: dev.token, json: { state_event: 'reopen', milestone_id: m1.id } });
    await s.request('PUT', `${base()}/issues/${a.iid}`, { token: dev.token, json: { state_event: 'close' } });
    expect((await s.request('GET', `${base()}/issues/${a.iid}/resource_state_events`, { token: dev.token })).body.map((e: any) => e.state)).toEqual(['closed', 'reopened', 'closed']);
    expect((await s.request('GET', `${base()}/issues/${a.iid}/resource_milestone_events`, { token: dev.token })).body.map((e: any) => [e.action, e.milestone.title, e.state])).toEqual([['add', 'v1', 'opened']]);
  });

  it('is for signed-in callers who may read the issue or merge request; a deleted label hides its events', async () => {
    const path = `${base()}/issues/1/resource_label_events`;
    expect((await s.request('GET', path, { token: null })).status).toBe(401);
    expect((await s.request('GET', path, { token: outsider.token })).body).toEqual({ message: '404 Project Not Found' });
    expect((await s.request('GET', `${base()}/issues/999/resource_label_events`, { token: dev.token })).status).toBe(404);
    const events = (await s.request('GET', path, { token: dev.token })).body;
    const bug = events[0].label.id;
    expect((await s.request('DELETE', `${base()}/labels/${bug}`, { token: owner.token })).status).toBe(204);
    expect((await s.request('GET', path, { token: dev.token })).body).toEqual([]);
    expect((await s.request('GET', `${path}/${events[0].id}`, { token: dev.token })).body).toEqual({ message: '404 ResourceLabelEvent Not Found' });
  });

  it("never shows a group's labels or milestones to those who may not see the group", async () => {
    const g = (await s.request('POST', '/groups', { token: owner.token, json: { name: 'Secret', path: 'secret-re', visibility: 'private' } })).body;
    await s.request('POST', `/groups/${g.id}/labels`, { token: owner.token, json: { name: 'acquisition', color: '#123456', description: 'secret plan' } });
    const gm = (await s.request('POST', `/groups/${g.id}/milestones`, { token: owner.token, json: { title: 'launch' } })).body;
    const p = await createProject(s, 'moved', { token: owner.token, extra: { namespace_id: g.id } });
    const issue = (await s.request('POST', `/projects/${p.id}/issues`, { token: owner.token, json: { title: 'x', labels: 'acquisition', milestone_id: gm.id } })).body;
    await s.request('PUT', `/projects/${p.id}/issues/${issue.iid}`, { token: owner.token, json: { labels: '', milestone_id: 0 } });
    // Moved out of the private group and made public: its events still name the group's label and milestone.
    expect((await s.request('PUT', `/projects/${p.id}/transfer`, { token: owner.token, json: { namespace: owner.username } })).status).toBe(200);
    expect((await s.request('PUT', `/projects/${p.id}`, { token: owner.token, json: { visibility: 'public' } })).status).toBe(200);
    const mine = await s.request('GET', `/projects/${p.id}/issues/${issue.iid}/resource_label_events`, { token: owner.token });
    expect(mine.body.map((e: any) => [e.action, e.label.name])).toEqual([['add', 'acquisition'], ['remove', 'acquisition']]);
    const theirs = await s.request('GET', `/projects/${p.id}/issues/${issue.iid}/resource_label_events`, { token: outsider.token });
    expect([theirs.status, theirs.body]).toEqual([200, []]);
    expect((await s.request('GET', `/projects/${p.id}/issues/${issue.iid}/resource_milestone_events`, { token: outsider.token })).body).toEqual([]);
    expect((await s.request('GET', `/projects/${p.id}/issues/${issue.iid}/resource_milestone_events`, { token: owner.token })).body.map((e: any) => e.milestone.title)).toEqual(['launch', 'launch']);
  });

  it('records a thousand label changes at once', async () => {
    const p = await createProject(s, 'many-labels', { token: owner.token });
    const issue = (await s.request('POST', `/projects/${p.id}/issues`, { token: owner.token, json: { title: 'x', labels: Array.from({ length: 1000 }, (_, k) => `a${k}`).join(',') } })).body;
    const r = await s.request('PUT', `/projects/${p.id}/issues/${issue.iid}`, { token: owner.token, json: { labels: Array.from({ length: 1000 }, (_, k) => `b${k}`).join(','), add_labels: Array.from({ length: 1000 }, (_, k) => `c${k}`).join(',') } });
    expect(r.status).toBe(200);
    const page = await s.request('GET', `/projects/${p.id}/issues/${issue.iid}/resource_label_events`, { token: owner.token, query: { per_page: 100, page: 40 } });
    expect(page.headers.get('x-total')).toBe('4000');
    expect(page.body.map((e: any) => e.action)).toEqual(Array(100).fill('remove'));
  }, 60_000);

  it("answers python-gitlab's calls", async () => {
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
p = gl.projects.get(int(sys.argv[3]))
mr = p.mergerequests.get(1)
issue = p.issues.get(2)
print(json.dumps({
  'labels': [e.action + ':' + e.label['name'] for e in mr.resourcelabelevents.list(get_all=True)],
  'milestones': [e.milestone['title'] for e in mr.resourcemilestoneevents.list(get_all=True)],
  'states': [e.state for e in issue.resourcestateevents.list(get_all=True)],
}))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, dev.token, String(project.id)]);
    expect(JSON.parse(stdout)).toEqual({ labels: ['add:ui', 'add:docs'], milestones: ['v1', 'v1', 'v2'], states: ['closed'] });
  });
});
