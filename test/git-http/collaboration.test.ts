// allow_collaboration: a member of the target project who may push to (or merge into) the target
// branch pushes to the fork's source branch of an open merge request that allows it, with git over
// HTTP, and to nothing else of the fork.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, gitFails } from '../helpers/git.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, repo } from '../api/mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let author: U;
let maintainer: U;
let developer: U;
let upstream: { id: number };
let fork: { id: number; path_with_namespace: string };
let work: string;

beforeAll(async () => {
  s = await startServer();
  author = await s.createUser('contributor');
  maintainer = await s.createUser('upmaint');
  developer = await s.createUser('updev');
  upstream = await createProject(s, 'collab-up', { token: maintainer.token, visibility: 'public' });
  await addMember(s, upstream.id, developer.id, 30);
  const f = await s.request('POST', `/projects/${upstream.id}/fork`, { token: author.token });
  expect(f.status, f.text).toBe(201);
  fork = f.body;
  await commit(s, fork.id, 'topic', { 'topic.txt': 'one\n' }, { from: 'main' });
  await commit(s, fork.id, 'other', { 'other.txt': 'one\n' }, { from: 'main' });
  const mr = await s.request('POST', `/projects/${fork.id}/merge_requests`, {
    token: author.token,
    json: { source_branch: 'topic', target_branch: 'main', title: 'Let maintainers help', target_project_id: upstream.id, allow_collaboration: true },
  });
  expect(mr.status, mr.text).toBe(201);
  work = mkdtempSync(join(tmpdir(), 'labwright-collab-'));
}, 60_000);

afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await closeServer(s);
});

async function cloneAs(u: U, name: string): Promise<string> {
  const url = new URL(`${s.url}/${fork.path_with_namespace}.git`);
  url.username = u.username;
  url.password = u.token;
  await git(work, 'clone', '--quiet', url.toString(), name);
  const dir = join(work, name);
  await git(dir, 'checkout', '--quiet', 'topic');
  return dir;
}

describe('allow_collaboration', () => {
  it("lets the target's maintainer push to the source branch, and only there", async () => {
    const dir = await cloneAs(maintainer, 'm');
    writeFileSync(join(dir, 'help.txt'), 'a fix from upstream\n');
    await git(dir, 'add', 'help.txt');
    await git(dir, 'commit', '--quiet', '-m', 'help from upstream');
    await git(dir, 'push', '--quiet', 'origin', 'HEAD:refs/heads/topic');
    const head = (await git(dir, 'rev-parse', 'HEAD')).trim();
    expect(await repo(s, fork.id).branchSha('topic')).toBe(head);
    // Other branches, new branches, tags and deletions stay the fork's.
    expect(await gitFails(dir, 'push', '--force', 'origin', 'HEAD:refs/heads/other')).toMatch(/You are not allowed to push code to this project/);
    expect(await gitFails(dir, 'push', 'origin', 'HEAD:refs/heads/brand-new')).toMatch(/You are not allowed to push code to this project/);
    expect(await gitFails(dir, 'push', 'origin', 'HEAD:refs/tags/v9')).toMatch(/You are not allowed to push code to this project/);
    expect(await gitFails(dir, 'push', 'origin', ':refs/heads/topic')).toMatch(/You are not allowed to push code to this project/);
    expect(await repo(s, fork.id).branchSha('brand-new')).toBeNull();
  });

  it("refuses the target's developers (they may not push to the protected target branch) and everyone once collaboration is off", async () => {
    const dir = await cloneAs(developer, 'd');
    writeFileSync(join(dir, 'dev.txt'), 'x\n');
    await git(dir, 'add', 'dev.txt');
    await git(dir, 'commit', '--quiet', '-m', 'dev');
    expect(await gitFails(dir, 'push', 'origin', 'HEAD:refs/heads/topic')).toMatch(/You are not allowed to push code to this project|403/);
    const mr = (await s.request('GET', `/projects/${upstream.id}/merge_requests`, { token: maintainer.token })).body[0];
    const off = await s.request('PUT', `/projects/${upstream.id}/merge_requests/${mr.iid}`, { token: author.token, json: { allow_collaboration: false } });
    expect(off.status, off.text).toBe(200);
    const m = await cloneAs(maintainer, 'm2');
    writeFileSync(join(m, 'late.txt'), 'x\n');
    await git(m, 'add', 'late.txt');
    await git(m, 'commit', '--quiet', '-m', 'late');
    expect(await gitFails(m, 'push', 'origin', 'HEAD:refs/heads/topic')).toMatch(/You are not allowed to push code to this project|403/);
  });
});

describe('allow_collaboration: who may turn it on, and metadata from outsiders', () => {
  it('only someone who may push to the source project sets allow_collaboration; outsiders set no metadata and track no time', async () => {
    await commit(s, fork.id, 'second', { 'second.txt': 'x\n' }, { from: 'main' });
    const created = await s.request('POST', `/projects/${fork.id}/merge_requests`, {
      token: author.token,
      json: { source_branch: 'second', target_branch: 'main', title: 'No help wanted', target_project_id: upstream.id, labels: 'from-outside', assignee_ids: [maintainer.id] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ allow_collaboration: false, labels: [], assignees: [] });
    const iid = created.body.iid;
    const byMaintainer = await s.request('PUT', `/projects/${upstream.id}/merge_requests/${iid}`, { token: maintainer.token, json: { allow_collaboration: true, title: 'Renamed upstream' } });
    expect(byMaintainer.body).toMatchObject({ title: 'Renamed upstream', allow_collaboration: false });
    const byAuthor = await s.request('PUT', `/projects/${upstream.id}/merge_requests/${iid}`, { token: author.token, json: { labels: 'sneaky', discussion_locked: true, title: 'Mine again' } });
    expect(byAuthor.status).toBe(200);
    expect(byAuthor.body).toMatchObject({ title: 'Mine again', labels: [], discussion_locked: null });
    const labels = await s.request('GET', `/projects/${upstream.id}/labels`, { token: maintainer.token });
    expect(labels.body.map((l: any) => l.name)).not.toContain('sneaky');
    expect((await s.request('POST', `/projects/${upstream.id}/merge_requests/${iid}/time_estimate`, { token: author.token, json: { duration: '1h' } })).status).toBe(403);
    expect((await s.request('PUT', `/projects/${upstream.id}/merge_requests/${iid}`, { token: author.token, json: { allow_collaboration: true } })).body.allow_collaboration).toBe(true);
  });
});
