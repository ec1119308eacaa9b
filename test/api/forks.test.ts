// Forks: POST /projects/:id/fork (a real copy of the repository), the fork relation in the project
// entity, GET /projects/:id/forks, linking and unlinking, and merge requests from a fork into its
// upstream (created, updated by pushes to the fork, diffed, merged) as GitLab clients use them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/git.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, commit, createProject, repo } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let alice: U; // owns upstream
let bob: U; // forks it
let carol: U; // outsider
let upstream: { id: number; path_with_namespace: string; default_branch: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  carol = await s.createUser('carol');
  upstream = await createProject(s, 'up', { token: alice.token, visibility: 'public' });
  await commit(s, upstream.id, 'feature', { 'f.txt': 'feature\n' }, { from: 'main' });
  const tag = await s.request('POST', `/projects/${upstream.id}/repository/tags`, { token: alice.token, json: { tag_name: 'v1', ref: 'main' } });
  expect(tag.status).toBe(201);
}, 60_000);

afterAll(async () => closeServer(s));

async function fork(token: string, id: number, json: Record<string, unknown> = {}) {
  return s.request('POST', `/projects/${id}/fork`, { token, json });
}

describe('forking a project', () => {
  let forked: any;

  it('copies the repository with its branches and tags into the caller\'s namespace', async () => {
    const r = await fork(bob.token, upstream.id);
    expect(r.status, r.text).toBe(201);
    forked = r.body;
    expect(forked.path_with_namespace).toBe('bob/up');
    expect(forked.name).toBe('up');
    expect(forked.default_branch).toBe('main');
    expect(forked.visibility).toBe('public');
    expect(forked.import_status).toBe('finished');
    expect(forked.forked_from_project).toMatchObject({ id: upstream.id, path_with_namespace: 'alice/up', name_with_namespace: 'alice / up' });
    expect(forked.mr_default_target_self).toBe(false);
    expect(forked.permissions.project_access.access_level).toBe(50);
    const keys = Object.keys(forked);
    expect(keys.indexOf('forked_from_project')).toBe(keys.indexOf('namespace') + 1);
    expect(keys.indexOf('mr_default_target_self')).toBe(keys.indexOf('creator_id') + 1);

    const branches = await s.request('GET', `/projects/${forked.id}/repository/branches`, { token: bob.token });
    expect(branches.body.map((b: any) => b.name).sort()).toEqual(['feature', 'main']);
    const tags = await s.request('GET', `/projects/${forked.id}/repository/tags`, { token: bob.token });
    expect(tags.body.map((t: any) => t.name)).toEqual(['v1']);
    expect(await repo(s, forked.id).branchSha('main')).toBe(await repo(s, upstream.id).branchSha('main'));
    // The default branch is protected, as in any new project with commits.
    const prot = await s.request('GET', `/projects/${forked.id}/protected_branches`, { token: bob.token });
    expect(prot.body.map((p: any) => p.name)).toEqual(['main']);
  });

  it('counts forks on the upstream and lists them', async () => {
    const up = await s.request('GET', `/projects/${upstream.id}`, { token: alice.token });
    expect(up.body.forks_count).toBe(1);
    expect(up.body).not.toHaveProperty('forked_from_project');
    expect(up.body).not.toHaveProperty('mr_default_target_self');
    const list = await s.request('GET', `/projects/${upstream.id}/forks`, { token: carol.token });
    expect(list.status).toBe(200);
    expect(list.body.map((p: any) => p.id)).toEqual([forked.id]);
    expect(list.headers.get('x-total')).toBe('1');
    const simple = await s.request('GET', `/projects/${upstream.id}/forks`, { token: carol.token, query: { simple: true } });
    expect(Object.keys(simple.body[0])).not.toContain('permissions');
  });

  it('is a real repository: clone, push to the fork, and the upstream is unchanged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labwright-fork-'));
    try {
      const url = new URL(`${s.url}/bob/up.git`);
      url.username = 'bob';
      url.password = bob.token;
      await git(dir, 'clone', '--quiet', url.toString(), 'w');
      const w = join(dir, 'w');
      writeFileSync(join(w, 'new.txt'), 'from the fork\n');
      await git(w, 'add', 'new.txt');
      await git(w, 'commit', '--quiet', '-m', 'fork change');
      await git(w, 'push', '--quiet', 'origin', 'HEAD:refs/heads/topic');
      expect(await repo(s, forked.id).branchSha('topic')).toMatch(/^[0-9a-f]{40}$/);
      expect(await repo(s, upstream.id).branchSha('topic')).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a second fork into the same namespace with 409 and full messages', async () => {
    const r = await fork(bob.token, upstream.id);
    expect(r.status).toBe(409);
    expect(r.body.message).toEqual(expect.arrayContaining(['Name has already been taken', 'Path has already been taken']));
  });

  it('takes name, path, description, visibility (never above the source) and one branch', async () => {
    const r = await fork(bob.token, upstream.id, { name: 'Up Two', path: 'up-two', description: 'second', visibility: 'private', branches: 'feature', mr_default_target_self: true });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ name: 'Up Two', path: 'up-two', description: 'second', visibility: 'private', default_branch: 'feature', mr_default_target_self: true });
    const branches = await s.request('GET', `/projects/${r.body.id}/repository/branches`, { token: bob.token });
    expect(branches.body.map((b: any) => b.name)).toEqual(['feature']);
    const tags = await s.request('GET', `/projects/${r.body.id}/repository/tags`, { token: bob.token });
    expect(tags.body).toEqual([]);
    // A fork of a private fork cannot be public.
    const again = await fork(bob.token, r.body.id, { path: 'up-three', name: 'up three', visibility: 'public' });
    expect(again.status, again.text).toBe(201);
    expect(again.body.visibility).toBe('private');
    expect(again.body.forked_from_project.id).toBe(r.body.id);
    const del = await s.request('DELETE', `/projects/${again.body.id}`, { token: bob.token });
    expect(del.status).toBe(202);
    const del2 = await s.request('DELETE', `/projects/${r.body.id}`, { token: bob.token });
    expect(del2.status).toBe(202);
  });

  it('answers GitLab\'s errors for bad targets, branches and callers', async () => {
    expect((await fork(bob.token, upstream.id, { branches: 'nope' })).body).toEqual({ message: '404 Source Branch Not Found' });
    expect((await fork(bob.token, upstream.id, { namespace_path: 'alice', path: 'x1', name: 'x1' })).body).toEqual({ message: '404 Target Namespace Not Found' });
    expect((await fork(bob.token, upstream.id, { namespace_id: 999999 })).body).toEqual({ message: '404 Namespace Not Found' });
    expect((await fork(bob.token, upstream.id, { visibility: 'secret' })).status).toBe(400);
    expect((await s.request('POST', `/projects/${upstream.id}/fork`, { token: null })).status).toBe(401);
    const priv = await createProject(s, 'secret', { token: alice.token });
    expect((await fork(carol.token, priv.id)).body).toEqual({ message: '404 Project Not Found' });
    const noFork = await s.request('PUT', `/projects/${upstream.id}`, { token: alice.token, json: { forking_access_level: 'disabled' } });
    expect(noFork.status).toBe(200);
    expect((await fork(carol.token, upstream.id)).body).toEqual({ message: '404 Not found' });
    await s.request('PUT', `/projects/${upstream.id}`, { token: alice.token, json: { forking_access_level: 'enabled' } });
    // Nothing was created by any of these.
    const carolProjects = await s.request('GET', '/projects', { token: carol.token, query: { owned: true } });
    expect(carolProjects.body).toEqual([]);
  });

  it('forks into a group the caller may create projects in', async () => {
    const g = await s.request('POST', '/groups', { token: carol.token, json: { name: 'cg', path: 'cg', visibility: 'public' } });
    expect(g.status).toBe(201);
    const r = await fork(carol.token, upstream.id, { namespace_id: g.body.id });
    expect(r.status, r.text).toBe(201);
    expect(r.body.path_with_namespace).toBe('cg/up');
    const list = await s.request('GET', `/projects/${upstream.id}/forks`, { token: alice.token });
    expect(list.body.map((p: any) => p.path_with_namespace).sort()).toEqual(['bob/up', 'cg/up']);
    expect((await fork(bob.token, upstream.id, { namespace: 'cg' })).body).toEqual({ message: '404 Target Namespace Not Found' });
  });
});

