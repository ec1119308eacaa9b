import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, addMember, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let pid: number;
let otherPid: number;
let alice: { id: number; token: string };
let bob: { id: number; token: string };
let eve: { id: number; token: string };
beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  eve = await s.createUser('eve');
  pid = (await createProject(s, 'extras')).id;
  otherPid = (await createProject(s, 'other')).id;
  await addMember(s, pid, alice.id, 30);
  await addMember(s, pid, bob.id, 20);
  for (const b of ['x1', 'x2', 'x3']) await commit(s, pid, b, { [`${b}.txt`]: b }, { from: 'main' });
  await commit(s, otherPid, 'o1', { 'o.txt': 'o' }, { from: 'main' });
});
afterAll(async () => {
  await closeServer(s);
});

describe('blocks', () => {
  it('an open blocking request prevents the merge; errors of §4.3', async () => {
    const blocked = await openMr(s, pid, 'x1');
    const blocking = await openMr(s, pid, 'x2');
    const foreign = await openMr(s, otherPid, 'o1');
    let r = await s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { json: {} });
    expect(r.body).toEqual({ error: 'blocking_merge_request_id, blocking_merge_request_iid are missing, at least one parameter must be provided' });
    r = await s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { json: { blocking_merge_request_iid: 999 } });
    expect(r.status).toBe(404);
    r = await s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { json: { blocking_merge_request_iid: blocked.iid } });
    expect(r.status).toBe(400);
    r = await s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { json: { blocking_merge_request_iid: blocking.iid } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['id', 'blocking_merge_request', 'project_id']);
    expect(r.body.blocking_merge_request.iid).toBe(blocking.iid);
    const blockId = r.body.id;
    r = await s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { json: { blocking_merge_request_id: blocking.id } });
    expect([r.status, r.body]).toEqual([409, { message: 'Block already exists' }]);
    // Alice cannot read the other project: 403 (it exists) from blocking_merge_request_id.
    r = await s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { token: alice.token, json: { blocking_merge_request_id: foreign.id } });
    expect(r.status).toBe(403);
    r = await s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { token: bob.token, json: { blocking_merge_request_iid: blocking.iid } });
    expect(r.status).toBe(403);
    r = await s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { json: { blocking_merge_request_iid: foreign.iid, blocking_project_id: otherPid } });
    expect(r.status).toBe(201);
    const list = await s.request('GET', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`);
    expect(list.body).toHaveLength(2);
    expect(list.body[0].blocked_merge_request.iid).toBe(blocked.iid);
    const blockees = await s.request('GET', `/projects/${pid}/merge_requests/${blocking.iid}/blockees`);
    expect(blockees.body.map((b: any) => b.blocked_merge_request.iid)).toEqual([blocked.iid]);
    const got = await s.request('GET', `/projects/${pid}/merge_requests/${blocked.iid}`);
    expect(got.body.detailed_merge_status).toBe('merge_request_blocked');
    expect((await s.request('PUT', `/projects/${pid}/merge_requests/${blocked.iid}/merge`)).status).toBe(405);
    // Delete: 403 for a reporter, 404 for an unknown block, 204 then mergeable after the other is closed.
    expect((await s.request('DELETE', `/projects/${pid}/merge_requests/${blocked.iid}/blocks/${blockId}`, { token: bob.token })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${pid}/merge_requests/${blocked.iid}/blocks/99999`)).status).toBe(404);
    expect((await s.request('DELETE', `/projects/${pid}/merge_requests/${blocked.iid}/blocks/${blockId}`)).status).toBe(204);
    await s.request('PUT', `/projects/${otherPid}/merge_requests/${foreign.iid}`, { json: { state_event: 'close' } });
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${blocked.iid}`)).body.detailed_merge_status).toBe('mergeable');
  });
});

describe('approvals and award emoji', () => {
  it('approve, unapprove, counts', async () => {
    const mr = await openMr(s, pid, 'x3');
    let r = await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/approve`, { token: alice.token });
    expect(r.status).toBe(201);
    expect(r.body.approved_by.map((a: any) => a.user.username)).toEqual(['alice']);
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/approve`, { token: alice.token })).status).toBe(401);
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/approve`, { token: bob.token })).status).toBe(401);
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/approve`, { token: eve.token })).status).toBe(404);
    r = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/approvals`);
    expect(r.body.approved).toBe(true);
    r = await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/unapprove`, { token: alice.token });
    expect(r.body.approved_by).toEqual([]);
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/unapprove`, { token: alice.token })).status).toBe(404);

    r = await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/award_emoji`, { token: bob.token, json: { name: 'thumbsup' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'thumbsup', awardable_type: 'MergeRequest', user: { username: 'bob' } });
    const awardId = r.body.id;
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/award_emoji`, { token: bob.token, json: { name: 'thumbsup' } })).status).toBe(400);
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/award_emoji`, { json: { name: '<b>' } })).status).toBe(400);
    await s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/award_emoji`, { json: { name: 'thumbsdown' } });
    let got = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`);
    expect([got.body.upvotes, got.body.downvotes]).toEqual([1, 1]);
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/award_emoji`)).body).toHaveLength(2);
    // Someone else's award: GitLab's unauthorized! (401).
    expect((await s.request('DELETE', `/projects/${pid}/merge_requests/${mr.iid}/award_emoji/${awardId}`, { token: alice.token })).status).toBe(401);
    expect((await s.request('DELETE', `/projects/${pid}/merge_requests/${mr.iid}/award_emoji/${awardId}`, { token: bob.token })).status).toBe(204);
    got = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`);
    expect(got.body.upvotes).toBe(0);
  });
});

describe('labels, milestones and deployments APIs', () => {
  it('labels: create, duplicate, update, delete, rights', async () => {
    let r = await s.request('POST', `/projects/${pid}/labels`, { json: { name: 'feature', color: '#00ff00', description: 'New', priority: 1 } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'feature', color: '#00ff00', description: 'New', priority: 1, is_project_label: true });
    expect((await s.request('POST', `/projects/${pid}/labels`, { json: { name: 'feature', color: '#00ff00' } })).status).toBe(409);
    expect((await s.request('POST', `/projects/${pid}/labels`, { json: { name: 'x', color: 'nope' } })).body).toEqual({ message: { color: ['must be a valid color code'] } });
    expect((await s.request('POST', `/projects/${pid}/labels`, { json: { name: 'x' } })).body).toEqual({ message: '400 Bad request - "color" not given' });
    expect((await s.request('POST', `/projects/${pid}/labels`, { token: eve.token, json: { name: 'x', color: 'red' } })).status).toBe(404);
    r = await s.request('PUT', `/projects/${pid}/labels/feature`, { json: { new_name: 'feat' } });
    expect(r.body.name).toBe('feat');
    expect((await s.request('DELETE', `/projects/${pid}/labels/${r.body.id}`)).status).toBe(204);
    expect((await s.request('GET', `/projects/${pid}/labels/${r.body.id}`)).body).toEqual({ message: '404 Label Not Found' });
  });

  it("a project's labels include its groups' (include_ancestor_groups, on by default); writes reach only its own", async () => {
    const top = await s.request('POST', '/groups', { json: { name: 'Lbl Top', path: 'lbl-top' } });
    const sub = await s.request('POST', '/groups', { json: { name: 'Lbl Sub', path: 'lbl-sub', parent_id: top.body.id } });
    const project = await createProject(s, 'lbl-proj', { extra: { namespace_id: sub.body.id } });
    await s.request('POST', `/groups/${top.body.id}/labels`, { json: { name: 'from-top', color: '#111111' } });
    await s.request('POST', `/groups/${sub.body.id}/labels`, { json: { name: 'from-sub', color: '#222222' } });
    await s.request('POST', `/projects/${project.id}/labels`, { json: { name: 'own', color: '#333333' } });
    const all = await s.request('GET', `/projects/${project.id}/labels`);
    expect(all.body.map((l: any) => [l.name, l.is_project_label])).toEqual([['from-sub', false], ['from-top', false], ['own', true]]);
    expect((await s.request('GET', `/projects/${project.id}/labels`, { query: { include_ancestor_groups: false } })).body.map((l: any) => l.name)).toEqual(['own']);
    expect((await s.request('GET', `/groups/${sub.body.id}/labels`)).body.map((l: any) => l.name)).toEqual(['from-sub', 'from-top']);
    expect((await s.request('GET', `/groups/${sub.body.id}/labels`, { query: { include_ancestor_groups: false } })).body.map((l: any) => l.name)).toEqual(['from-sub']);
    expect((await s.request('GET', `/groups/${top.body.id}/labels`)).body.map((l: any) => l.name)).toEqual(['from-top']);
    const one = await s.request('GET', `/projects/${project.id}/labels/from-top`);
    expect(one.body).toMatchObject({ name: 'from-top', is_project_label: false });
    // Updating or deleting through the project reaches its own labels only (GitLab: include_ancestor_groups false).
    expect((await s.request('PUT', `/projects/${project.id}/labels/from-top`, { json: { color: '#444444' } })).status).toBe(404);
    expect((await s.request('DELETE', `/projects/${project.id}/labels/from-top`)).status).toBe(404);
  });

  it('milestones: project and group, update, close, merge requests', async () => {
    const g = await s.request('POST', '/groups', { json: { name: 'mg', path: 'mg' } });
    let r = await s.request('POST', `/groups/${g.body.id}/milestones`, { json: { title: 'Q1', start_date: '2030-01-01', due_date: '2030-03-31' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ iid: 1, group_id: g.body.id, title: 'Q1', state: 'active', web_url: `${s.url}/groups/mg/-/milestones/1` });
    expect(r.body.project_id).toBeUndefined();
    r = await s.request('POST', `/projects/${pid}/milestones`, { json: { title: 'R1' } });
    const mid = r.body.id;
    expect((await s.request('POST', `/projects/${pid}/milestones`, { json: {} })).body).toEqual({ message: '400 Bad request - "title" not given' });
    expect((await s.request('POST', `/projects/${pid}/milestones`, { json: { title: 'R2', due_date: '2030-13-01' } })).body).toEqual({ error: 'due_date is invalid' });
    expect((await s.request('POST', `/projects/${pid}/milestones`, { token: bob.token, json: { title: 'R3' } })).status).toBe(201);
    r = await s.request('PUT', `/projects/${pid}/milestones/${mid}`, { json: { state_event: 'close', due_date: '2000-01-01' } });
    expect(r.body).toMatchObject({ state: 'closed', expired: true });
    await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: { milestone_id: mid } });
    r = await s.request('GET', `/projects/${pid}/milestones/${mid}/merge_requests`);
    expect(r.body.map((m: any) => m.iid)).toEqual([1]);
    expect((await s.request('GET', `/projects/${pid}/milestones`, { query: { state: 'closed' } })).body.map((m: any) => m.title)).toEqual(['R1']);
    expect((await s.request('DELETE', `/projects/${pid}/milestones/${mid}`)).status).toBe(204);
    expect((await s.request('GET', `/projects/${pid}/merge_requests/1`)).body.milestone).toBeNull();
  });

  it('deployments: record, update, list, errors', async () => {
    const sha = (await s.request('GET', `/projects/${pid}/merge_requests/1`)).body.sha;
    let r = await s.request('POST', `/projects/${pid}/deployments`, { json: { environment: 'staging', sha, ref: 'x1', tag: false, status: 'running' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ iid: 1, ref: 'x1', sha, status: 'running', environment: { name: 'staging' } });
    r = await s.request('PUT', `/projects/${pid}/deployments/${r.body.id}`, { json: { status: 'success' } });
    expect(r.body.status).toBe('success');
    expect((await s.request('GET', `/projects/${pid}/deployments`, { query: { environment: 'staging' } })).body).toHaveLength(1);
    expect((await s.request('POST', `/projects/${pid}/deployments`, { json: { environment: 'x' } })).body).toEqual({ message: '400 Bad request - "sha" not given' });
    expect((await s.request('POST', `/projects/${pid}/deployments`, { token: bob.token, json: { environment: 'x', sha, ref: 'x', tag: false, status: 'success' } })).status).toBe(403);
    expect((await s.request('GET', `/projects/${pid}/deployments/999`)).body).toEqual({ message: '404 Deployment Not Found' });
  });
});

describe('time tracking', () => {
  it('estimate and spent time feed time_stats', async () => {
    const P = `/projects/${pid}/merge_requests/1`;
    let r = await s.request('POST', `${P}/time_estimate`, { json: { duration: '1d 2h' } });
    expect([r.status, r.body]).toEqual([201, { time_estimate: 36000, total_time_spent: 0, human_time_estimate: '1d 2h', human_total_time_spent: null }]);
    r = await s.request('POST', `${P}/add_spent_time`, { json: { duration: '30m', summary: 'review' } });
    expect(r.body.total_time_spent).toBe(1800);
    r = await s.request('POST', `${P}/add_spent_time`, { json: { duration: '-10m' } });
    expect(r.body.human_total_time_spent).toBe('20m');
    expect((await s.request('GET', P)).body.time_stats).toEqual({ time_estimate: 36000, total_time_spent: 1200, human_time_estimate: '1d 2h', human_total_time_spent: '20m' });
    expect((await s.request('POST', `${P}/time_estimate`, { json: { duration: 'soon' } })).status).toBe(400);
    expect((await s.request('POST', `${P}/time_estimate`, { json: {} })).body).toEqual({ message: '400 Bad request - "duration" not given' });
    expect((await s.request('POST', `${P}/time_estimate`, { token: bob.token, json: { duration: '1h' } })).status).toBe(403);
    r = await s.request('POST', `${P}/reset_spent_time`);
    expect(r.body.total_time_spent).toBe(0);
    r = await s.request('POST', `${P}/reset_time_estimate`);
    expect((await s.request('GET', `${P}/time_stats`)).body).toEqual({ time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null });
  });
});
