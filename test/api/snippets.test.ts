// Snippets: personal and project snippets as GitLab's APIs serve them: created with files[] or
// file_name + content (each in its own git repository), read as JSON and raw, updated with file
// actions, listed (/snippets, /public, /all, a project's), deleted with their repository; who may
// read and change which; GitLab's messages; python-gitlab's and gitbeaker's calls.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snippetRepoPath } from '../../src/services/snippets.js';
import { git } from '../helpers/git.js';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let alice: U;
let bob: U;
let guest: U;
let reporter: U;
let maint: U;
let project: { id: number; path_with_namespace: string };

const KEYS = ['id', 'title', 'description', 'visibility', 'author', 'created_at', 'updated_at', 'project_id', 'web_url', 'raw_url', 'ssh_url_to_repo', 'http_url_to_repo', 'file_name', 'files', 'imported', 'imported_from'];

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('snalice');
  bob = await s.createUser('snbob');
  guest = await s.createUser('snguest');
  reporter = await s.createUser('snreporter');
  maint = await s.createUser('snmaint');
  project = await createProject(s, 'snips', { token: alice.token });
  await addMember(s, project.id, guest.id, 10);
  await addMember(s, project.id, reporter.id, 20);
  await addMember(s, project.id, maint.id, 40);
}, 60_000);

afterAll(async () => closeServer(s));

