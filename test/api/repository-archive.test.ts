// Repository archives (GET /projects/:id/repository/archive[.format]): real archives, listed with
// the system's tar and unzip, in every format GitLab serves.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, repo } from './mr-helpers.js';
import { signIn } from '../oauth/helpers.js';

let s: TestServer;
let pid: number;
let privPid: number;
let guest: { id: number; token: string };
let sha: string;
const dir = mkdtempSync(join(tmpdir(), 'labwright-archive-'));

async function download(path: string, token?: string | null): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers['PRIVATE-TOKEN'] = token ?? ROOT_TOKEN;
  const res = await fetch(`${s.url}/api/v4${path}`, { headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

function list(body: Buffer, name: string, command: string[]): string[] {
  const file = join(dir, name);
  writeFileSync(file, body);
  return execFileSync(command[0]!, [...command.slice(1), file], { encoding: 'utf8' }).split('\n').map((l) => l.trim()).filter(Boolean);
}

beforeAll(async () => {
  s = await startServer();
  guest = await s.createUser('aguest');
  pid = (await createProject(s, 'arch', { visibility: 'public' })).id;
  privPid = (await createProject(s, 'arch-priv')).id;
  await addMember(s, privPid, guest.id, 10);
  sha = await commit(s, pid, 'main', { 'src/app.txt': 'app', 'docs/guide.md': 'guide' });
  await commit(s, pid, 'feature/x', { 'feature.txt': 'f' }, { from: 'main' });
});
afterAll(async () => {
  await closeServer(s);
  rmSync(dir, { recursive: true, force: true });
});

describe('repository archives', () => {
  it('tar.gz by default, of the default branch, named as GitLab names it', async () => {
    const r = await download(`/projects/${pid}/repository/archive`, null);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    const prefix = `arch-main-${sha}`;
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="${prefix}.tar.gz"`);
    const files = list(r.body, 'a.tar.gz', ['tar', '-tzf']);
    expect(files).toContain(`${prefix}/src/app.txt`);
    expect(files).toContain(`${prefix}/docs/guide.md`);
    expect(files).toContain(`${prefix}/README.md`);
  });

  it('zip, tar, tar.bz2 and their aliases; sha, path and exclude_paths', async () => {
    let r = await download(`/projects/${pid}/repository/archive.zip?sha=feature/x`);
    expect(r.headers.get('content-type')).toBe('application/zip');
    const featureSha = await repo(s, pid).branchSha('feature/x');
    const prefix = `arch-feature-x-${featureSha}`;
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="${prefix}.zip"`);
    expect(list(r.body, 'a.zip', ['unzip', '-Z1']).filter((f) => !f.endsWith('/'))).toEqual(
      expect.arrayContaining([`${prefix}/feature.txt`, `${prefix}/src/app.txt`]),
    );
    r = await download(`/projects/${pid}/repository/archive.tar?path=docs`);
    expect(list(r.body, 'a.tar', ['tar', '-tf']).filter((f) => !f.endsWith('/'))).toEqual([`arch-main-${sha}-docs/docs/guide.md`]);
    for (const format of ['tar.bz2', 'tbz2', 'bz2']) {
      r = await download(`/projects/${pid}/repository/archive.${format}`);
      expect(r.headers.get('content-disposition'), format).toBe(`attachment; filename="arch-main-${sha}.tar.bz2"`);
      expect(list(r.body, 'a.tar.bz2', ['tar', '-tjf'])).toContain(`arch-main-${sha}/src/app.txt`);
    }
    r = await download(`/projects/${pid}/repository/archive?format=tgz&exclude_paths[]=docs`);
    const files = list(r.body, 'b.tar.gz', ['tar', '-tzf']);
    expect(files).toContain(`arch-main-${sha}/src/app.txt`);
    expect(files.some((f) => f.includes('docs/'))).toBe(false);
  });

  it('what cannot be archived is 404 File Not Found; who may not read the code gets 403', async () => {
    for (const q of ['?sha=nope', '?sha=--output=/tmp/x', '?path=missing', '?path=../x', `?sha=${'f'.repeat(40)}`, '?exclude_paths[]=nope', '?path=[ds]*']) {
      const r = await download(`/projects/${pid}/repository/archive${q}`);
      expect([r.status, JSON.parse(r.body.toString())], q).toEqual([404, { message: '404 File Not Found' }]);
    }
    let r = await download(`/projects/${pid}/repository/archive.rar`);
    expect(r.status).toBe(404);
    r = await download(`/projects/${privPid}/repository/archive`, guest.token);
    expect(r.status).toBe(403);
    r = await download(`/projects/${privPid}/repository/archive`, null);
    expect(r.status).toBe(404);
  });
});

describe('web archive downloads (/-/archive/…)', () => {
  async function web(path: string, token?: string | null) {
    const headers: Record<string, string> = {};
    if (token) headers['PRIVATE-TOKEN'] = token;
    const res = await fetch(`${s.url}${path}`, { headers, redirect: 'manual' });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  it('serves the links GitLab pages and release sources use, named as GitLab names them', async () => {
    let r = await web('/root/arch/-/archive/main/arch-main.tar.gz');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="arch-main.tar.gz"');
    expect(list(r.body, 'w.tar.gz', ['tar', '-tzf'])).toContain('arch-main/src/app.txt');
    r = await web('/root/arch/-/archive/feature/x/arch-feature-x.zip');
    expect(r.headers.get('content-type')).toBe('application/zip');
    expect(list(r.body, 'w.zip', ['unzip', '-Z1'])).toContain('arch-feature-x/feature.txt');
    // Without a file name (or another one) the commit is appended, as GitLab's append_sha.
    r = await web('/root/arch/-/archive/main.tar');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="arch-main-${sha}.tar"`);
    r = await web('/root/arch/-/archive/main/arch-main.tar?path=docs');
    expect(list(r.body, 'w.tar', ['tar', '-tf']).filter((f) => !f.endsWith('/'))).toEqual(['arch-main-docs/docs/guide.md']);
    expect((await web('/root/arch/-/archive/main/arch-main.rar')).status).toBe(404);
    expect((await web('/root/arch/-/archive/nope/arch-nope.zip')).status).toBe(404);
    // A release's source links lead here.
    await s.request('POST', `/projects/${pid}/repository/tags`, { json: { tag_name: 'v1.0', ref: 'main' } });
    const rel = await s.request('POST', `/projects/${pid}/releases`, { json: { tag_name: 'v1.0' } });
    expect(rel.status).toBe(201);
    for (const source of rel.body.assets.sources as Array<{ url: string }>) {
      const got = await web(new URL(source.url).pathname);
      expect(got.status, source.url).toBe(200);
      expect(got.headers.get('content-disposition'), source.url).toContain('filename="arch-v1.0.');
    }
    // The tag (and its release) go again: later tests count this project's tags.
    expect((await s.request('DELETE', `/projects/${pid}/repository/tags/v1.0`)).status).toBe(204);
  });

  it('takes a token for a private project, and sends an anonymous caller to sign in', async () => {
    const anonymous = await web('/root/arch-priv/-/archive/main/arch-priv-main.zip');
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toBe(`/users/sign_in?redirect_to=${encodeURIComponent('/root/arch-priv/-/archive/main/arch-priv-main.zip')}`);
    expect((await web('/root/arch-priv/-/archive/main/arch-priv-main.zip', ROOT_TOKEN)).status).toBe(200);
    expect((await web('/root/arch-priv/-/archive/main/arch-priv-main.zip?private_token=' + ROOT_TOKEN)).status).toBe(200);
    // GitLab's access_denied! on a page: 404, also for a Guest who sees the project but not its code.
    expect((await web('/root/arch-priv/-/archive/main/arch-priv-main.zip', guest.token)).status).toBe(404);
    // A refused token is no token (GitLab's sessionless access): public archives still download.
    expect((await web('/root/arch/-/archive/main/arch-main.zip', 'not-a-token')).status).toBe(200);
    expect((await web('/api/v4/-/archive/main.zip')).status).toBe(404);
  });

  it('takes a signed-in browser session, and keeps unpackers inside the archive directory', async () => {
    const browser = await signIn(s, 'root', 'root-password-123');
    const r = await browser.get('/root/arch-priv/-/archive/main/arch-priv-main.zip');
    expect(r.status).toBe(200);
    // A revision with backslashes: the directory entries lie in is flattened, as '/' is.
    // (`^{/!-…}`: the newest commit whose message does not match, so it resolves.)
    const odd = await web(`/root/arch/-/archive/${encodeURIComponent(String.raw`main^{/!-\..\..\zzz}`)}/x.zip`);
    expect(odd.status).toBe(200);
    const entries = list(odd.body, 'odd.zip', ['unzip', '-Z1']);
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(entry.split('/')[0]).not.toContain('\\');
  });
});

describe('blobs, merge base, contributors', () => {
  it('an empty blob is an empty 200', async () => {
    await commit(s, pid, 'empty-blob', { 'empty.txt': '' }, { from: 'main' });
    const tree = await s.request('GET', `/projects/${pid}/repository/tree?ref=empty-blob`);
    const entry = tree.body.find((e: any) => e.name === 'empty.txt');
    const r = await s.request('GET', `/projects/${pid}/repository/blobs/${entry.id}/raw`);
    expect([r.status, r.text]).toEqual([200, '']);
  });

  it('a blob by id, as JSON (base64) and raw', async () => {
    const tree = await s.request('GET', `/projects/${pid}/repository/tree?path=src`);
    const entry = tree.body.find((e: any) => e.name === 'app.txt');
    let r = await s.request('GET', `/projects/${pid}/repository/blobs/${entry.id}`);
    expect(r.body).toEqual({ size: 3, encoding: 'base64', content: Buffer.from('app').toString('base64'), sha: entry.id });
    r = await s.request('GET', `/projects/${pid}/repository/blobs/${entry.id.slice(0, 8)}/raw`, { token: null });
    expect([r.status, r.text, r.headers.get('content-type'), r.headers.get('cache-control')]).toEqual([200, 'app', 'text/plain; charset=utf-8', 'no-cache, no-store']);
    for (const bad of [sha, 'nothex', 'f'.repeat(40)]) {
      r = await s.request('GET', `/projects/${pid}/repository/blobs/${bad}`);
      expect([r.status, r.body], bad).toEqual([404, { message: '404 Blob Not Found' }]);
    }
    expect((await s.request('GET', `/projects/${privPid}/repository/blobs/${entry.id}`, { token: guest.token })).status).toBe(403);
  });

  it('merge_base of two or more refs, with GitLab errors', async () => {
    let r = await s.request('GET', `/projects/${pid}/repository/merge_base?refs[]=main&refs[]=feature/x`);
    expect([r.status, r.body.id]).toEqual([200, sha]);
    r = await s.request('GET', `/projects/${pid}/repository/merge_base?refs=main,feature/x,${sha}`);
    expect(r.body.id).toBe(sha);
    r = await s.request('GET', `/projects/${pid}/repository/merge_base?refs[]=main`);
    expect([r.status, r.body]).toEqual([400, { message: 'Provide at least 2 refs' }]);
    r = await s.request('GET', `/projects/${pid}/repository/merge_base?refs[]=main&refs[]=nope&refs[]=--all`);
    expect([r.status, r.body]).toEqual([400, { message: 'Could not find refs: nope, --all' }]);
    // Unrelated histories have no merge base.
    const lone = await repo(s, pid).commitFiles({ branch: 'orphan', startSha: null, message: 'alone', author: { name: 'A', email: 'a@example.com' }, actions: [{ action: 'create', file_path: 'x', content: 'x' }], expectedOldSha: null });
    r = await s.request('GET', `/projects/${pid}/repository/merge_base?refs[]=main&refs[]=${lone}`);
    expect([r.status, r.body]).toEqual([404, { message: '404 Merge Base Not Found' }]);
  });

  it('contributors by email, ordered and paginated', async () => {
    await repo(s, pid).commitFiles({ branch: 'main', startSha: await repo(s, pid).branchSha('main'), message: 'by ann', author: { name: 'Ann', email: 'ann@example.com' }, actions: [{ action: 'create', file_path: 'ann.txt', content: 'a' }], expectedOldSha: await repo(s, pid).branchSha('main') });
    let r = await s.request('GET', `/projects/${pid}/repository/contributors`);
    // By commits (ascending), then email: the project's first commit, Ann's, and the test's author's.
    expect(r.body.map((x: any) => [x.email, x.commits])).toEqual([['admin@example.com', 1], ['ann@example.com', 1], ['dev@example.com', 1]]);
    expect(Object.keys(r.body[0])).toEqual(['name', 'email', 'commits', 'additions', 'deletions']);
    r = await s.request('GET', `/projects/${pid}/repository/contributors?order_by=name&sort=desc`);
    const names = r.body.map((x: any) => x.name);
    expect(names).toEqual([...names].sort().reverse());
    r = await s.request('GET', `/projects/${pid}/repository/contributors?ref=nope`);
    expect([r.status, r.body]).toEqual([404, { message: '404 Not Found' }]);
  });
});

describe('commit refs', () => {
  it('the branches and tags that contain a commit', async () => {
    expect((await s.request('POST', `/projects/${pid}/repository/tags`, { json: { tag_name: 'r1', ref: sha } })).status).toBe(201);
    let r = await s.request('GET', `/projects/${pid}/repository/commits/${sha}/refs`);
    expect(r.body).toEqual(expect.arrayContaining([{ type: 'branch', name: 'main' }, { type: 'branch', name: 'feature/x' }, { type: 'tag', name: 'r1' }]));
    r = await s.request('GET', `/projects/${pid}/repository/commits/${sha}/refs?type=tag`);
    expect(r.body).toEqual([{ type: 'tag', name: 'r1' }]);
    const branches = (await s.request('GET', `/projects/${pid}/repository/commits/${sha}/refs?type=branch`)).body;
    expect(branches.every((b: any) => b.type === 'branch')).toBe(true);
    r = await s.request('GET', `/projects/${pid}/repository/commits/${sha}/refs?type=branch&per_page=1`);
    expect([r.body.length, r.headers.get('x-total')]).toEqual([1, String(branches.length)]);
    r = await s.request('GET', `/projects/${pid}/repository/commits/${'e'.repeat(40)}/refs`);
    expect([r.status, r.body]).toEqual([404, { message: '404 Commit Not Found' }]);
    r = await s.request('GET', `/projects/${pid}/repository/commits/${sha}/refs?type=remote`);
    expect(r.status).toBe(400);
  });
});

describe('commit comments', () => {
  it('plain comments and comments on a line of the commit, as CommitNote', async () => {
    const base = `/projects/${pid}/repository/commits/${sha}/comments`;
    let r = await s.request('POST', base, { token: guest.token, json: { note: 'Coverage 93%' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['note', 'path', 'line', 'line_type', 'author', 'created_at']);
    expect(r.body).toMatchObject({ note: 'Coverage 93%', path: null, line: null, line_type: null, author: { username: 'aguest' } });
    // src/app.txt was added by this commit: its line 1 is a 'new' line of the diff.
    r = await s.request('POST', base, { json: { note: 'here', path: 'src/app.txt', line: 1, line_type: 'new' } });
    expect(r.body).toMatchObject({ path: 'src/app.txt', line: 1, line_type: 'new' });
    // A line the diff does not show makes a plain comment, as GitLab.
    r = await s.request('POST', base, { json: { note: 'elsewhere', path: 'src/app.txt', line: 9 } });
    expect([r.status, r.body.path, r.body.line]).toEqual([201, null, null]);
    r = await s.request('GET', base, { token: null });
    expect(r.body.map((n: any) => n.note)).toEqual(['Coverage 93%', 'here', 'elsewhere']);
    expect(r.headers.get('x-total')).toBe('3');
    // Errors write nothing.
    expect((await s.request('POST', base, { json: {} })).body).toEqual({ message: '400 Bad request - "note" not given' });
    expect((await s.request('POST', base, { json: { note: ' ' } })).body).toEqual({ message: `Failed to save note {:note=>["can't be blank"]}` });
    expect((await s.request('POST', base, { json: { note: 'x', line_type: 'middle' } })).status).toBe(400);
    expect((await s.request('POST', base, { token: null, json: { note: 'x' } })).status).toBe(401);
    expect((await s.request('POST', `/projects/${pid}/repository/commits/${'e'.repeat(40)}/comments`, { json: { note: 'x' } })).body).toEqual({ message: '404 Commit Not Found' });
    expect((await s.request('GET', base)).body).toHaveLength(3);
    // Comments on commits are not merge request notes.
    expect((await s.request('GET', `/projects/${privPid}/repository/commits/${sha}/comments`, { token: guest.token })).status).toBe(403);
  });
});
