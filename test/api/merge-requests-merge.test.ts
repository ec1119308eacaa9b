import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, addMember, commit, createProject, openMr, repo } from './mr-helpers.js';

let s: TestServer;
let alice: { id: number; token: string };
let bob: { id: number; token: string };
beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
});
afterAll(async () => {
  await closeServer(s);
});

async function project(name: string, settings: Record<string, unknown> = {}) {
  const p = await createProject(s, name);
  if (Object.keys(settings).length) {
    const r = await s.request('PUT', `/projects/${p.id}`, { json: settings });
    if (r.status !== 200) throw new Error(`settings: ${r.status} ${r.text}`);
  }
  return p.id;
}

describe('PUT …/merge: checks in GitLab order', () => {
  it('400 sha required, 401 no right, 409 sha mismatch, 405 not mergeable', async () => {
    const pid = await project('checks');
    await addMember(s, pid, bob.id, 20);
    const head = await commit(s, pid, 'feat', { 'f.txt': 'f' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    await s.app.lw.db.updateTable('projects').set({ require_sha_for_merge: 1 }).where('id', '=', pid).execute();
    await s.settle();
    // 400 comes before the permission check.
    let r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`, { token: bob.token });
    expect([r.status, r.body]).toEqual([400, { message: 'SHA must be provided when merging' }]);
    r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`, { token: bob.token, json: { sha: head } });
    expect([r.status, r.body]).toEqual([401, { message: '401 Unauthorized' }]);
    r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`, { json: { sha: 'a'.repeat(40) } });
    expect([r.status, r.body]).toEqual([409, { message: `SHA does not match HEAD of source branch: ${head}` }]);
    await s.app.lw.db.updateTable('projects').set({ require_sha_for_merge: 0 }).where('id', '=', pid).execute();
    await s.settle();
    await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}`, { json: { title: 'Draft: wip' } });
    r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`);
    expect([r.status, r.body]).toEqual([405, { message: '405 Method Not Allowed' }]);
    await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}`, { json: { title: 'ready', state_event: 'close' } });
    r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`);
    expect(r.status).toBe(405);
    expect((await s.request('PUT', `/projects/${pid}/merge_requests/99/merge`)).body).toEqual({ message: '404 Not found' });
    expect((await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`, { token: alice.token })).body).toEqual({ message: '404 Project Not Found' });
    expect(await repo(s, pid).branchSha('main')).not.toBe(head);
  });

  it('merges with the sha, a custom message, and removes the source branch', async () => {
    const pid = await project('custom');
    const head = await commit(s, pid, 'feat', { 'f.txt': 'f' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`, { json: { sha: head, merge_commit_message: 'Custom message', should_remove_source_branch: true } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ state: 'merged', should_remove_source_branch: true, merge_user: { username: 'root' }, merged_by: { username: 'root' } });
    expect(r.body.merged_at).not.toBeNull();
    // The author's first merged request was this one: it is their first contribution, a later one is not.
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`)).body.first_contribution).toBe(true);
    await commit(s, pid, 'feat2', { 'g.txt': 'g' }, { from: 'main' });
    const second = await openMr(s, pid, 'feat2');
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${second.iid}`)).body.first_contribution).toBe(false);
    const c = await repo(s, pid).getCommit(r.body.merge_commit_sha);
    expect(c!.message.trim()).toBe('Custom message');
    expect(c!.parent_ids[1]).toBe(head);
    expect(await repo(s, pid).branchSha('feat')).toBeNull();
    expect(r.body.detailed_merge_status).toBe('not_open');
    // Merging again: 405.
    expect((await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`)).status).toBe(405);
    // target_branch is ignored once merged.
    const u = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}`, { json: { target_branch: 'other' } });
    expect(u.body.target_branch).toBe('main');
  });

  it('squashes: one squash commit merged into the target', async () => {
    const pid = await project('squash');
    await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    await commit(s, pid, 'feat', { 'b.txt': 'b' });
    await commit(s, pid, 'main', { 'm.txt': 'm' });
    const mr = await openMr(s, pid, 'feat');
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`, { json: { squash: true, squash_commit_message: 'Squashed!' } });
    expect(r.status).toBe(200);
    expect(r.body.squash).toBe(true);
    const squash = await repo(s, pid).getCommit(r.body.squash_commit_sha);
    expect(squash!.message.trim()).toBe('Squashed!');
    expect(squash!.parent_ids).toHaveLength(1);
    const merge = await repo(s, pid).getCommit(r.body.merge_commit_sha);
    expect(merge!.parent_ids).toEqual([expect.any(String), r.body.squash_commit_sha]);
  });

  it('fast-forward projects need a rebase first; rebase then merge moves the target to the source', async () => {
    const pid = await project('ff', { merge_method: 'ff' });
    await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    await commit(s, pid, 'main', { 'm.txt': 'm' });
    const mr = await openMr(s, pid, 'feat');
    expect(mr.detailed_merge_status).toBe('need_rebase');
    expect((await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`)).status).toBe(405);
    const rb = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/rebase`);
    expect([rb.status, rb.body]).toEqual([202, { rebase_in_progress: true }]);
    const after = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`, { query: { include_rebase_in_progress: true } });
    expect(after.body.detailed_merge_status).toBe('mergeable');
    expect(after.body.rebase_in_progress).toBe(false);
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`);
    expect(r.status).toBe(200);
    const main = await repo(s, pid).branchSha('main');
    expect(main).toBe(after.body.sha);
    expect(r.body.merge_commit_sha).toBe(main);
  });

  it('rebase_merge projects make a merge commit on a rebased source', async () => {
    const pid = await project('rebase-merge', { merge_method: 'rebase_merge' });
    await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`);
    expect(r.status).toBe(200);
    expect((await repo(s, pid).getCommit(r.body.merge_commit_sha))!.parent_ids).toHaveLength(2);
  });

  it('ten concurrent merges give exactly one merge and one merge commit', async () => {
    const pid = await project('race');
    await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const before = await repo(s, pid).branchSha('main');
    const mr = await openMr(s, pid, 'feat');
    const results = await Promise.all(Array.from({ length: 10 }, () => s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expect([405, 409, 422]).toContain(r.status);
    const main = await repo(s, pid).branchSha('main');
    const mergeCommit = await repo(s, pid).getCommit(main!);
    expect(mergeCommit!.parent_ids[0]).toBe(before);
    expect(ok[0].body.merge_commit_sha).toBe(main);
    const row = await s.app.lw.db.selectFrom('merge_requests').selectAll().where('project_id', '=', pid).executeTakeFirstOrThrow();
    expect(row.in_progress_merge_commit_sha).toBeNull();
    expect(row.merge_lock).toBeNull();
  });

  it('a push to the source between the check and the ref move fails the merge and changes nothing', async () => {
    const pid = await project('moved');
    const head = await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    const before = await repo(s, pid).branchSha('main');
    await commit(s, pid, 'feat', { 'b.txt': 'b' });
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`, { json: { sha: head } });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/^SHA does not match HEAD of source branch: [0-9a-f]{40}$/);
    expect(await repo(s, pid).branchSha('main')).toBe(before);
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`)).body.state).toBe('opened');
  });

  it('reconciles a merge interrupted after the ref moved', async () => {
    const pid = await project('crash');
    await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    const r = repo(s, pid);
    const target = (await r.branchSha('main'))!;
    const mergeSha = await r.createMergeCommit({ ours: target, theirs: (await r.branchSha('feat'))!, message: 'm', author: { name: 'x', email: 'x@x' } });
    // Simulates a crash after the CAS: the row still says opened, with the in-progress sha recorded.
    await s.app.lw.db.updateTable('merge_requests').set({ in_progress_merge_commit_sha: mergeSha, merge_lock: 'dead', merge_lock_at: new Date().toISOString(), merge_user_id: 1 }).where('id', '=', mr.id).execute();
    await s.settle();
    await r.updateRef('refs/heads/main', mergeSha, target);
    // A second process starting on the same data reconciles at start-up (onReady).
    const { buildApp } = await import('../../src/app.js');
    const restarted = await buildApp(s.app.lw.config, { logger: false });
    await restarted.ready();
    await restarted.close();
    const got = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`);
    expect(got.body).toMatchObject({ state: 'merged', merge_commit_sha: mergeSha });
  });
});

