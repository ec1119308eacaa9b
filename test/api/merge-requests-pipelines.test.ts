import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, addMember, commit, createProject, openMr, repo } from './mr-helpers.js';

let s: TestServer;
let bob: { id: number; token: string };
beforeAll(async () => {
  s = await startServer();
  bob = await s.createUser('bob');
});
afterAll(async () => {
  await closeServer(s);
});

describe('commit statuses make pipelines', () => {
  it('creates and updates a pipeline per sha and ref; checks input and rights', async () => {
    const p = await createProject(s, 'statuses');
    await addMember(s, p.id, bob.id, 20);
    const sha = await commit(s, p.id, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    let r = await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'running', name: 'ci/build', target_url: 'https://ci.example/1', coverage: 50 } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ sha, ref: 'feat', status: 'running', name: 'ci/build', target_url: 'https://ci.example/1', allow_failure: false, coverage: 50, author: { username: 'root' } });
    const pipelineId = r.body.pipeline_id;
    r = await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'pending', context: 'ci/test' } });
    expect(r.body.pipeline_id).toBe(pipelineId);
    let pl = await s.request('GET', `/projects/${p.id}/pipelines/${pipelineId}`);
    expect(pl.body).toMatchObject({ id: pipelineId, iid: 1, sha, ref: 'feat', status: 'running', source: 'external', tag: false });
    expect(pl.body.detailed_status.group).toBe('running');
    await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'success', name: 'ci/build' } });
    await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'failed', name: 'ci/test' } });
    pl = await s.request('GET', `/projects/${p.id}/pipelines/${pipelineId}`);
    expect(pl.body.status).toBe('failed');
    const list = await s.request('GET', `/projects/${p.id}/repository/commits/${sha}/statuses`);
    expect(list.body.map((x: any) => [x.name, x.status])).toEqual([['ci/build', 'success'], ['ci/test', 'failed']]);
    // Errors: bad state, missing state, unknown sha, reporter, outsider.
    expect((await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'weird' } })).body).toEqual({ error: 'state does not have a valid value' });
    expect((await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: {} })).body).toEqual({ message: '400 Bad request - "state" not given' });
    expect((await s.request('POST', `/projects/${p.id}/statuses/${'b'.repeat(40)}`, { json: { state: 'success' } })).body).toEqual({ message: '404 Commit Not Found' });
    expect((await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { token: bob.token, json: { state: 'success' } })).status).toBe(403);
    expect((await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { token: null, json: { state: 'success' } })).status).toBe(401);
  });
});

