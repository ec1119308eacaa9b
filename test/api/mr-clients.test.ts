// The call sequences real clients send: @gitbeaker/rest, and python-gitlab's form/query style.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startServer, type TestServer } from '../helpers/server.js';
import { closeServer, commit, createProject, repo } from './mr-helpers.js';

let s: TestServer;
let pid: number;
let path: string;
beforeAll(async () => {
  s = await startServer();
  const p = await createProject(s, 'clients');
  pid = p.id;
  path = p.path_with_namespace;
  await commit(s, pid, 'gb', { 'g.txt': 'g' }, { from: 'main' });
  await commit(s, pid, 'py', { 'p.txt': 'p' }, { from: 'main' });
});
afterAll(async () => {
  await closeServer(s);
});

describe('@gitbeaker/rest', () => {
  it('MergeRequests.create / show / all / merge', async () => {
    const api = new Gitlab({ host: s.url, token: ROOT_TOKEN });
    const created = await api.MergeRequests.create(path, 'gb', 'main', 'From gitbeaker', { description: 'hi', labels: 'x,y' });
    expect(created.iid).toBe(1);
    const shown = await api.MergeRequests.show(pid, 1);
    expect(shown.title).toBe('From gitbeaker');
    expect(shown.user).toEqual({ can_merge: true });
    const all = await api.MergeRequests.all({ projectId: pid, state: 'opened' });
    expect(all.map((m) => m.iid)).toEqual([1]);
    const mine = await api.MergeRequests.all({ scope: 'created_by_me' });
    expect(mine).toHaveLength(1);
    const merged = await api.MergeRequests.merge(pid, 1, { shouldRemoveSourceBranch: true });
    expect(merged.state).toBe('merged');
    expect(await repo(s, pid).branchSha('main')).toBe(merged.merge_commit_sha);
    await expect(api.MergeRequests.merge(pid, 1)).rejects.toThrow(/405|Method Not Allowed/);
  });

  it('MergeRequestNotes and MergeRequestDiscussions: a review bot comments, opens a thread, resolves it', async () => {
    const api = new Gitlab({ host: s.url, token: ROOT_TOKEN });
    await commit(s, pid, 'gbn', { 'n.txt': 'n' }, { from: 'main' });
    const mr = await api.MergeRequests.create(pid, 'gbn', 'main', 'Notes from gitbeaker');
    const note = await api.MergeRequestNotes.create(pid, mr.iid, 'Pipeline passed', { internal: true });
    expect([note.body, note.internal, note.noteable_iid]).toEqual(['Pipeline passed', true, mr.iid]);
    const edited = await api.MergeRequestNotes.edit(pid, mr.iid, note.id, { body: 'Pipeline passed again' });
    expect(edited.body).toBe('Pipeline passed again');
    expect((await api.MergeRequestNotes.show(pid, mr.iid, note.id)).body).toBe('Pipeline passed again');
    const thread = await api.MergeRequestDiscussions.create(pid, mr.iid, 'Consider a constant here');
    expect(thread.individual_note).toBe(false);
    const reply = await api.MergeRequestDiscussions.addNote(pid, mr.iid, thread.id, 'Done');
    expect(reply.body).toBe('Done');
    const first = thread.notes![0]!;
    const resolved = await api.MergeRequestDiscussions.editNote(pid, mr.iid, thread.id, first.id, { resolved: true });
    expect(resolved.resolved).toBe(true);
    const all = await api.MergeRequestDiscussions.all(pid, mr.iid);
    expect(all.map((d) => d.notes!.map((n) => n.body))).toEqual([['Pipeline passed again'], ['Consider a constant here', 'Done']]);
    const notes = await api.MergeRequestNotes.all(pid, mr.iid, { sort: 'asc', orderBy: 'created_at' });
    expect(notes.map((n) => n.body)).toEqual(['Pipeline passed again', 'Consider a constant here', 'Done']);
    await api.MergeRequestDiscussions.removeNote(pid, mr.iid, thread.id, reply.id);
    await api.MergeRequestNotes.remove(pid, mr.iid, note.id);
    expect((await api.MergeRequests.show(pid, mr.iid)).user_notes_count).toBe(1);
    await expect(api.MergeRequestNotes.show(pid, mr.iid, note.id)).rejects.toThrow(/404|Not found/);
    // A thread on a line of the diff, the way review bots post them.
    const refs = (await api.MergeRequests.show(pid, mr.iid)).diff_refs as { base_sha: string; start_sha: string; head_sha: string };
    const onLine = await api.MergeRequestDiscussions.create(pid, mr.iid, 'Typo here', {
      position: { baseSha: refs.base_sha, startSha: refs.start_sha, headSha: refs.head_sha, positionType: 'text', newPath: 'n.txt', newLine: '1' },
    });
    expect(onLine.notes![0]!.type).toBe('DiffNote');
    expect((onLine.notes![0] as unknown as { position: { new_path: string; new_line: number } }).position).toMatchObject({ new_path: 'n.txt', new_line: 1 });
  });
});

describe('python-gitlab style', () => {
  it('form bodies and query-string arguments on POST and PUT', async () => {
    const form = await s.request('POST', `/projects/${encodeURIComponent(path)}/merge_requests`, { form: { source_branch: 'py', target_branch: 'main', title: 'From python', 'assignee_ids[]': '1', 'reviewer_ids[]': '1' } });
    expect(form.status).toBe(201);
    expect(form.body.assignees.map((u: any) => u.id)).toEqual([1]);
    const upd = await s.request('PUT', `/projects/${pid}/merge_requests/${form.body.iid}?state_event=close&squash=True`);
    expect(upd.body).toMatchObject({ state: 'closed', squash: true });
    const reopen = await s.request('PUT', `/projects/${pid}/merge_requests/${form.body.iid}`, { form: { state_event: 'reopen' } });
    expect(reopen.body.state).toBe('opened');
    const merge = await s.request('PUT', `/projects/${pid}/merge_requests/${form.body.iid}/merge?should_remove_source_branch=true&merge_commit_message=py%20merge`);
    expect(merge.status).toBe(200);
    expect((await repo(s, pid).getCommit(merge.body.merge_commit_sha))!.message.trim()).toBe('py merge');
  });
});

describe('branches made through the repository API', () => {
  it('POST /projects/:id/repository/commits then a merge request from that branch', async () => {
    const c = await s.request('POST', `/projects/${pid}/repository/commits`, {
      json: { branch: 'api-branch', start_branch: 'main', commit_message: 'via api', actions: [{ action: 'create', file_path: 'api.txt', content: 'api\n' }] },
    });
    expect(c.status).toBe(201);
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { json: { source_branch: 'api-branch', target_branch: 'main', title: 'API branch' } });
    expect(mr.status).toBe(201);
    expect(mr.body.sha).toBe(c.body.id);
    const diffs = await s.request('GET', `/projects/${pid}/merge_requests/${mr.body.iid}/diffs`);
    expect(diffs.body.map((d: any) => d.new_path)).toEqual(['api.txt']);
  });
});