describe('personal snippets', () => {
  let snip: any;

  it("creates one with files[], in GitLab's entity, internal by default, its files in a repository", async () => {
    const r = await s.request('POST', '/snippets', { token: alice.token, json: { title: 'Helpers', description: 'Two files', files: [{ file_path: 'b.sh', content: 'echo b\n' }, { file_path: 'lib/a.rb', content: 'puts 1\n' }] } });
    expect(r.status).toBe(201);
    snip = r.body;
    expect(Object.keys(snip)).toEqual(KEYS);
    expect(snip).toMatchObject({ title: 'Helpers', description: 'Two files', visibility: 'internal', project_id: null, file_name: 'b.sh', imported: false, imported_from: 'none' });
    expect(snip.author).toMatchObject({ id: alice.id, username: 'snalice' });
    expect(snip.web_url).toBe(`${s.url}/-/snippets/${snip.id}`);
    expect(snip.raw_url).toBe(`${s.url}/-/snippets/${snip.id}/raw`);
    expect(snip.files).toEqual([
      { path: 'b.sh', raw_url: `${s.url}/-/snippets/${snip.id}/raw/main/b.sh` },
      { path: 'lib/a.rb', raw_url: `${s.url}/-/snippets/${snip.id}/raw/main/lib/a.rb` },
    ]);
    expect(existsSync(snippetRepoPath(s.app.lw, snip.id))).toBe(true);
    const legacy = await s.request('POST', '/snippets', { token: bob.token, json: { title: 'One', file_name: 'one.txt', content: 'single', visibility: 'private' } });
    expect(legacy.status).toBe(201);
    expect(legacy.body).toMatchObject({ visibility: 'private', file_name: 'one.txt', files: [{ path: 'one.txt' }] });
  });

  it("refuses wrong input with GitLab's messages", async () => {
    const cases: Array<[Record<string, unknown>, number, unknown]> = [
      [{ files: [{ file_path: 'a', content: 'x' }] }, 400, { message: '400 Bad request - "title" not given' }],
      [{ title: ' ', files: [{ file_path: 'a', content: 'x' }] }, 400, { error: 'title is empty' }],
      [{ title: 't' }, 400, { error: 'files, content are missing, exactly one parameter must be provided' }],
      [{ title: 't', content: 'x', file_name: 'a', files: [{ file_path: 'a', content: 'x' }] }, 400, { error: 'files, content are mutually exclusive' }],
      [{ title: 't', content: 'x' }, 400, { message: '400 Bad request - "file_name" not given' }],
      [{ title: 't', content: '', file_name: 'a' }, 400, { error: 'content is empty' }],
      [{ title: 't', files: [{ file_path: '../../etc/passwd', content: 'x' }] }, 400, { error: 'files[0][file_path] should be a valid file path' }],
      [{ title: 't', files: [{ file_path: 'a', content: 'x' }, { file_path: '', content: 'x' }] }, 400, { error: 'files[1][file_path] should be a valid file path, files[1][file_path] is empty' }],
      [{ title: 't', files: [{ file_path: 'a', content: '' }] }, 400, { error: 'files[0][content] is empty' }],
      [{ title: 't', visibility: 'secret', files: [{ file_path: 'a', content: 'x' }] }, 400, { error: 'visibility does not have a valid value' }],
      [{ title: 'x'.repeat(256), files: [{ file_path: 'a', content: 'x' }] }, 400, { message: { error: 'Title is too long (maximum is 255 characters)' } }],
      [{ title: 't', files: [{ file_path: 'a', content: 'x' }, { file_path: 'a', content: 'y' }] }, 400, { message: { error: 'Repository Error creating the snippet' } }],
    ];
    for (const [json, status, body] of cases) {
      const r = await s.request('POST', '/snippets', { token: alice.token, json });
      expect([json, r.status, r.body]).toEqual([json, status, body]);
    }
    const mine = await s.request('GET', '/snippets', { token: alice.token });
    expect(mine.body.map((x: any) => x.id)).toEqual([snip.id]);
  });

  it('serves the first file and any file at a ref raw; others read by visibility', async () => {
    const raw = await s.request('GET', `/snippets/${snip.id}/raw`, { token: bob.token });
    expect([raw.status, raw.text, raw.headers.get('content-type')]).toEqual([200, 'echo b\n', 'text/plain; charset=utf-8']);
    expect(raw.headers.get('content-disposition')).toBe(`inline; filename="b.sh"; filename*=UTF-8''b.sh`);
    const file = await s.request('GET', `/snippets/${snip.id}/files/main/${encodeURIComponent('lib/a.rb')}/raw`, { token: bob.token });
    expect([file.status, file.text]).toEqual([200, 'puts 1\n']);
    expect((await s.request('GET', `/snippets/${snip.id}/files/nope/b.sh/raw`, { token: bob.token })).body).toEqual({ message: '404 Reference Not Found' });
    expect((await s.request('GET', `/snippets/${snip.id}/files/main/c.sh/raw`, { token: bob.token })).body).toEqual({ message: '404 File Not Found' });
    expect((await s.request('GET', `/snippets/${snip.id}/files/main/${encodeURIComponent('/etc/passwd')}/raw`, { token: bob.token })).body).toEqual({ error: 'file_path should be a valid file path' });
    // Internal: signed-in users; not anonymous callers. Private: the author (and administrators).
    expect((await s.request('GET', `/snippets/${snip.id}`, { token: bob.token })).status).toBe(200);
    expect((await s.request('GET', `/snippets/${snip.id}`, { token: null })).body).toEqual({ message: '404 Snippet Not Found' });
    const bobs = (await s.request('GET', '/snippets', { token: bob.token })).body[0];
    expect((await s.request('GET', `/snippets/${bobs.id}`, { token: alice.token })).status).toBe(404);
    expect((await s.request('GET', `/snippets/${bobs.id}`)).status).toBe(200);
    expect((await s.request('GET', `/snippets/${bobs.id}/raw`, { token: alice.token })).status).toBe(404);
  });

  it('updates the title without a commit and the files with actions; refuses wrong actions', async () => {
    const put = (json: Record<string, unknown>, token = alice.token) => s.request('PUT', `/snippets/${snip.id}`, { token, json });
    expect((await put({})).body).toEqual({ error: 'content, description, files, file_name, title, visibility are missing, at least one parameter must be provided' });
    const renamed = await put({ title: 'Helpers v2', visibility: 'public' });
    expect(renamed.body).toMatchObject({ title: 'Helpers v2', visibility: 'public', files: [{ path: 'b.sh' }, { path: 'lib/a.rb' }] });
    expect((await put({ content: 'x' })).body).toEqual({ message: { error: 'To update Snippets with multiple files, you must use the `files` parameter' } });
    expect((await put({ files: [{ action: 'move', file_path: 'b.sh' }] })).status).toBe(422);
    expect((await put({ files: [{ action: 'update', file_path: 'b.sh' }] })).body).toEqual({ message: { error: 'Snippet actions have invalid data' } });
    expect((await put({ files: [{ action: 'delete', file_path: 'missing.txt' }] })).body).toEqual({ message: { error: 'Repository Error updating the snippet' } });
    const changed = await put({ files: [{ action: 'update', file_path: 'b.sh', content: 'echo B\n' }, { action: 'move', previous_path: 'lib/a.rb', file_path: 'a.rb' }, { action: 'create', file_path: 'c.md', content: '# c' }] });
    expect(changed.status).toBe(200);
    expect(changed.body.files.map((f: any) => f.path)).toEqual(['a.rb', 'b.sh', 'c.md']);
    expect((await s.request('GET', `/snippets/${snip.id}/files/main/a.rb/raw`, { token: bob.token })).text).toBe('puts 1\n');
    expect((await s.request('GET', `/snippets/${snip.id}/raw`, { token: null })).text).toBe('puts 1\n');
    // Someone else's: 404 on the personal routes, administrators too.
    expect((await put({ title: 'x' }, bob.token)).body).toEqual({ message: '404 Snippet Not Found' });
    expect((await s.request('PUT', `/snippets/${snip.id}`, { json: { title: 'x' } })).status).toBe(404);
  });

  it('lists mine, public and all; deletes with the repository', async () => {
    const pub = await s.request('GET', '/snippets/public', { token: bob.token });
    expect(pub.body.map((x: any) => x.id)).toEqual([snip.id]);
    const all = await s.request('GET', '/snippets/all', { token: guest.token });
    expect(all.body.map((x: any) => x.title)).toEqual(['Helpers v2']);
    expect((await s.request('GET', '/snippets/all')).body.length).toBe(2);
    // Global search's snippet_titles: the snippets the caller may read, by title or description.
    const found = await s.request('GET', '/search', { token: guest.token, query: { scope: 'snippet_titles', search: 'helpers' } });
    expect(found.body.map((x: any) => x.id)).toEqual([snip.id]);
    expect((await s.request('GET', '/search', { token: alice.token, query: { scope: 'snippet_titles', search: 'One' } })).body).toEqual([]);
    expect((await s.request('GET', '/search', { token: bob.token, query: { scope: 'snippet_titles', search: 'One' } })).body.map((x: any) => x.title)).toEqual(['One']);
    expect((await s.request('GET', '/snippets', { token: null })).status).toBe(401);
    expect((await s.request('DELETE', `/snippets/${snip.id}`, { token: bob.token })).status).toBe(404);
    expect((await s.request('DELETE', `/snippets/${snip.id}`, { token: alice.token })).status).toBe(204);
    expect((await s.request('GET', `/snippets/${snip.id}`, { token: alice.token })).status).toBe(404);
    expect(existsSync(snippetRepoPath(s.app.lw, snip.id))).toBe(false);
  });
});