describe('pipelines on merge requests', () => {
  it('head_pipeline, pipeline, ci_must_pass / ci_still_running, and the pipelines endpoints', async () => {
    const p = await createProject(s, 'ci', { extra: {} });
    await s.request('PUT', `/projects/${p.id}`, { json: { only_allow_merge_if_pipeline_succeeds: true } });
    const sha = await commit(s, p.id, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, p.id, 'feat');
    expect(mr.detailed_merge_status).toBe('ci_must_pass');
    expect(mr.head_pipeline).toBeNull();
    expect(mr.pipeline).toBeNull();
    expect((await s.request('PUT', `/projects/${p.id}/merge_requests/${mr.iid}/merge`)).status).toBe(405);
    await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'running', ref: 'feat' } });
    let got = await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}`);
    expect(got.body.detailed_merge_status).toBe('ci_still_running');
    expect(got.body.pipeline).toMatchObject({ sha, ref: 'feat', status: 'running' });
    expect(got.body.head_pipeline).toMatchObject({ sha, status: 'running', user: { username: 'root' } });
    const lst = await s.request('GET', `/projects/${p.id}/merge_requests`);
    expect(lst.body[0].detailed_merge_status).toBe('ci_still_running');
    const created = await s.request('POST', `/projects/${p.id}/merge_requests/${mr.iid}/pipelines`);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sha, ref: `refs/merge-requests/${mr.iid}/head`, status: 'created', source: 'merge_request_event' });
    const pls = await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}/pipelines`);
    expect(pls.body.map((x: any) => x.ref)).toEqual([`refs/merge-requests/${mr.iid}/head`, 'feat']);
    expect(Object.keys(pls.body[0]).slice(0, 6)).toEqual(['id', 'iid', 'project_id', 'sha', 'ref', 'status']);
    await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'success', ref: `refs/merge-requests/${mr.iid}/head` } });
    got = await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}`);
    expect(got.body.detailed_merge_status).toBe('mergeable');
    expect(got.body.head_pipeline.status).toBe('success');
  });

  it('auto-merge waits for the pipeline and merges when it succeeds; cancel stops it', async () => {
    const p = await createProject(s, 'auto');
    await s.request('PUT', `/projects/${p.id}`, { json: { only_allow_merge_if_pipeline_succeeds: true } });
    const sha = await commit(s, p.id, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, p.id, 'feat');
    await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'pending', ref: 'feat' } });
    let r = await s.request('PUT', `/projects/${p.id}/merge_requests/${mr.iid}/merge`, { json: { merge_when_pipeline_succeeds: true } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ state: 'opened', merge_when_pipeline_succeeds: true, merge_user: { username: 'root' } });
    // Cancel and set again (auto_merge spelling).
    r = await s.request('POST', `/projects/${p.id}/merge_requests/${mr.iid}/cancel_merge_when_pipeline_succeeds`);
    expect(r.status).toBe(201);
    expect(r.body.merge_when_pipeline_succeeds).toBe(false);
    r = await s.request('POST', `/projects/${p.id}/merge_requests/${mr.iid}/cancel_merge_when_pipeline_succeeds`);
    expect(r.status).toBe(406);
    r = await s.request('PUT', `/projects/${p.id}/merge_requests/${mr.iid}/merge`, { json: { auto_merge: true, should_remove_source_branch: true } });
    expect(r.body.merge_when_pipeline_succeeds).toBe(true);
    const before = await repo(s, p.id).branchSha('main');
    await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'running', ref: 'feat' } });
    expect(await repo(s, p.id).branchSha('main')).toBe(before);
    await s.request('POST', `/projects/${p.id}/statuses/${sha}`, { json: { state: 'success', ref: 'feat' } });
    const got = await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}`);
    expect(got.body).toMatchObject({ state: 'merged', merge_when_pipeline_succeeds: false });
    expect(await repo(s, p.id).branchSha('main')).toBe(got.body.merge_commit_sha);
    expect(await repo(s, p.id).branchSha('feat')).toBeNull();
  });

  it('auto-merge follows a push made after it was set', async () => {
    const p = await createProject(s, 'auto-push');
    const first = await commit(s, p.id, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, p.id, 'feat');
    await s.request('POST', `/projects/${p.id}/statuses/${first}`, { json: { state: 'running', ref: 'feat' } });
    expect((await s.request('PUT', `/projects/${p.id}/merge_requests/${mr.iid}/merge`, { json: { auto_merge: true } })).body.merge_when_pipeline_succeeds).toBe(true);
    const second = await commit(s, p.id, 'feat', { 'b.txt': 'b' });
    await s.request('POST', `/projects/${p.id}/statuses/${first}`, { json: { state: 'success', ref: 'feat' } });
    expect((await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}`)).body.state).toBe('opened');
    await s.request('POST', `/projects/${p.id}/statuses/${second}`, { json: { state: 'success', ref: 'feat' } });
    const got = await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}`);
    expect(got.body).toMatchObject({ state: 'merged', sha: second });
  });

  it('auto_merge without a running pipeline merges at once', async () => {
    const p = await createProject(s, 'auto-now');
    await commit(s, p.id, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, p.id, 'feat');
    const r = await s.request('PUT', `/projects/${p.id}/merge_requests/${mr.iid}/merge`, { json: { auto_merge: true } });
    expect(r.body.state).toBe('merged');
  });
});
