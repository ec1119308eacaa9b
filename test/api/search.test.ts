// The search API: instance, group and project searches over projects, issues, merge requests,
// milestones, users and notes, and a project's files and commits; each scope keeps its read rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let outsider: U;
let pub: { id: number; path_with_namespace: string };
let priv: { id: number; path_with_namespace: string };
let group: { id: number };

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('finder');
  outsider = await s.createUser('stranger');
  group = (await s.request('POST', '/groups', { token: owner.token, json: { name: 'Seekers', path: 'seekers', visibility: 'public' } })).body;
  pub = await createProject(s, 'needle-public', { token: owner.token, visibility: 'public', extra: { namespace_id: group.id, description: 'haystack' } });
  priv = await createProject(s, 'needle-private', { token: owner.token, extra: { namespace_id: group.id } });
  for (const p of [pub, priv]) {
    await s.request('POST', `/projects/${p.id}/issues`, { token: owner.token, json: { title: `Needle issue in ${p.id}` } });
    await s.request('POST', `/projects/${p.id}/issues`, { token: owner.token, json: { title: 'Secret needle', confidential: true } });
    await s.request('POST', `/projects/${p.id}/milestones`, { token: owner.token, json: { title: 'Needle milestone' } });
    await commit(s, p.id, 'needle-branch', { 'src/needle.txt': 'line one\nthe Needle is here\nline three\n' }, { from: 'main', message: 'Add the NEEDLE file' });
    await openMr(s, p.id, 'needle-branch', { title: 'Needle change' }, owner.token);
  }
  await s.request('POST', `/projects/${pub.id}/issues/1/notes`, { token: owner.token, json: { body: 'a needle in a note' } });
}, 60_000);

afterAll(async () => closeServer(s));

const search = (token: string | null, path: string, query: Record<string, string>) => s.request('GET', path, { token, query });

describe('search', () => {
  it('needs a signed-in caller, a search and a valid scope', async () => {
    expect((await search(null, '/search', { scope: 'issues', search: 'x' })).status).toBe(401);
    expect((await search(owner.token, '/search', {})).body).toEqual({ message: '400 Bad request - "search" not given' });
    expect((await search(owner.token, '/search', { search: 'x', scope: 'wikis' })).body).toEqual({ error: 'scope does not have a valid value' });
    const blobs = await search(owner.token, '/search', { search: 'x', scope: 'blobs' });
    expect(blobs.status).toBe(400);
    expect(blobs.body).toEqual({ message: { error: 'Scope supported only with advanced search or exact code search' } });
  });

  it('finds issues, merge requests, projects, milestones and users the caller may read', async () => {
    const mine = await search(owner.token, '/search', { scope: 'issues', search: 'needle' });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('x-search-type')).toBe('basic');
    expect(mine.body.length).toBe(4);
    expect(mine.body[0]._links).toBeUndefined();
    const theirs = await search(outsider.token, '/search', { scope: 'issues', search: 'NEEDLE' });
    expect(theirs.body.map((i: any) => i.title)).toEqual([`Needle issue in ${pub.id}`]);
    expect((await search(outsider.token, '/search', { scope: 'merge_requests', search: 'needle' })).body.map((m: any) => m.project_id)).toEqual([pub.id]);
    expect((await search(outsider.token, '/search', { scope: 'merge_requests', search: 'needle', state: 'merged' })).body).toEqual([]);
    expect((await search(outsider.token, '/search', { scope: 'projects', search: 'needle' })).body.map((p: any) => p.id)).toEqual([pub.id]);
    expect((await search(owner.token, '/search', { scope: 'projects', search: 'haystack' })).body.map((p: any) => p.id)).toEqual([pub.id]);
    expect((await search(outsider.token, '/search', { scope: 'milestones', search: 'needle' })).body.map((m: any) => m.project_id)).toEqual([pub.id]);
    expect((await search(outsider.token, '/search', { scope: 'users', search: 'finder' })).body.map((u: any) => u.username)).toEqual(['finder']);
    expect((await search(outsider.token, '/search', { scope: 'snippet_titles', search: 'x' })).body).toEqual([]);
  });

  it('searches within a group and a project', async () => {
    expect((await search(owner.token, `/groups/${group.id}/search`, { scope: 'issues', search: 'needle', confidential: 'true' })).body.length).toBe(2);
    expect((await search(owner.token, `/groups/${group.id}/search`, { scope: 'users', search: 'find' })).body.map((u: any) => u.username)).toEqual(['finder']);
    expect((await search(owner.token, `/groups/${group.id}/search`, { scope: 'commits', search: 'x' })).status).toBe(400);
    expect((await search(outsider.token, `/projects/${priv.id}/search`, { scope: 'issues', search: 'needle' })).body).toEqual({ message: '404 Project Not Found' });
    const issues = await search(owner.token, `/projects/${pub.id}/search`, { scope: 'issues', search: 'needle' });
    expect(issues.body.map((i: any) => i.project_id)).toEqual([pub.id, pub.id]);
    const notes = await search(outsider.token, `/projects/${pub.id}/-/search`, { scope: 'notes', search: 'NEEDLE' });
    expect(notes.body.map((n: any) => [n.body, n.noteable_type, n.noteable_iid])).toEqual([['a needle in a note', 'Issue', 1]]);
  });

  it('searches a project\'s files and commit messages (default branch, or ref)', async () => {
    const none = await search(owner.token, `/projects/${pub.id}/search`, { scope: 'blobs', search: 'needle is' });
    expect(none.body).toEqual([]);
    const blobs = await search(owner.token, `/projects/${pub.id}/search`, { scope: 'blobs', search: 'needle IS', ref: 'needle-branch' });
    expect(blobs.body).toEqual([{ basename: 'src/needle', data: 'line one\nthe Needle is here\nline three\n', path: 'src/needle.txt', filename: 'src/needle.txt', id: null, ref: 'needle-branch', startline: 1, project_id: pub.id }]);
    const commits = await search(owner.token, `/projects/${pub.id}/search`, { scope: 'commits', search: 'needle file', ref: 'needle-branch' });
    expect(commits.body.map((x: any) => x.title)).toEqual(['Add the NEEDLE file']);
    expect(commits.body[0].stats).toBeUndefined();
    expect((await search(owner.token, `/projects/${pub.id}/search`, { scope: 'commits', search: 'x', ref: 'no-such-branch' })).body).toEqual([]);
    expect((await search(owner.token, `/projects/${pub.id}/search`, { scope: 'blobs', search: '--output=/tmp/x', ref: 'needle-branch' })).body).toEqual([]);
  });
});