describe('project snippets', () => {
  const path = (p = '') => `/projects/${project.id}/snippets${p}`;
  let snip: any;

  it('Reporters create them (visibility required); Guests and outsiders may not', async () => {
    expect((await s.request('POST', path(), { token: reporter.token, json: { title: 'Conf', files: [{ file_path: 'conf.yml', content: 'a: 1' }] } })).body).toEqual({ message: '400 Bad request - "visibility" not given' });
    const r = await s.request('POST', path(), { token: reporter.token, json: { title: 'Conf', visibility: 'private', files: [{ file_path: 'conf.yml', content: 'a: 1' }] } });
    expect(r.status).toBe(201);
    snip = r.body;
    expect(Object.keys(snip)).toEqual(KEYS);
    expect(snip).toMatchObject({ project_id: project.id, web_url: `${s.url}/${project.path_with_namespace}/-/snippets/${snip.id}`, file_name: 'conf.yml' });
    expect(snip.files[0].raw_url).toBe(`${s.url}/${project.path_with_namespace}/-/snippets/${snip.id}/raw/main/conf.yml`);
    expect((await s.request('POST', path(), { token: guest.token, json: { title: 'G', visibility: 'private', files: [{ file_path: 'g', content: 'g' }] } })).status).toBe(403);
    expect((await s.request('POST', path(), { token: bob.token, json: { title: 'B', visibility: 'private', files: [{ file_path: 'b', content: 'b' }] } })).body).toEqual({ message: '404 Project Not Found' });
  });

  it('members read them; Maintainers and the author change them; the author needs Reporter to delete', async () => {
    expect((await s.request('GET', path(), { token: guest.token })).body.map((x: any) => x.id)).toEqual([snip.id]);
    expect((await s.request('GET', path(`/${snip.id}/raw`), { token: guest.token })).text).toBe('a: 1');
    expect((await s.request('GET', path(`/${snip.id}`), { token: bob.token })).status).toBe(404);
    expect((await s.request('GET', path('/999999'), { token: guest.token })).body).toEqual({ message: '404 Not found' });
    expect((await s.request('PUT', path(`/${snip.id}`), { token: guest.token, json: { title: 'no' } })).status).toBe(403);
    const m = await s.request('PUT', path(`/${snip.id}`), { token: maint.token, json: { content: 'a: 2', file_name: 'conf.yaml' } });
    expect(m.body).toMatchObject({ file_name: 'conf.yaml' });
    expect((await s.request('GET', path(`/${snip.id}/files/main/conf.yaml/raw`), { token: guest.token })).text).toBe('a: 2');
    // The personal route reads a project snippet the caller may see.
    expect((await s.request('GET', `/snippets/${snip.id}`, { token: guest.token })).body).toMatchObject({ id: snip.id, project_id: project.id });
    // The feature turned off: 403 for everyone.
    expect((await s.request('PUT', `/projects/${project.id}`, { token: alice.token, json: { snippets_access_level: 'disabled' } })).status).toBe(200);
    expect((await s.request('GET', path(), { token: maint.token })).status).toBe(403);
    expect((await s.request('GET', `/snippets/${snip.id}`, { token: alice.token })).status).toBe(404);
    expect((await s.request('PUT', `/projects/${project.id}`, { token: alice.token, json: { snippets_access_level: 'enabled' } })).status).toBe(200);
    expect((await s.request('DELETE', path(`/${snip.id}`), { token: guest.token })).status).toBe(403);
    expect((await s.request('DELETE', path(`/${snip.id}`), { token: reporter.token })).status).toBe(204);
  });

  it('refuses more than ten files, any change in an archived project, and lists no snippet the author may no longer read', async () => {
    const files = (n: number) => Array.from({ length: n }, (_, i) => ({ file_path: `f${i}.txt`, content: String(i) }));
    expect((await s.request('POST', path(), { token: reporter.token, json: { title: 'Many', visibility: 'private', files: files(11) } })).body).toEqual({ message: { error: "Snippets can't contain more than 10 files" } });
    const ten = await s.request('POST', path(), { token: reporter.token, json: { title: 'Ten', visibility: 'private', files: files(10) } });
    expect(ten.status).toBe(201);
    const more = await s.request('PUT', path(`/${ten.body.id}`), { token: reporter.token, json: { files: [{ action: 'create', file_path: 'g.txt', content: 'g' }] } });
    expect(more.body).toEqual({ message: { error: "Snippets can't contain more than 10 files" } });
    expect((await s.request('GET', path(`/${ten.body.id}`), { token: reporter.token })).body.files.length).toBe(10);
    expect((await s.request('GET', path(`/${ten.body.id}/files/main/g.txt/raw`), { token: reporter.token })).status).toBe(404);
    // Archived: read-only for everyone, through either route.
    expect((await s.request('POST', `/projects/${project.id}/archive`, { token: alice.token })).status).toBe(201);
    expect((await s.request('PUT', `/snippets/${ten.body.id}`, { token: reporter.token, json: { title: 'no' } })).status).toBe(403);
    expect((await s.request('DELETE', `/snippets/${ten.body.id}`, { token: reporter.token })).status).toBe(403);
    expect((await s.request('PUT', path(`/${ten.body.id}`), { token: alice.token, json: { title: 'no' } })).status).toBe(403);
    expect((await s.request('POST', `/projects/${project.id}/unarchive`, { token: alice.token })).status).toBe(201);
    // Snippets private to members: a former member no longer lists their own.
    expect((await s.request('PUT', `/projects/${project.id}`, { token: alice.token, json: { snippets_access_level: 'private', visibility: 'internal' } })).status).toBe(200);
    expect((await s.request('GET', '/snippets', { token: reporter.token })).body.map((x: any) => x.id)).toContain(ten.body.id);
    expect((await s.request('DELETE', `/projects/${project.id}/members/${reporter.id}`, { token: alice.token })).status).toBe(204);
    expect((await s.request('GET', '/snippets', { token: reporter.token })).body.map((x: any) => x.id)).not.toContain(ten.body.id);
    expect((await s.request('GET', `/snippets/${ten.body.id}`, { token: reporter.token })).status).toBe(404);
    await addMember(s, project.id, reporter.id, 20);
    expect((await s.request('PUT', `/projects/${project.id}`, { token: alice.token, json: { snippets_access_level: 'enabled', visibility: 'private' } })).status).toBe(200);
  });

  it('go with their project', async () => {
    const gone = await createProject(s, 'snip-gone', { token: bob.token });
    const made = await s.request('POST', `/projects/${gone.id}/snippets`, { token: bob.token, json: { title: 'x', visibility: 'public', files: [{ file_path: 'x', content: 'x' }] } });
    expect(made.status).toBe(201);
    expect((await s.request('DELETE', `/projects/${gone.id}`, { token: bob.token })).status).toBe(202);
    expect((await s.request('GET', `/snippets/${made.body.id}`, { token: bob.token })).status).toBe(404);
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(snippetRepoPath(s.app.lw, made.body.id))).toBe(false);
  });
});

