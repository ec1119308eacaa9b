// Tags API through plain HTTP: create (lightweight and annotated), list with GitLab's ordering and
// search, show, delete; tags seen by git and tags pushed with git seen by the API; access rules;
// bad input.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIT_ENV } from '../helpers/git.js';
import { startServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

type U = { id: number; username: string; token: string };
let s: TestServer;
let owner: U, dev: U, reporter: U, outsider: U;
let pid: number;
let path: string;
let first: string; // the README commit
let second: string; // main's tip
let work: string;

const enc = encodeURIComponent;

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: GIT_ENV });
  return stdout;
}

function remote(token: string): string {
  return `http://oauth2:${token}@${s.url.replace('http://', '')}/${path}.git`;
}

const tags = (body: any[]) => body.map((t: any) => t.name);

beforeAll(async () => {
  // A Developer writes main and pushes tags here: default branches are left unprotected
  // (GitLab's default_branch_protection 0; test/api/protected-refs.test.ts covers protection).
  s = await startServer({ LABWRIGHT_DEFAULT_BRANCH_PROTECTION: '0' });
  [owner, dev, reporter, outsider] = await Promise.all(['towner', 'tdev', 'trep', 'tout'].map((n) => s.createUser(n)));
  const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'tagged', visibility: 'private', initialize_with_readme: true } });
  expect(p.status).toBe(201);
  pid = p.body.id;
  path = p.body.path_with_namespace;
  for (const [u, level] of [[dev, 30], [reporter, 20]] as const) {
    expect((await s.request('POST', `/projects/${pid}/members`, { token: owner.token, json: { user_id: u.id, access_level: level } })).status).toBe(201);
  }
  first = (await s.request('GET', `/projects/${pid}/repository/branches/main`, { token: dev.token })).body.commit.id;
  const f = await s.request('POST', `/projects/${pid}/repository/files/${enc('CHANGELOG.md')}`, { token: dev.token, json: { branch: 'main', content: '1.0\n', commit_message: 'Changelog' } });
  expect(f.status).toBe(201);
  second = (await s.request('GET', `/projects/${pid}/repository/branches/main`, { token: dev.token })).body.commit.id;
  work = await mkdtemp(join(tmpdir(), 'lw-tags-'));
});