describe('merge_ref, commits, participants, changes, raw diffs', () => {
  it('reads the request through git', async () => {
    const pid = await project('reads');
    await addMember(s, pid, alice.id, 30);
    await commit(s, pid, 'feat', { 'a.txt': 'line\n' }, { from: 'main', message: 'first' });
    await commit(s, pid, 'feat', { 'a.txt': 'line\nmore\n', 'gone.txt': 'x' }, { message: 'second' });
    const mr = await openMr(s, pid, 'feat', { assignee_ids: [alice.id] });
    const ref = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/merge_ref`);
    expect(ref.status).toBe(200);
    expect(ref.body.commit_id).toMatch(/^[0-9a-f]{40}$/);
    expect(await repo(s, pid).resolveRef(`refs/merge-requests/${mr.iid}/merge`)).toBe(ref.body.commit_id);
    const commits = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/commits`);
    expect(commits.body.map((c: any) => c.title)).toEqual(['second', 'first']);
    expect(commits.headers.get('x-total')).toBe('2');
    const parts = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/participants`);
    expect(parts.body.map((u: any) => u.username)).toEqual(['root', 'alice']);
    const changes = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/changes`, { query: { unidiff: true } });
    expect(changes.body.overflow).toBe(false);
    expect(changes.body.changes).toHaveLength(2);
    expect(changes.body.changes[0].diff.startsWith('--- /dev/null\n+++ b/a.txt\n')).toBe(true);
    expect(changes.body.changes[0].collapsed).toBeUndefined();
    expect(changes.body.changes_count).toBe('2');
    const diffs = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/diffs`, { query: { per_page: 1 } });
    expect(diffs.body).toHaveLength(1);
    expect(diffs.headers.get('x-total')).toBe('2');
    expect(Object.keys(diffs.body[0])).toEqual(['old_path', 'new_path', 'a_mode', 'b_mode', 'new_file', 'renamed_file', 'deleted_file', 'diff', 'generated_file', 'collapsed', 'too_large']);
    const raw = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/raw_diffs`);
    expect(raw.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(raw.text).toContain('diff --git a/a.txt b/a.txt');
  });

  it('marks files too large for the diffs endpoint', async () => {
    const pid = await project('large');
    await commit(s, pid, 'feat', { 'big.txt': 'x'.repeat(300 * 1024) + '\n', 'small.txt': 's\n' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    const diffs = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/diffs`);
    const big = diffs.body.find((d: any) => d.new_path === 'big.txt');
    expect(big).toMatchObject({ too_large: true, diff: '' });
    const raw = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/changes`, { query: { access_raw_diffs: true } });
    expect(raw.body.changes.find((d: any) => d.new_path === 'big.txt').diff.length).toBeGreaterThan(300 * 1024);
  });

  it('caps changes_count at 1000+', async () => {
    const pid = await project('many');
    const files: Record<string, string> = {};
    for (let i = 0; i < 1001; i++) files[`f/${i}.txt`] = String(i);
    await commit(s, pid, 'feat', files, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    expect(mr.changes_count).toBe('1000+');
  });
});