describe('snippet repositories over git', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'lw-snip-'));
  });
  afterAll(async () => rm(work, { recursive: true, force: true }));

  const withCreds = (url: string, u: U | null) => {
    const parsed = new URL(url);
    if (u) {
      parsed.username = u.username;
      parsed.password = u.token;
    }
    return parsed.toString();
  };
  const gitError = async (cwd: string, ...args: string[]) => {
    try {
      await git(cwd, ...args);
      return '';
    } catch (err) {
      return String((err as { stderr?: string }).stderr ?? err);
    }
  };

  it('clones a personal snippet at its http_url_to_repo; its author pushes a change the API then shows', async () => {
    const r = await s.request('POST', '/snippets', { token: alice.token, json: { title: 'Git me', visibility: 'public', files: [{ file_path: 'a.txt', content: 'a\n' }] } });
    const snip = r.body;
    expect(snip.http_url_to_repo).toBe(`${s.url}/snippets/${snip.id}.git`);
    expect(snip.ssh_url_to_repo).toBe(`git@${new URL(s.url).hostname}:snippets/${snip.id}.git`);
    // A public snippet clones without credentials.
    const anon = join(work, 'anon');
    await git(work, 'clone', '-q', snip.http_url_to_repo, anon);
    expect((await git(anon, 'ls-files')).trim()).toBe('a.txt');
    const dir = join(work, 'mine');
    await git(work, 'clone', '-q', withCreds(snip.http_url_to_repo, alice), dir);
    await writeFile(join(dir, 'b.txt'), 'b\n');
    await git(dir, 'add', '.');
    await git(dir, 'commit', '-q', '-m', 'Add b');
    await git(dir, 'push', '-q', 'origin', 'HEAD:main');
    const after = await s.request('GET', `/snippets/${snip.id}`, { token: alice.token });
    expect(after.body.files.map((f: any) => f.path)).toEqual(['a.txt', 'b.txt']);
    expect((await s.request('GET', `/snippets/${snip.id}/files/main/b.txt/raw`, { token: alice.token })).text).toBe('b\n');

    // No new branches or tags, no deletions, at most ten files, at least one.
    expect(await gitError(dir, 'push', 'origin', 'HEAD:refs/heads/other')).toMatch(/You can not create or delete branches\./);
    expect(await gitError(dir, 'push', 'origin', 'HEAD:refs/tags/v1')).toMatch(/You can not create or delete branches\./);
    expect(await gitError(dir, 'push', 'origin', ':main')).toMatch(/You can not create or delete branches\./);
    for (let i = 0; i < 10; i++) await writeFile(join(dir, `f${i}.txt`), `${i}\n`);
    await git(dir, 'add', '.');
    await git(dir, 'commit', '-q', '-m', 'Too many');
    expect(await gitError(dir, 'push', 'origin', 'HEAD:main')).toMatch(/The repository can contain at most 10 file\(s\)\./);
    await git(dir, 'rm', '-q', '-r', '.');
    await git(dir, 'commit', '-q', '-m', 'Nothing');
    expect(await gitError(dir, 'push', 'origin', 'HEAD:main')).toMatch(/The repository must contain at least 1 file\./);
    // Submodule entries are no files; nor may a file pass the snippet size limit.
    await git(dir, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},sub`);
    await git(dir, 'commit', '-q', '-m', 'Only a submodule');
    expect(await gitError(dir, 'push', 'origin', 'HEAD:main')).toMatch(/The repository must contain at least 1 file\./);
    await git(dir, 'reset', '-q', '--hard', 'origin/main');
    await writeFile(join(dir, 'big.bin'), Buffer.alloc(50 * 1024 * 1024 + 1));
    await git(dir, 'add', '.');
    await git(dir, 'commit', '-q', '-m', 'Too big');
    expect(await gitError(dir, 'push', 'origin', 'HEAD:main')).toMatch(/Content is too long \(more than 50 MiB\)/);
    expect((await s.request('GET', `/snippets/${snip.id}`, { token: alice.token })).body.files).toHaveLength(2);
    // `snippets` is a reserved top-level name: no group or user can take over these addresses.
    const taken = await s.request('POST', '/groups', { token: bob.token, json: { name: 'snippets', path: 'snippets' } });
    expect(taken.status).toBe(400);

    // Others read a public snippet but do not push to it.
    const theirs = join(work, 'theirs');
    await git(work, 'clone', '-q', withCreds(snip.http_url_to_repo, bob), theirs);
    await git(theirs, 'commit', '-q', '--allow-empty', '-m', 'Mine now');
    expect(await gitError(theirs, 'push', 'origin', 'HEAD:main')).toMatch(/You are not allowed to update this snippet\./);
  });

  it("a private snippet is not cloned by others; a project snippet is cloned at its project's path by members", async () => {
    const priv = (await s.request('POST', '/snippets', { token: alice.token, json: { title: 'Secret', visibility: 'private', files: [{ file_path: 's.txt', content: 's' }] } })).body;
    expect(await gitError(work, 'clone', '-q', withCreds(priv.http_url_to_repo, bob), join(work, 'nope'))).toMatch(/You are not allowed to read this snippet\./);
    expect(await gitError(work, 'clone', '-q', withCreds(`${s.url}/snippets/999999.git`, bob), join(work, 'nope2'))).toMatch(/could not be found/);
    const ps = (await s.request('POST', `/projects/${project.id}/snippets`, { token: reporter.token, json: { title: 'Team', visibility: 'private', files: [{ file_path: 't.txt', content: 't' }] } })).body;
    expect(ps.http_url_to_repo).toBe(`${s.url}/${project.path_with_namespace}/snippets/${ps.id}.git`);
    const dir = join(work, 'team');
    await git(work, 'clone', '-q', withCreds(ps.http_url_to_repo, guest), dir);
    expect((await git(dir, 'ls-files')).trim()).toBe('t.txt');
    // The snippet only at its own project's path; outsiders do not see the project.
    expect(await gitError(work, 'clone', '-q', withCreds(`${s.url}/snippets/${ps.id}.git`, alice), join(work, 'wrong'))).toMatch(/could not be found/);
    expect(await gitError(work, 'clone', '-q', withCreds(ps.http_url_to_repo, bob), join(work, 'out'))).toMatch(/could not be found/);
  });
});

describe('clients', () => {
  it("answer python-gitlab's and gitbeaker's calls", async () => {
    const api = new Gitlab({ host: s.url, token: bob.token });
    const made = await api.Snippets.create('From gitbeaker', { visibility: 'public', files: [{ filePath: 'g.txt', content: 'beaker' }] } as never);
    expect((made as any).files).toEqual([{ path: 'g.txt', raw_url: expect.stringContaining('/raw/main/g.txt') }]);
    expect(await api.Snippets.showContent((made as any).id)).toBe('beaker');
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
# python-gitlab 3.x (Debian's) sends the older file_name + content form.
sn = gl.snippets.create({'title': 'From python', 'visibility': 'private', 'file_name': 'p.py', 'content': 'print(1)'})
content = sn.content().decode()
sn.title = 'Renamed'
sn.save()
again = gl.snippets.get(sn.id)
p = gl.projects.get(int(sys.argv[3]))
ps = p.snippets.create({'title': 'In project', 'visibility': 'internal', 'file_name': 'q.txt', 'content': 'q'})
print(json.dumps({'content': content, 'title': again.title, 'project': [x.title for x in p.snippets.list(get_all=True)], 'raw': ps.content().decode()}))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, alice.token, String(project.id)]);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ content: 'print(1)', title: 'Renamed', raw: 'q' });
    expect(out.project[0]).toBe('In project');
  });
});