afterAll(async () => {
  await s?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('tags', () => {
  it('a repository without tags lists none', async () => {
    const r = await s.request('GET', `/projects/${pid}/repository/tags`, { token: reporter.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    expect(r.headers.get('x-total')).toBe('0');
  });

  it('creates a lightweight tag from a branch, in GitLab’s fields and order', async () => {
    const r = await s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json: { tag_name: 'v1.0.0', ref: 'main' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['name', 'message', 'target', 'commit', 'release', 'protected', 'created_at']);
    expect(r.body).toMatchObject({ name: 'v1.0.0', message: null, target: second, release: null, protected: false, created_at: null });
    expect(r.body.commit).toMatchObject({ id: second, title: 'Changelog', author_name: 'tdev' });
  });

  it('creates an annotated tag from a sha, with the caller as tagger', async () => {
    const before = Date.now();
    const r = await s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json: { tag_name: 'v0.9', ref: first, message: 'Release 0.9\n\nFirst cut.' } });
    expect(r.status).toBe(201);
    expect(r.body.name).toBe('v0.9');
    expect(r.body.message).toBe('Release 0.9\n\nFirst cut.');
    expect(r.body.commit.id).toBe(first);
    expect(r.body.target).toMatch(/^[0-9a-f]{40}$/);
    expect(r.body.target).not.toBe(first);
    expect(r.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000[+-]\d{2}:\d{2}$/);
    expect(Date.parse(r.body.created_at)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    // git sees a real tag object, by the caller.
    await git(work, 'clone', '-q', remote(dev.token), 'clone');
    const cat = await git(join(work, 'clone'), 'cat-file', '-p', 'v0.9');
    expect(cat).toContain(`object ${first}`);
    expect(cat).toContain('tagger tdev <tdev@example.com>');
    expect((await git(join(work, 'clone'), 'rev-parse', 'v1.0.0')).trim()).toBe(second);
  });

  it('tags pushed with git are listed; order_by, sort, search and pagination', async () => {
    const repo = join(work, 'clone');
    // v1.10.0 on a commit dated later than the others (those were made within a second or so).
    await run('git', ['commit', '-q', '--allow-empty', '-m', 'Later'], { cwd: repo, env: { ...GIT_ENV, GIT_COMMITTER_DATE: '2030-01-01T00:00:00Z' } });
    await git(repo, 'tag', 'v1.10.0', 'HEAD');
    await git(repo, 'tag', '-a', '-m', 'Nine', 'v1.9.0', first);
    await git(repo, 'push', '-q', 'origin', 'main', 'v1.10.0', 'v1.9.0');
    const list = async (query: Record<string, string>) => {
      const r = await s.request('GET', `/projects/${pid}/repository/tags`, { token: reporter.token, query });
      expect(r.status).toBe(200);
      return r;
    };
    expect(tags((await list({ order_by: 'name', sort: 'asc' })).body)).toEqual(['v0.9', 'v1.0.0', 'v1.10.0', 'v1.9.0']);
    expect(tags((await list({ order_by: 'version' })).body)).toEqual(['v1.10.0', 'v1.9.0', 'v1.0.0', 'v0.9']);
    expect(tags((await list({ order_by: 'version', sort: 'asc' })).body)).toEqual(['v0.9', 'v1.0.0', 'v1.9.0', 'v1.10.0']);
    // updated (the default): by the commit's date, newest first.
    const byDate = tags((await list({})).body);
    expect(byDate[0]).toBe('v1.10.0');
    expect(byDate.slice(1).sort()).toEqual(['v0.9', 'v1.0.0', 'v1.9.0']);
    expect(tags((await list({ order_by: 'updated', sort: 'asc' })).body)[3]).toBe('v1.10.0');
    const nine = (await list({ search: 'v1.9.0' })).body[0];
    expect(nine).toMatchObject({ name: 'v1.9.0', message: 'Nine', protected: false, release: null });
    expect(nine.commit.id).toBe(first);
    expect(nine.created_at).not.toBeNull();
    expect(tags((await list({ search: '^v1.1' })).body)).toEqual(['v1.10.0']);
    expect(tags((await list({ search: '.0$', order_by: 'name', sort: 'asc' })).body)).toEqual(['v1.0.0', 'v1.10.0', 'v1.9.0']);
    const page = await list({ order_by: 'name', sort: 'asc', per_page: '3', page: '2' });
    expect(tags(page.body)).toEqual(['v1.9.0']);
    expect(page.headers.get('x-total')).toBe('4');
    expect(page.headers.get('x-total-pages')).toBe('2');
  });

  it('shows one tag, names with a slash URL-encoded', async () => {
    const c = await s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json: { tag_name: 'release/2.0', ref: 'v1.0.0' } });
    expect(c.status).toBe(201);
    expect(c.body.commit.id).toBe(second);
    const r = await s.request('GET', `/projects/${pid}/repository/tags/${enc('release/2.0')}`, { token: reporter.token });
    expect(r.status).toBe(200);
    expect(r.body.name).toBe('release/2.0');
    const missing = await s.request('GET', `/projects/${pid}/repository/tags/nope`, { token: reporter.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Tag Not Found' });
    expect((await s.request('GET', `/projects/${pid}/repository/tags/${enc('bad..name')}`, { token: reporter.token })).status).toBe(404);
  });

  it('strips the message; a blank one makes a lightweight tag', async () => {
    const spaced = await s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json: { tag_name: 'spaced', ref: 'main', message: '  Spaced out \n\n' } });
    expect(spaced.status).toBe(201);
    expect(spaced.body.message).toBe('Spaced out');
    const blank = await s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json: { tag_name: 'blank', ref: 'main', message: '  ' } });
    expect(blank.status).toBe(201);
    expect(blank.body).toMatchObject({ message: null, created_at: null, target: blank.body.commit.id });
    for (const name of ['spaced', 'blank']) expect((await s.request('DELETE', `/projects/${pid}/repository/tags/${name}`, { token: dev.token })).status).toBe(204);
  });

  it('refuses bad input with GitLab’s errors and changes nothing', async () => {
    const post = (json: Record<string, unknown>) => s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json });
    expect((await post({})).body).toEqual({ message: '400 Bad request - "tag_name" not given' });
    const exists = await post({ tag_name: 'v1.0.0', ref: first });
    expect(exists.status).toBe(400);
    expect(exists.body).toEqual({ message: 'Tag v1.0.0 already exists' });
    expect((await post({ tag_name: 'v3', ref: ' ' })).body).toEqual({ message: 'Target is empty' });
    const badRef = await post({ tag_name: 'v3', ref: 'no-such-branch' });
    expect(badRef.status).toBe(400);
    expect(badRef.body).toEqual({ message: 'Target no-such-branch is invalid' });
    for (const name of ['bad..name', '-v1', 'refs/tags/v4', 'HEAD', 'a b', 'v5.lock', '']) {
      const r = await post({ tag_name: name, ref: 'main' });
      expect(r.status, name).toBe(400);
    }
    expect((await post({ tag_name: 'bad..name', ref: 'main' })).body).toEqual({ message: 'Tag name invalid' });
    // The existing tag still points where it did.
    const still = await s.request('GET', `/projects/${pid}/repository/tags/v1.0.0`, { token: dev.token });
    expect(still.body.commit.id).toBe(second);
    const all = await s.request('GET', `/projects/${pid}/repository/tags`, { token: dev.token, query: { order_by: 'name', sort: 'asc' } });
    expect(tags(all.body)).toEqual(['release/2.0', 'v0.9', 'v1.0.0', 'v1.10.0', 'v1.9.0']);
  });

  it('readers may list, only Developers and above may create or delete; outsiders see nothing', async () => {
    const denied = await s.request('POST', `/projects/${pid}/repository/tags`, { token: reporter.token, json: { tag_name: 'v9', ref: 'main' } });
    expect(denied.status).toBe(403);
    expect((await s.request('DELETE', `/projects/${pid}/repository/tags/v0.9`, { token: reporter.token })).status).toBe(403);
    expect((await s.request('GET', `/projects/${pid}/repository/tags`, { token: outsider.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${pid}/repository/tags/v0.9`, { token: null })).status).toBe(404);
    expect((await s.request('POST', `/projects/${pid}/repository/tags`, { token: outsider.token, json: { tag_name: 'v9', ref: 'main' } })).status).toBe(404);
    expect((await s.request('GET', `/projects/${pid}/repository/tags/v9`, { token: owner.token })).status).toBe(404);
  });

  it('tags pushed with git that the API could not create: of a tree, of a tag, with a leading dash', async () => {
    const repo = join(work, 'clone');
    await git(repo, 'tag', 'treetag', 'HEAD^{tree}');
    await git(repo, 'tag', '-a', '-m', 'inner', 'inner', first);
    await git(repo, 'tag', '-a', '-m', 'outer', 'outer', 'inner');
    await git(repo, 'update-ref', 'refs/tags/-dash', first);
    await git(repo, 'push', '-q', 'origin', 'treetag', 'inner', 'outer');
    // A push of a tag with a leading dash is refused, as GitLab's TagCheck; one that an import
    // brought into the repository is still listed and served safely.
    await expect(git(repo, 'push', '-q', 'origin', 'refs/tags/-dash')).rejects.toThrow(/You cannot create a tag with a prohibited pattern\./);
    await git(repo, '--git-dir', join(s.dataDir, 'repositories', `${pid}.git`), 'update-ref', 'refs/tags/-dash', first);
    const all = await s.request('GET', `/projects/${pid}/repository/tags`, { token: reporter.token, query: { order_by: 'name', sort: 'asc', per_page: '100' } });
    expect(all.status).toBe(200);
    expect(tags(all.body)).toEqual(['-dash', 'inner', 'outer', 'release/2.0', 'treetag', 'v0.9', 'v1.0.0', 'v1.10.0', 'v1.9.0']);
    const byName = new Map(all.body.map((t: any) => [t.name, t]));
    expect((byName.get('treetag') as any).commit).toBeNull();
    expect((byName.get('outer') as any).commit.id).toBe(first);
    expect((byName.get('outer') as any).message).toBe('outer');
    const tree = await s.request('GET', `/projects/${pid}/repository/tags/treetag`, { token: reporter.token });
    expect(tree.status).toBe(200);
    expect(tree.body.commit).toBeNull();
    expect((await s.request('GET', `/projects/${pid}/repository/tags/outer`, { token: reporter.token })).body.commit.id).toBe(first);
    expect((await s.request('GET', `/projects/${pid}/repository/tags/-dash`, { token: reporter.token })).body.commit.id).toBe(first);
    // updated orders by when an annotated tag was made, not by its commit's date: outer (made now,
    // on the first commit) comes before v1.0.0 (lightweight, on an older commit).
    const updated = tags((await s.request('GET', `/projects/${pid}/repository/tags`, { token: reporter.token, query: { per_page: '100' } })).body);
    expect(updated[0]).toBe('v1.10.0');
    expect(updated.indexOf('outer')).toBeLessThan(updated.indexOf('v1.0.0'));
    for (const name of ['treetag', 'inner', 'outer', '-dash']) {
      expect((await s.request('DELETE', `/projects/${pid}/repository/tags/${enc(name)}`, { token: dev.token })).status, name).toBe(204);
    }
  });

  it('deletes a tag; git no longer has it; a second delete is 404', async () => {
    const d = await s.request('DELETE', `/projects/${pid}/repository/tags/v0.9`, { token: dev.token });
    expect(d.status).toBe(204);
    expect((await s.request('GET', `/projects/${pid}/repository/tags/v0.9`, { token: dev.token })).status).toBe(404);
    const again = await s.request('DELETE', `/projects/${pid}/repository/tags/v0.9`, { token: dev.token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Tag Not Found' });
    const refs = await git(work, 'ls-remote', '--tags', remote(reporter.token));
    expect(refs).not.toContain('refs/tags/v0.9');
    expect(refs).toContain(`${second}\trefs/tags/v1.0.0`);
    // The commit stays.
    expect((await s.request('GET', `/projects/${pid}/repository/commits/${first}`, { token: dev.token })).status).toBe(200);
  });

  it('order_by=version is git’s version order', async () => {
    for (const name of ['v2.1', 'v2.01', 'v2.001', 'v2.2-rc1']) {
      expect((await s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json: { tag_name: name, ref: 'main' } })).status).toBe(201);
    }
    const { stdout } = await run('git', ['-C', work, 'ls-remote', '--tags', '--sort=version:refname', remote(reporter.token), 'refs/tags/v2*'], { env: GIT_ENV });
    const gitOrder = stdout.split('\n').filter(Boolean).map((l) => l.split('refs/tags/')[1]);
    expect(gitOrder).toHaveLength(4);
    const r = await s.request('GET', `/projects/${pid}/repository/tags`, { token: reporter.token, query: { order_by: 'version', sort: 'asc', search: '^v2' } });
    expect(tags(r.body)).toEqual(gitOrder);
    const desc = await s.request('GET', `/projects/${pid}/repository/tags`, { token: reporter.token, query: { order_by: 'version', search: '^v2' } });
    expect(tags(desc.body)).toEqual([...gitOrder].reverse());
  });
});
