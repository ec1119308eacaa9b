// Cherry-picking and reverting commits through the API (GitLab's commits/:sha/cherry_pick and
// commits/:sha/revert): the commit made, GitLab's messages and error codes, dry runs, protected
// branches, and every other caller's refusal; gitbeaker drives both as a backport bot would.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let reporter: U;
let outsider: U;
let pid: number;
let featureSha: string;

async function commit(branch: string, file: string, content: string, extra: Record<string, unknown> = {}) {
  const r = await s.request('POST', `/projects/${pid}/repository/commits`, {
    token: owner.token,
    json: { branch, commit_message: `change ${file}`, actions: [{ action: extra.update ? 'update' : 'create', file_path: file, content }], ...extra, update: undefined },
  });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function tip(branch: string): Promise<string> {
  return (await s.request('GET', `/projects/${pid}/repository/branches/${branch}`, { token: owner.token })).body.commit.id;
}

async function file(branch: string, path: string): Promise<number> {
  return (await s.request('GET', `/projects/${pid}/repository/files/${path}?ref=${branch}`, { token: owner.token })).status;
}

beforeAll(async () => {
  s = await startServer();
  [owner, dev, reporter, outsider] = await Promise.all(['cpowner', 'cpdev', 'cprep', 'cpout'].map((n) => s.createUser(n)));
  const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'picks', visibility: 'private', initialize_with_readme: true } });
  pid = p.body.id;
  for (const [u, level] of [[dev, 30], [reporter, 20]] as const) {
    expect((await s.request('POST', `/projects/${pid}/members`, { token: owner.token, json: { user_id: u.id, access_level: level } })).status).toBe(201);
  }
  // The feature commit is authored by someone else (author_name), committed through the API.
  featureSha = await commit('feature', 'a.txt', 'a\n', { start_branch: 'main', author_name: 'Ada Author', author_email: 'ada@example.com' });
});

afterAll(async () => {
  await s?.close();
});

describe('cherry_pick', () => {
  it('picks a commit onto a branch as the caller\'s commit, the original author as co-author (GitLab 17+)', async () => {
    const before = await tip('main');
    const r = await s.request('POST', `/projects/${pid}/repository/commits/${featureSha}/cherry_pick`, { token: owner.token, json: { branch: 'main' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ title: 'change a.txt', author_name: 'cpowner', author_email: 'cpowner@example.com', committer_name: 'cpowner', parent_ids: [before] });
    expect(r.body.message).toBe(`change a.txt\n\n(cherry-picked from commit ${featureSha})\n\nCo-authored-by: Ada Author <ada@example.com>`);
    expect(await tip('main')).toBe(r.body.id);
    expect(await file('main', 'a.txt')).toBe(200);
  });

  it('refuses a commit whose change is already there (error_code empty) and a conflicting one (conflict)', async () => {
    const again = await s.request('POST', `/projects/${pid}/repository/commits/${featureSha}/cherry_pick`, { token: owner.token, json: { branch: 'main' } });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      message: "Commit cherry-pick failed: Can't perform this action automatically. It may have already been done, or a more recent commit may have updated some of this content. Please perform this action locally.",
      error_code: 'empty',
    });
    const theirs = await commit('other', 'README.md', 'theirs\n', { start_branch: 'main', update: true });
    await commit('main', 'README.md', 'ours\n', { update: true });
    const before = await tip('main');
    const conflict = await s.request('POST', `/projects/${pid}/repository/commits/${theirs}/cherry_pick`, { token: owner.token, json: { branch: 'main', dry_run: true } });
    expect(conflict.status).toBe(400);
    expect(conflict.body).toMatchObject({ error_code: 'conflict', dry_run: 'error' });
    expect(await tip('main')).toBe(before);
  });

  it('takes a message of the caller\'s, and a dry run changes nothing', async () => {
    const side = await commit('side', 'b.txt', 'b\n', { start_branch: 'main' });
    const before = await tip('main');
    const dry = await s.request('POST', `/projects/${pid}/repository/commits/${side}/cherry_pick`, { token: owner.token, json: { branch: 'main', dry_run: true } });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ dry_run: 'success' });
    expect(await tip('main')).toBe(before);
    const r = await s.request('POST', `/projects/${pid}/repository/commits/${side}/cherry_pick`, { token: owner.token, json: { branch: 'main', message: 'Backport b' } });
    expect(r.status).toBe(201);
    expect(r.body.message).toBe('Backport b');
  });
});

describe('revert', () => {
  it('reverts a commit with git\'s message, as the caller', async () => {
    const picked = await tip('main');
    const r = await s.request('POST', `/projects/${pid}/repository/commits/${picked}/revert`, { token: owner.token, json: { branch: 'main' } });
    expect(r.status).toBe(201);
    expect(r.body.title).toBe('Revert "Backport b"');
    expect(r.body.message).toBe(`Revert "Backport b"\n\nThis reverts commit ${picked}`);
    expect(r.body.author_name).toBe('cpowner');
    expect(await file('main', 'b.txt')).toBe(404);
    const again = await s.request('POST', `/projects/${pid}/repository/commits/${picked}/revert`, { token: owner.token, json: { branch: 'main' } });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      message: "Commit revert failed: Can't perform this action automatically. It may have already been done, or a more recent commit may have updated some of this content. Please perform this action locally.",
      error_code: 'empty',
    });
  });
});