describe('merge requests from a fork', () => {
  let fork1: any;
  let mr: any;

  beforeAll(async () => {
    const r = await fork(bob.token, upstream.id, { path: 'mrfork', name: 'mrfork' });
    expect(r.status, r.text).toBe(201);
    fork1 = r.body;
    await commit(s, fork1.id, 'topic', { 'topic.txt': 'one\n' }, { from: 'main' });
  });

  it('opens in the upstream with the fork as source, and the diff made there', async () => {
    const r = await s.request('POST', `/projects/${fork1.id}/merge_requests`, {
      token: bob.token,
      json: { source_branch: 'topic', target_branch: 'main', title: 'From my fork', target_project_id: upstream.id, allow_collaboration: true },
    });
    expect(r.status, r.text).toBe(201);
    mr = r.body;
    expect(mr).toMatchObject({ project_id: upstream.id, source_project_id: fork1.id, target_project_id: upstream.id, source_branch: 'topic', target_branch: 'main', allow_collaboration: true, allow_maintainer_to_push: true, changes_count: '1' });
    expect(mr.web_url).toBe(`${s.url}/alice/up/-/merge_requests/${mr.iid}`);
    const head = await repo(s, fork1.id).branchSha('topic');
    expect(mr.sha).toBe(head);
    expect(await repo(s, upstream.id).resolveRef(`refs/merge-requests/${mr.iid}/head`)).toBe(head);

    const upList = await s.request('GET', `/projects/${upstream.id}/merge_requests`, { token: alice.token });
    expect(upList.body.map((m: any) => m.id)).toContain(mr.id);
    const forkList = await s.request('GET', `/projects/${fork1.id}/merge_requests`, { token: bob.token });
    expect(forkList.body.map((m: any) => m.id)).not.toContain(mr.id);

    const changes = await s.request('GET', `/projects/${upstream.id}/merge_requests/${mr.iid}/changes`, { token: alice.token });
    expect(changes.status).toBe(200);
    expect(changes.body.changes.map((c: any) => c.new_path)).toEqual(['topic.txt']);
    const commits = await s.request('GET', `/projects/${upstream.id}/merge_requests/${mr.iid}/commits`, { token: alice.token });
    expect(commits.body.map((c: any) => c.id)).toEqual([head]);
    // A same-project request does not show the collaboration fields.
    const local = await s.request('POST', `/projects/${upstream.id}/merge_requests`, { token: alice.token, json: { source_branch: 'feature', target_branch: 'main', title: 'local' } });
    expect(local.status).toBe(201);
    expect(local.body).not.toHaveProperty('allow_collaboration');
  });

  it('follows pushes to the fork\'s branch', async () => {
    const next = await commit(s, fork1.id, 'topic', { 'topic2.txt': 'two\n' });
    const r = await s.request('GET', `/projects/${upstream.id}/merge_requests/${mr.iid}`, { token: alice.token });
    expect(r.body.sha).toBe(next);
    expect(r.body.changes_count).toBe('2');
    expect(await repo(s, upstream.id).resolveRef(`refs/merge-requests/${mr.iid}/head`)).toBe(next);
  });

  it('refuses targets outside the network, unknown or closed to the caller, and callers who cannot push to the source', async () => {
    const body = { source_branch: 'topic', target_branch: 'main', title: 't' };
    const other = await createProject(s, 'other', { token: bob.token, visibility: 'public' });
    const outside = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: bob.token, json: { ...body, target_project_id: other.id } });
    expect(outside.status).toBe(422);
    expect(outside.body).toEqual({ message: ['Source project is not a fork of the target project'] });
    const unknown = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: bob.token, json: { ...body, target_project_id: 999999 } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Not found' });
    const stranger = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: carol.token, json: { ...body, target_project_id: upstream.id } });
    expect(stranger.status).toBe(403);
    // A private project of the network the caller cannot read.
    const priv = await fork(alice.token, upstream.id, { path: 'alice-priv', name: 'alice priv', visibility: 'private' });
    expect(priv.status, priv.text).toBe(201);
    const closed = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: bob.token, json: { ...body, target_project_id: priv.body.id } });
    expect(closed.status).toBe(403);
    // Same branch names in two projects are fine.
    const same = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: bob.token, json: { source_branch: 'main', target_branch: 'main', title: 'same names', target_project_id: upstream.id } });
    expect(same.status, same.text).toBe(201);
    const again = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: bob.token, json: { source_branch: 'topic', target_branch: 'main', title: 'dup', target_project_id: upstream.id } });
    expect(again.status).toBe(409);
    // Merge requests turned off in a target of the network: the model's 422 (reference).
    const noMrs = await fork(alice.token, upstream.id, { path: 'no-mrs', name: 'no mrs', visibility: 'public' });
    expect(noMrs.status).toBe(201);
    expect((await s.request('PUT', `/projects/${noMrs.body.id}`, { token: alice.token, json: { merge_requests_access_level: 'disabled' } })).status).toBe(200);
    const off = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: bob.token, json: { ...body, target_project_id: noMrs.body.id } });
    expect([off.status, off.body]).toEqual([422, { message: ['Target project has disabled merge requests'] }]);
    const close = await s.request('PUT', `/projects/${upstream.id}/merge_requests/${same.body.iid}`, { token: alice.token, json: { state_event: 'close' } });
    expect(close.body.state).toBe('closed');
  });

  it('rebases in the fork, and merges into the upstream; the fork\'s branch stays unless the merger may push there', async () => {
    await commit(s, upstream.id, 'main', { 'upstream.txt': 'moved on\n' });
    const oldTip = await repo(s, fork1.id).branchSha('topic');
    // Who may push to the fork's branch rebases it (GitLab's authorize_push_to_merge_request!): the fork's owner.
    const reb = await s.request('PUT', `/projects/${upstream.id}/merge_requests/${mr.iid}/rebase`, { token: bob.token });
    expect(reb.status, reb.text).toBe(202);
    const rebased = await repo(s, fork1.id).branchSha('topic');
    expect(rebased).not.toBe(oldTip);
    expect(await repo(s, fork1.id).isAncestor((await repo(s, upstream.id).branchSha('main'))!, rebased!)).toBe(true);
    const alicesRebase = await s.request('PUT', `/projects/${upstream.id}/merge_requests/${mr.iid}/rebase`, { token: alice.token });
    expect(alicesRebase.status).toBe(403);
    expect(alicesRebase.body).toEqual({ message: '403 Forbidden - Cannot push to source branch' });

    const tip = await repo(s, fork1.id).branchSha('topic');
    const merged = await s.request('PUT', `/projects/${upstream.id}/merge_requests/${mr.iid}/merge`, { token: alice.token, json: { should_remove_source_branch: true, sha: tip } });
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body.state).toBe('merged');
    const file = await s.request('GET', `/projects/${upstream.id}/repository/files/topic2.txt`, { token: alice.token, query: { ref: 'main' } });
    expect(file.status).toBe(200);
    expect(await repo(s, fork1.id).branchSha('topic')).toBe(tip);

    // The merge request of a commit: by its head, by its merge commit (here through a branch name).
    for (const ref of [tip!, 'main', merged.body.merge_commit_sha]) {
      const found = await s.request('GET', `/projects/${upstream.id}/repository/commits/${ref}/merge_requests`, { token: carol.token });
      expect(found.status, found.text).toBe(200);
      expect(found.body.map((m: any) => m.iid)).toEqual([mr.iid]);
    }
    const none = await s.request('GET', `/projects/${upstream.id}/repository/commits/${tip}/merge_requests`, { token: carol.token, query: { state: 'opened' } });
    expect(none.body).toEqual([]);
    expect((await s.request('GET', `/projects/${upstream.id}/repository/commits/nope/merge_requests`, { token: carol.token })).body).toEqual({ message: '404 Commit Not Found' });
  });

  it('unlinks: open requests between the fork and its network close, the relation and the count go', async () => {
    await commit(s, fork1.id, 'second', { 's.txt': 's\n' }, { from: 'main' });
    const open = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: bob.token, json: { source_branch: 'second', target_branch: 'main', title: 'second', target_project_id: upstream.id } });
    expect(open.status).toBe(201);
    const before = (await s.request('GET', `/projects/${upstream.id}`, { token: alice.token })).body.forks_count;
    expect((await s.request('DELETE', `/projects/${fork1.id}/fork`, { token: carol.token })).status).toBe(403);
    const r = await s.request('DELETE', `/projects/${fork1.id}/fork`, { token: bob.token });
    expect(r.status).toBe(204);
    const mrNow = await s.request('GET', `/projects/${upstream.id}/merge_requests/${open.body.iid}`, { token: alice.token });
    expect(mrNow.body.state).toBe('closed');
    const me = await s.request('GET', `/projects/${fork1.id}`, { token: bob.token });
    expect(me.body).not.toHaveProperty('forked_from_project');
    expect(me.body.import_status).toBe('none');
    expect((await s.request('GET', `/projects/${upstream.id}`, { token: alice.token })).body.forks_count).toBe(before - 1);
    expect((await s.request('DELETE', `/projects/${fork1.id}/fork`, { token: bob.token })).status).toBe(304);
    const outside = await s.request('POST', `/projects/${fork1.id}/merge_requests`, { token: bob.token, json: { source_branch: 'second', target_branch: 'main', title: 'again', target_project_id: upstream.id } });
    expect(outside.status).toBe(422);

    // Nothing flows from a project that left the network: a reopen is refused (GitLab's
    // reopenable?), and new commits of its branch are never fetched into the upstream.
    const secret = await commit(s, fork1.id, 'second', { 'secret.txt': 'secret\n' });
    const reopen = await s.request('PUT', `/projects/${upstream.id}/merge_requests/${open.body.iid}`, { token: alice.token, json: { state_event: 'reopen' } });
    expect(reopen.status).toBe(200);
    expect(reopen.body.state).toBe('closed');
    const seen = await s.request('GET', `/projects/${upstream.id}/merge_requests/${open.body.iid}/changes`, { token: carol.token });
    expect(seen.body.changes.map((c: any) => c.new_path)).toEqual(['s.txt']);
    expect(await repo(s, upstream.id).getCommit(secret)).toBeNull();

    // Linking it again (Owner of the fork, who may fork the source).
    const link = await s.request('POST', `/projects/${fork1.id}/fork/${upstream.id}`, { token: bob.token });
    expect(link.status, link.text).toBe(201);
    expect(link.body.forked_from_project.id).toBe(upstream.id);
    expect((await s.request('POST', `/projects/${fork1.id}/fork/${upstream.id}`, { token: bob.token })).body).toEqual({ message: 'Project already forked' });
  });

  it('a deleted fork closes its open requests, which stay readable', async () => {
    const f = await fork(bob.token, upstream.id, { path: 'doomed', name: 'doomed' });
    await commit(s, f.body.id, 'gone', { 'g.txt': 'g\n' }, { from: 'main' });
    const open = await s.request('POST', `/projects/${f.body.id}/merge_requests`, { token: bob.token, json: { source_branch: 'gone', target_branch: 'main', title: 'gone', target_project_id: upstream.id } });
    expect(open.status).toBe(201);
    expect((await s.request('DELETE', `/projects/${f.body.id}`, { token: bob.token })).status).toBe(202);
    const mrNow = await s.request('GET', `/projects/${upstream.id}/merge_requests/${open.body.iid}`, { token: alice.token });
    expect(mrNow.status).toBe(200);
    expect(mrNow.body.state).toBe('closed');
    const changes = await s.request('GET', `/projects/${upstream.id}/merge_requests/${open.body.iid}/changes`, { token: alice.token });
    expect(changes.status).toBe(200);
    expect(changes.body.changes.map((c: any) => c.new_path)).toEqual(['g.txt']);
    const list = await s.request('GET', `/projects/${upstream.id}/merge_requests`, { token: alice.token, query: { state: 'closed' } });
    expect(list.status).toBe(200);
  });

  it('keeps pipelines of the fork and of the target in view, and merges when they pass', async () => {
    const strict = await createProject(s, 'strict', { token: alice.token, visibility: 'public', extra: { only_allow_merge_if_pipeline_succeeds: true } });
    const f = await fork(bob.token, strict.id);
    expect(f.status, f.text).toBe(201);
    const head = await commit(s, f.body.id, 'ci', { 'ci.txt': 'ci\n' }, { from: 'main' });
    const open = await s.request('POST', `/projects/${f.body.id}/merge_requests`, { token: bob.token, json: { source_branch: 'ci', target_branch: 'main', title: 'ci', target_project_id: strict.id } });
    expect(open.status).toBe(201);
    const running = await s.request('POST', `/projects/${f.body.id}/statuses/${head}`, { token: bob.token, json: { state: 'running', name: 'test', ref: 'ci' } });
    expect(running.status, running.text).toBe(201);
    const shown = await s.request('GET', `/projects/${strict.id}/merge_requests/${open.body.iid}`, { token: alice.token });
    expect(shown.body.head_pipeline?.project_id).toBe(f.body.id);
    expect(shown.body.head_pipeline.web_url).toContain('/bob/strict/-/pipelines/');
    const list = await s.request('GET', `/projects/${strict.id}/merge_requests/${open.body.iid}/pipelines`, { token: alice.token });
    expect(list.body.map((p: any) => [p.project_id, p.web_url.includes('/bob/strict/')])).toEqual([[f.body.id, true]]);
    // Auto-merge waits for the fork's pipeline, then merges into the target.
    const auto = await s.request('PUT', `/projects/${strict.id}/merge_requests/${open.body.iid}/merge`, { token: alice.token, json: { merge_when_pipeline_succeeds: true } });
    expect(auto.status, auto.text).toBe(200);
    expect(auto.body.state).toBe('opened');
    const success = await s.request('POST', `/projects/${f.body.id}/statuses/${head}`, { token: bob.token, json: { state: 'success', name: 'test', ref: 'ci' } });
    expect(success.status, success.text).toBe(201);
    const after = await s.request('GET', `/projects/${strict.id}/merge_requests/${open.body.iid}`, { token: alice.token });
    expect(after.body.state).toBe('merged');
    expect(await repo(s, strict.id).isAncestor(head, (await repo(s, strict.id).branchSha('main'))!)).toBe(true);
    expect(await repo(s, f.body.id).branchSha('main')).not.toBe(await repo(s, strict.id).branchSha('main'));
  });
});