describe('search: review cases', () => {
  it('hides milestones where neither issues nor merge requests are readable; an empty term finds nothing', async () => {
    const p = await createProject(s, 'closed-features', { token: owner.token, visibility: 'public', extra: { issues_access_level: 'private', merge_requests_access_level: 'private' } });
    await s.request('POST', `/projects/${p.id}/milestones`, { token: owner.token, json: { title: 'hidden zz milestone' } });
    expect((await search(outsider.token, `/projects/${p.id}/search`, { scope: 'milestones', search: 'zz' })).body).toEqual([]);
    expect((await search(owner.token, `/projects/${p.id}/search`, { scope: 'milestones', search: 'zz' })).body.length).toBe(1);
    expect((await search(owner.token, '/search', { scope: 'issues', search: '' })).body).toEqual([]);
    expect((await search(owner.token, `/projects/${pub.id}/search`, { scope: 'blobs', search: ' ' })).body).toEqual([]);
  });

  it('a ref that does not resolve finds nothing; a common term in a large file serves its first page', async () => {
    for (const ref of ['no-such-branch', 'main~999', 'main..needle-branch', 'refs/merge-requests/99/head']) {
      const r = await search(owner.token, `/projects/${pub.id}/search`, { scope: 'blobs', search: 'needle', ref });
      expect([r.status, r.body], ref).toEqual([200, []]);
    }
    const big = Array.from({ length: 200_000 }, (_, i) => `common line ${i}`).join('\n');
    await commit(s, pub.id, 'big', { 'big.txt': big }, { from: 'main' });
    const r = await search(owner.token, `/projects/${pub.id}/search`, { scope: 'blobs', search: 'common', ref: 'big', per_page: '2' });
    expect(r.status).toBe(200);
    expect(r.body.map((b: any) => [b.path, b.startline, b.data.split('\n').length - 1])).toEqual([['big.txt', 1, 50], ['big.txt', 51, 50]]);
    expect(r.headers.get('x-next-page')).toBe('2');
  });
});

describe('milestones where issues and merge requests are hidden', () => {
  it('are 403 to callers who may read neither (GitLab read_milestone), readable to members', async () => {
    const p = await createProject(s, 'no-features', { token: owner.token, visibility: 'public', extra: { issues_access_level: 'private', merge_requests_access_level: 'private' } });
    await s.request('POST', `/projects/${p.id}/milestones`, { token: owner.token, json: { title: 'private plan' } });
    expect((await s.request('GET', `/projects/${p.id}/milestones`, { token: outsider.token })).status).toBe(403);
    expect((await s.request('GET', `/projects/${p.id}/milestones`, { token: null })).status).toBe(403);
    expect((await s.request('GET', `/projects/${p.id}/milestones`, { token: owner.token })).body.map((m: any) => m.title)).toEqual(['private plan']);
  });
});
