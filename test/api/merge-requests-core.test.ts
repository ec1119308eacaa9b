import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, commit, createProject, openMr, repo } from './mr-helpers.js';

let s: TestServer;
let pid: number;
let path: string;
beforeAll(async () => {
  s = await startServer();
  const p = await createProject(s, 'core');
  pid = p.id;
  path = p.path_with_namespace;
});
afterAll(async () => {
  await closeServer(s);
});

describe('merge request vertical slice', () => {
  it('creates, reads, lists, diffs and merges with a real merge commit', async () => {
    await commit(s, pid, 'feature', { 'a.txt': 'hello\n' }, { from: 'main' });
    const created = await s.request('POST', `/projects/${pid}/merge_requests`, {
      json: { source_branch: 'feature', target_branch: 'main', title: 'Add a', description: '- [x] done\n- [ ] todo', labels: 'bug,ui' },
    });
    expect(created.status).toBe(201);
    const mr = created.body;
    expect(mr.iid).toBe(1);
    expect(Object.keys(mr).slice(0, 8)).toEqual(['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at']);
    expect(mr.labels).toEqual(['bug', 'ui']);
    expect(mr.references).toEqual({ short: '!1', relative: '!1', full: `${path}!1` });
    expect(mr.web_url).toBe(`${s.url}/${path}/-/merge_requests/1`);
    expect(mr.changes_count).toBe('1');
    expect(mr.task_completion_status).toEqual({ count: 2, completed_count: 1 });
    expect(mr.user).toEqual({ can_merge: true });
    expect(mr.detailed_merge_status).toBe('mergeable');
    expect(mr.has_conflicts).toBe(false);
    expect(mr.diff_refs.head_sha).toBe(await repo(s, pid).branchSha('feature'));

    const got = await s.request('GET', `/projects/${pid}/merge_requests/1`);
    expect(got.status).toBe(200);
    expect(got.body.merge_status).toBe('can_be_merged');

    const list = await s.request('GET', `/projects/${pid}/merge_requests`);
    expect(list.status).toBe(200);
    expect(list.body.map((m: any) => m.iid)).toEqual([1]);
    expect(list.headers.get('x-total')).toBe('1');

    const diffs = await s.request('GET', `/projects/${pid}/merge_requests/1/diffs`);
    expect(diffs.status).toBe(200);
    expect(diffs.body[0]).toMatchObject({ new_path: 'a.txt', new_file: true, collapsed: false, too_large: false });
    expect(diffs.body[0].diff).toContain('+hello');

    const merged = await s.request('PUT', `/projects/${pid}/merge_requests/1/merge`);
    expect(merged.status).toBe(200);
    expect(merged.body.state).toBe('merged');
    const mainSha = await repo(s, pid).branchSha('main');
    expect(merged.body.merge_commit_sha).toBe(mainSha);
    const c = await repo(s, pid).getCommit(mainSha!);
    expect(c!.parent_ids).toHaveLength(2);
    expect(c!.message).toContain("Merge branch 'feature' into 'main'");
  });

  it('reports conflicts from the repository and refuses the merge with 422', async () => {
    await commit(s, pid, 'conflicting', { 'c.txt': 'one\n' }, { from: 'main' });
    await commit(s, pid, 'main', { 'c.txt': 'two\n' });
    const mr = await openMr(s, pid, 'conflicting');
    expect(mr.has_conflicts).toBe(true);
    expect(mr.merge_status).toBe('cannot_be_merged');
    expect(mr.detailed_merge_status).toBe('conflict');
    const before = await repo(s, pid).branchSha('main');
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.iid}/merge`);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ message: 'Branch cannot be merged' });
    expect(await repo(s, pid).branchSha('main')).toBe(before);
    // Resolve on the source branch: the status follows the branch.
    await commit(s, pid, 'conflicting', { 'c.txt': 'two\n', 'd.txt': 'x\n' });
    const again = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`);
    expect(again.body.has_conflicts).toBe(false);
    expect(again.body.detailed_merge_status).toBe('mergeable');
  });
});