describe('fork networks', () => {
  it('never lets a fork be more visible than its source', async () => {
    const closed = await createProject(s, 'closed', { token: alice.token });
    const add = await s.request('POST', `/projects/${closed.id}/members`, { token: alice.token, json: { user_id: bob.id, access_level: 20 } });
    expect(add.status).toBe(201);
    const f = await fork(bob.token, closed.id, { visibility: 'public' });
    expect(f.status, f.text).toBe(201);
    expect(f.body.visibility).toBe('private');
    const up = await s.request('PUT', `/projects/${f.body.id}`, { token: bob.token, json: { visibility: 'public' } });
    expect(up.status).toBe(400);
    expect(up.body).toEqual({ message: { visibility_level: ['public is not allowed since the fork source project has lower visibility.'] } });
    expect((await s.request('GET', `/projects/${f.body.id}`, { token: carol.token })).status).toBe(404);
  });

  it('a project made less visible leaves its network', async () => {
    const vis = await createProject(s, 'vis', { token: alice.token, visibility: 'public' });
    const f = await fork(bob.token, vis.id);
    expect(f.status).toBe(201);
    const down = await s.request('PUT', `/projects/${vis.id}`, { token: alice.token, json: { visibility: 'internal' } });
    expect(down.status).toBe(200);
    expect(down.body.forks_count).toBe(0);
    expect((await s.request('GET', `/projects/${f.body.id}`, { token: bob.token })).body).not.toHaveProperty('forked_from_project');
    expect((await s.request('GET', `/projects/${vis.id}/forks`, { token: alice.token })).body).toEqual([]);
  });

  it('refuses links that would merge networks or make cycles, and a root that left stays out', async () => {
    const root = await createProject(s, 'root', { token: alice.token, visibility: 'public' });
    const f = await fork(bob.token, root.id, { path: 'root-fork', name: 'root fork' });
    expect(f.status).toBe(201);
    // The root of forks cannot become a fork of its own fork.
    expect((await s.request('POST', `/projects/${root.id}/fork/${f.body.id}`, { token: alice.token })).body).toEqual({ message: 'Project already forked' });
    expect((await s.request('POST', `/projects/${root.id}/fork/${root.id}`, { token: alice.token })).status).toBe(400);
    const lone = await createProject(s, 'lone', { token: alice.token, visibility: 'public' });
    expect((await s.request('POST', `/projects/${lone.id}/fork/${lone.id}`, { token: alice.token })).body).toEqual({ message: 'Target project cannot be equal to source project' });

    // The root leaves; forking it again starts a new network, apart from its old forks.
    expect((await s.request('DELETE', `/projects/${root.id}/fork`, { token: alice.token })).status).toBe(204);
    const again = await fork(carol.token, root.id);
    expect(again.status, again.text).toBe(201);
    await commit(s, f.body.id, 'late', { 'late.txt': 'late\n' }, { from: 'main' });
    const mr = await s.request('POST', `/projects/${f.body.id}/merge_requests`, { token: bob.token, json: { source_branch: 'late', target_branch: 'main', title: 'late', target_project_id: root.id } });
    expect(mr.status).toBe(422);
    // The old forks still form a network of their own.
    const sibling = await fork(carol.token, f.body.id, { path: 'sibling', name: 'sibling' });
    expect(sibling.status).toBe(201);
    const toOld = await s.request('POST', `/projects/${f.body.id}/merge_requests`, { token: bob.token, json: { source_branch: 'late', target_branch: 'main', title: 'late', target_project_id: sibling.body.id } });
    expect(toOld.status, toOld.text).toBe(201);
  });

  it('a project moved into a less visible group leaves its network; a public project cannot be linked to a private one', async () => {
    const pub = await createProject(s, 'pub', { token: alice.token, visibility: 'public' });
    const f = await fork(bob.token, pub.id);
    expect(f.status).toBe(201);
    const g = await s.request('POST', '/groups', { token: alice.token, json: { name: 'hidden', path: 'hidden', visibility: 'private' } });
    expect(g.status).toBe(201);
    const moved = await s.request('PUT', `/projects/${pub.id}/transfer`, { token: alice.token, json: { namespace: g.body.id } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.visibility).toBe('private');
    expect(moved.body.forks_count).toBe(0);
    expect((await s.request('GET', `/projects/${f.body.id}`, { token: bob.token })).body).not.toHaveProperty('forked_from_project');

    const priv = await createProject(s, 'priv-src', { token: alice.token });
    await s.request('POST', `/projects/${priv.id}/members`, { token: alice.token, json: { user_id: bob.id, access_level: 30 } });
    const mine = await createProject(s, 'mine-pub', { token: bob.token, visibility: 'public' });
    const link = await s.request('POST', `/projects/${mine.id}/fork/${priv.id}`, { token: bob.token });
    expect(link.status).toBe(400);
    expect(link.body).toEqual({ message: ['Visibility level public is not allowed since the fork source project has lower visibility.'] });
  });

  it('takes the newer of the fork\'s and the target\'s pipelines as the head pipeline', async () => {
    const up = await createProject(s, 'ci-up', { token: alice.token, visibility: 'public', extra: { only_allow_merge_if_pipeline_succeeds: true } });
    const f = await fork(bob.token, up.id);
    const head = await commit(s, f.body.id, 'x', { 'x.txt': 'x\n' }, { from: 'main' });
    const open = await s.request('POST', `/projects/${f.body.id}/merge_requests`, { token: bob.token, json: { source_branch: 'x', target_branch: 'main', title: 'x', target_project_id: up.id } });
    expect(open.status).toBe(201);
    expect((await s.request('POST', `/projects/${f.body.id}/statuses/${head}`, { token: bob.token, json: { state: 'success', name: 't' } })).status).toBe(201);
    const inTarget = await s.request('POST', `/projects/${up.id}/merge_requests/${open.body.iid}/pipelines`, { token: alice.token });
    expect(inTarget.status, inTarget.text).toBe(201);
    expect(inTarget.body.project_id).toBe(up.id);
    expect((await s.request('POST', `/projects/${up.id}/statuses/${head}`, { token: alice.token, json: { state: 'failed', name: 't', pipeline_id: inTarget.body.id } })).status).toBe(201);
    const shown = await s.request('GET', `/projects/${up.id}/merge_requests/${open.body.iid}`, { token: alice.token });
    expect(shown.body.head_pipeline.id).toBe(inTarget.body.id);
    expect(shown.body.head_pipeline.status).toBe('failed');
    expect((await s.request('PUT', `/projects/${up.id}/merge_requests/${open.body.iid}/merge`, { token: alice.token })).status).toBe(405);
  });
});