describe('races and crash recovery (security cases H37, H39)', () => {
  it('the ref transaction refuses to move the target when the source moved after the check', async () => {
    const { moveTargetVerifyingSource } = await import('../../src/services/merge-requests/git-ops.js');
    const pid = await project('race-ref');
    const r = repo(s, pid);
    const checked = await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const target = (await r.branchSha('main'))!;
    const mergeSha = await r.createMergeCommit({ ours: target, theirs: checked, message: 'm', author: { name: 'x', email: 'x@x' } });
    await commit(s, pid, 'feat', { 'b.txt': 'b' }); // the push that races the merge
    expect(await moveTargetVerifyingSource(r, 'main', mergeSha, target, 'feat', checked)).toBe(false);
    expect(await r.branchSha('main')).toBe(target);
    const now = (await r.branchSha('feat'))!;
    expect(await moveTargetVerifyingSource(r, 'main', mergeSha, target, 'feat', now)).toBe(true);
  });

  it('a crash before the ref moved leaves the request open and mergeable after start-up', async () => {
    const pid = await project('crash-before');
    await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    const before = await repo(s, pid).branchSha('main');
    await s.app.lw.db.updateTable('merge_requests').set({ in_progress_merge_commit_sha: 'f'.repeat(40), merge_lock: 'dead', merge_lock_at: new Date().toISOString() }).where('id', '=', mr.id).execute();
    await s.settle();
    // Locked: a merge now is refused with the resource lock.
    const locked = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`);
    expect([locked.status, locked.body]).toEqual([409, { message: '409 Conflict: Resource lock' }]);
    const { reconcileMerges } = await import('../../src/services/merge-requests/merge.js');
    expect(await reconcileMerges(s.app.lw)).toBe(0);
    expect(await repo(s, pid).branchSha('main')).toBe(before);
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`);
    expect(r.body.state).toBe('merged');
  });

  it('DELETE honours If-Unmodified-Since', async () => {
    const pid = await project('unmodified');
    await commit(s, pid, 'feat', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    const r = await s.request('DELETE', `/projects/${pid}/merge_requests/${mr.iid}`, { headers: { 'If-Unmodified-Since': 'Mon, 01 Jan 2001 00:00:00 GMT' } });
    expect([r.status, r.body]).toEqual([412, { message: '412 Precondition Failed' }]);
  });

  it('with_merge_status_recheck refreshes a stale list entry', async () => {
    const pid = await project('recheck');
    await commit(s, pid, 'feat', { 'c.txt': 'one' }, { from: 'main' });
    const mr = await openMr(s, pid, 'feat');
    expect(mr.has_conflicts).toBe(false);
    await commit(s, pid, 'main', { 'c.txt': 'two' });
    expect((await s.request('GET', `/projects/${pid}/merge_requests`)).body[0].has_conflicts).toBe(false);
    const fresh = await s.request('GET', `/projects/${pid}/merge_requests`, { query: { with_merge_status_recheck: true } });
    expect(fresh.body[0]).toMatchObject({ has_conflicts: true, detailed_merge_status: 'conflict' });
  });
});