describe('merge requests\' merge commits', () => {
  it('name the merge request: its commits in a pick, "This reverts merge request !iid" in a revert', async () => {
    await commit('mr-src', 'm1.txt', '1\n', { start_branch: 'main' });
    await commit('mr-src', 'm2.txt', '2\n');
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: owner.token, json: { source_branch: 'mr-src', target_branch: 'main', title: 'Two files' } });
    const merged = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.body.iid}/merge`, { token: owner.token });
    expect(merged.status).toBe(200);
    const mergeSha = merged.body.merge_commit_sha;
    await s.request('POST', `/projects/${pid}/repository/branches`, { token: owner.token, json: { branch: 'older', ref: `${mergeSha}~1` } });
    const picked = await s.request('POST', `/projects/${pid}/repository/commits/${mergeSha}/cherry_pick`, { token: owner.token, json: { branch: 'older' } });
    expect(picked.status).toBe(201);
    expect(picked.body.message).toMatch(new RegExp(`\\(cherry-picked from commit ${mergeSha}\\)\\n\\n[0-9a-f]{8} change m1\\.txt\\n[0-9a-f]{8} change m2\\.txt\\n\\nCo-authored-by: `));
    const reverted = await s.request('POST', `/projects/${pid}/repository/commits/${mergeSha}/revert`, { token: owner.token, json: { branch: 'main' } });
    expect(reverted.status).toBe(201);
    const mergeTitle = (await s.request('GET', `/projects/${pid}/repository/commits/${mergeSha}`, { token: owner.token })).body.title;
    expect(reverted.body.message).toBe(`Revert "${mergeTitle}"\n\nThis reverts merge request !${mr.body.iid}`);
    const again = await s.request('POST', `/projects/${pid}/repository/commits/${mergeSha}/revert`, { token: owner.token, json: { branch: 'main' } });
    expect(again.body.message).toMatch(/^Merge request revert failed: /);
  });
});

describe('many files', () => {
  it('one commit of thousands of files writes each blob (in batches of temp files) with its own content', async () => {
    const actions = Array.from({ length: 3000 }, (_, i) => ({ action: 'create', file_path: `many/f${i}.txt`, content: `file ${i}` }));
    const r = await s.request('POST', `/projects/${pid}/repository/commits`, { token: owner.token, json: { branch: 'many', start_branch: 'main', commit_message: 'many', actions } });
    expect(r.status).toBe(201);
    for (const i of [0, 31, 32, 33, 1777, 2999]) {
      const raw = await s.request('GET', `/projects/${pid}/repository/files/${encodeURIComponent(`many/f${i}.txt`)}/raw`, { token: owner.token, query: { ref: 'many' } });
      expect([i, raw.text]).toEqual([i, `file ${i}`]);
    }
  }, 60_000);
});

describe('who may, and bad input', () => {
  it('answers GitLab\'s 4xx and moves nothing', async () => {
    const base = `/projects/${pid}/repository/commits`;
    const before = await tip('main');
    expect((await s.request('POST', `${base}/${featureSha}/cherry_pick`, { token: owner.token, json: {} })).body).toEqual({ message: '400 Bad request - "branch" not given' });
    expect((await s.request('POST', `${base}/${featureSha}/cherry_pick`, { token: owner.token, json: { branch: '' } })).status).toBe(400);
    expect((await s.request('POST', `${base}/${'f'.repeat(40)}/cherry_pick`, { token: owner.token, json: { branch: 'main' } })).body).toEqual({ message: '404 Commit Not Found' });
    expect((await s.request('POST', `${base}/${featureSha}/revert`, { token: owner.token, json: { branch: 'nope' } })).body).toEqual({ message: '404 Branch Not Found' });
    // main is protected (Maintainers push): a Developer is refused before anything is looked up.
    const devMain = await s.request('POST', `${base}/${featureSha}/revert`, { token: dev.token, json: { branch: 'main' } });
    expect(devMain.status).toBe(403);
    expect(devMain.body).toEqual({ message: '403 Forbidden - You are not allowed to push into this branch' });
    expect((await s.request('POST', `${base}/${featureSha}/revert`, { token: dev.token, json: { branch: 'feature' } })).status).toBe(201);
    const rep = await s.request('POST', `${base}/${featureSha}/revert`, { token: reporter.token, json: { branch: 'feature' } });
    expect(rep.status).toBe(403);
    expect(rep.body).toEqual({ message: '403 Forbidden - You are not allowed to push into this branch' });
    // The project comes before the parameters: an unknown one is 404 even without `branch`.
    expect((await s.request('POST', `/projects/999999/repository/commits/${featureSha}/revert`, { token: owner.token, json: {} })).status).toBe(404);
    expect((await s.request('POST', `${base}/${featureSha}/revert`, { token: outsider.token, json: { branch: 'feature' } })).status).toBe(404);
    expect((await s.request('POST', `${base}/${featureSha}/revert`, { token: null, json: { branch: 'feature' } })).status).toBe(404);
    expect(await tip('main')).toBe(before);
  });

  it('works for gitbeaker as a backport bot calls it', async () => {
    const api = new Gitlab({ host: s.url, token: owner.token });
    const sha = await commit('bot', 'c.txt', 'c\n', { start_branch: 'main' });
    await api.Branches.create(pid, 'stable', 'main~1');
    const picked = await api.Commits.cherryPick(pid, sha, 'stable');
    expect(picked.title).toBe('change c.txt');
    const reverted = await api.Commits.revert(pid, picked.id, 'stable');
    expect(reverted.title).toBe('Revert "change c.txt"');
  });
});
