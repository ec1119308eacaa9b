// Git over HTTP with the real git CLI: push an existing repository with several branches into an
// empty project with a token as password, see it through the API, clone it back as another member;
// outsiders, reporters, anonymous callers and bad tokens are refused as GitLab does.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/oauth/tokens.js';
import { git, gitFails } from '../helpers/git.js';
import { startServer, type TestServer } from '../helpers/server.js';


let s: TestServer;
let work: string;
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let reporter: U;
let outsider: U;
let guest: U;
let privateId: number;



function remote(token: string | null, path: string, user = 'oauth2'): string {
  const host = s.url.replace('http://', '');
  return token ? `http://${user}:${token}@${host}/${path}` : `http://${host}/${path}`;
}

function basic(token: string): string {
  return `Basic ${Buffer.from(`oauth2:${token}`).toString('base64')}`;
}

async function newProject(name: string, visibility: string): Promise<number> {
  const r = await s.request('POST', '/projects', { token: owner.token, json: { name, visibility } });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function addMember(projectId: number, userId: number, level: number) {
  const r = await s.request('POST', `/projects/${projectId}/members`, { token: owner.token, json: { user_id: userId, access_level: level } });
  expect(r.status).toBe(201);
}

/** A local repository with three branches and some history. */
async function makeLocalRepo(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  await git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# Local project\n');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'app.js'), 'console.log("v1");\n');
  await git(dir, 'add', '.');
  await git(dir, 'commit', '-q', '-m', 'Initial import');
  writeFileSync(join(dir, 'src', 'app.js'), 'console.log("v2");\n');
  await git(dir, 'commit', '-q', '-am', 'Second version');
  await git(dir, 'checkout', '-q', '-b', 'develop');
  writeFileSync(join(dir, 'DEV.md'), 'develop only\n');
  await git(dir, 'add', '.');
  await git(dir, 'commit', '-q', '-m', 'Develop work');
  await git(dir, 'checkout', '-q', '-b', 'feature/login', 'main');
  writeFileSync(join(dir, 'login.js'), 'export {}\n');
  await git(dir, 'add', '.');
  await git(dir, 'commit', '-q', '-m', 'Login feature');
  await git(dir, 'checkout', '-q', 'main');
}

beforeAll(async () => {
  s = await startServer();
  work = mkdtempSync(join(tmpdir(), 'lw-git-http-'));
  owner = await s.createUser('gitowner');
  dev = await s.createUser('gitdev');
  reporter = await s.createUser('gitreporter');
  outsider = await s.createUser('gitoutsider');
  guest = await s.createUser('gitguest');
  privateId = await newProject('pushed', 'private');
  await addMember(privateId, dev.id, 30);
  await addMember(privateId, reporter.id, 20);
  await addMember(privateId, guest.id, 10);
});

afterAll(async () => {
  await s?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('push and clone with a token as password', () => {
  it('pushes a repository with several branches into an empty project', async () => {
    const before = await s.request('GET', `/projects/${privateId}`, { token: owner.token });
    expect(before.body.empty_repo).toBe(true);
    const local = join(work, 'local');
    await makeLocalRepo(local);
    await git(local, 'push', '-q', remote(owner.token, 'gitowner/pushed.git'), '--all');
    const p = await s.request('GET', `/projects/${privateId}`, { token: owner.token });
    expect(p.body.default_branch).toBe('main');
    const branches = await s.request('GET', `/projects/${privateId}/repository/branches`, { token: owner.token });
    expect(branches.body.map((b: any) => b.name)).toEqual(['develop', 'feature/login', 'main']);
    const file = await s.request('GET', `/projects/${privateId}/repository/files/${encodeURIComponent('src/app.js')}/raw`, { token: reporter.token, query: { ref: 'main' } });
    expect(file.text).toBe('console.log("v2");\n');
    const commits = await s.request('GET', `/projects/${privateId}/repository/commits`, { token: reporter.token });
    expect(commits.body.map((c: any) => c.title)).toEqual(['Second version', 'Initial import']);
    expect(commits.body[0].author_email).toBe('local@example.com');
    const localHead = (await git(local, 'rev-parse', 'main')).trim();
    expect(commits.body[0].id).toBe(localHead);
  });

  it('clones back as another member (path without .git too) and pushes as a Developer', async () => {
    const clone = join(work, 'clone-dev');
    await git(work, 'clone', '-q', remote(dev.token, 'gitowner/pushed', 'anything'), clone);
    expect(readFileSync(join(clone, 'src', 'app.js'), 'utf8')).toBe('console.log("v2");\n');
    expect((await git(clone, 'rev-parse', '--abbrev-ref', 'HEAD')).trim()).toBe('main');
    const remoteBranches = await git(clone, 'branch', '-r');
    expect(remoteBranches).toContain('origin/develop');
    expect(remoteBranches).toContain('origin/feature/login');
    writeFileSync(join(clone, 'NEW.md'), 'from dev\n');
    await git(clone, 'add', '.');
    await git(clone, 'commit', '-q', '-m', 'Dev pushes');
    // main is protected (Maintainers push, GitLab's default): the Developer pushes a branch of their own.
    expect(await gitFails(clone, 'push', 'origin', 'main')).toContain('You are not allowed to push code to protected branches on this project.');
    await git(clone, 'push', '-q', 'origin', 'HEAD:dev-work');
    const b = await s.request('GET', `/projects/${privateId}/repository/branches/dev-work`, { token: owner.token });
    expect(b.body.commit.title).toBe('Dev pushes');
    // A commit made through the API is fetched by the clone.
    const api = await s.request('POST', `/projects/${privateId}/repository/files/api.txt`, {
      token: dev.token, json: { branch: 'dev-work', content: 'api\n', commit_message: 'From the API' },
    });
    expect(api.status).toBe(201);
    await git(clone, 'pull', '-q', '--ff-only', 'origin', 'dev-work');
    expect(readFileSync(join(clone, 'api.txt'), 'utf8')).toBe('api\n');
    const repoPath = join(s.dataDir, 'repositories', `${privateId}.git`);
    await git(work, '--git-dir', repoPath, 'fsck', '--strict');
  });

  it('clones and pushes a project three groups deep, with and without .git; its archive downloads', async () => {
    let parent: number | null = null;
    for (const path of ['deep-a', 'deep-b', 'deep-c']) {
      const g = await s.request('POST', '/groups', { token: owner.token, json: { name: path, path, ...(parent ? { parent_id: parent } : {}) } });
      expect(g.status).toBe(201);
      parent = g.body.id;
    }
    const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'deepest', namespace_id: parent, initialize_with_readme: true } });
    expect(p.status).toBe(201);
    for (const [i, path] of ['deep-a/deep-b/deep-c/deepest.git', 'deep-a/deep-b/deep-c/deepest'].entries()) {
      const clone = join(work, `clone-deep-${i}`);
      await git(work, 'clone', '-q', remote(owner.token, path), clone);
      writeFileSync(join(clone, `deep-${i}.txt`), 'deep\n');
      await git(clone, 'add', '.');
      await git(clone, 'commit', '-q', '-m', `Deep ${i}`);
      await git(clone, 'push', '-q', 'origin', 'HEAD:main');
    }
    const tree = await s.request('GET', `/projects/${p.body.id}/repository/tree`, { token: owner.token });
    expect(tree.body.map((e: any) => e.name).sort()).toEqual(['README.md', 'deep-0.txt', 'deep-1.txt']);
    const archive = await fetch(`${s.url}/deep-a/deep-b/deep-c/deepest/-/archive/main/deepest-main.zip`, { headers: { 'PRIVATE-TOKEN': owner.token } });
    expect(archive.status).toBe(200);
    expect(Buffer.from(await archive.arrayBuffer()).subarray(0, 2).toString()).toBe('PK');
    // Methods as before: info/refs is read with GET only, the services are POSTed.
    expect((await fetch(`${s.url}/deep-a/deep-b/deep-c/deepest.git/git-upload-pack`, { headers: { authorization: basic(owner.token) } })).status).toBe(404);
  });

  it('refuses a push by a Reporter, and a token without a write scope', async () => {
    const clone = join(work, 'clone-reporter');
    await git(work, 'clone', '-q', remote(reporter.token, 'gitowner/pushed.git'), clone);
    writeFileSync(join(clone, 'R.md'), 'no\n');
    await git(clone, 'add', '.');
    await git(clone, 'commit', '-q', '-m', 'Reporter tries');
    const err = await gitFails(clone, 'push', 'origin', 'main');
    expect(err).toMatch(/403|not allowed/);
    const res = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-receive-pack`, { headers: { Authorization: basic(reporter.token) } });
    expect(res.status).toBe(403);
    const readOnly = await s.request('POST', `/users/${dev.id}/personal_access_tokens`, { json: { name: 'ro', scopes: ['read_repository'] } });
    const ro = readOnly.body.token as string;
    const fetchOk = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack`, { headers: { Authorization: basic(ro) } });
    expect(fetchOk.status).toBe(200);
    expect(fetchOk.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    const pushRo = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-receive-pack`, { headers: { Authorization: basic(ro) } });
    expect(pushRo.status).toBe(403);
    const apiOnly = await s.request('POST', `/users/${dev.id}/personal_access_tokens`, { json: { name: 'user', scopes: ['read_user'] } });
    const noScope = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack`, { headers: { Authorization: basic(apiOnly.body.token) } });
    expect(noScope.status).toBe(401);
    const b = await s.request('GET', `/projects/${privateId}/repository/branches/dev-work`, { token: owner.token });
    expect(b.body.commit.title).toBe('From the API');
  });

  it('accepts an OAuth access token with read_repository as the password', async () => {
    const app = await s.request('POST', '/applications', { json: { name: 'ci', redirect_uri: 'http://localhost/cb', scopes: 'read_repository' } });
    expect(app.status).toBe(201);
    const row = await s.app.lw.db.selectFrom('oauth_applications').select('id').where('uid', '=', app.body.application_id).executeTakeFirstOrThrow();
    const issued = await s.app.lw.database.transaction((trx) =>
      issueTokens(s.app.lw, trx, { applicationId: row.id, userId: dev.id, scopes: ['read_repository'], grantId: 0, grantKind: 'code' }));
    const clone = join(work, 'clone-oauth');
    await git(work, 'clone', '-q', remote(issued.accessToken, 'gitowner/pushed.git'), clone);
    expect(readFileSync(join(clone, 'README.md'), 'utf8')).toBe('# Local project\n');
    writeFileSync(join(clone, 'O.md'), 'no\n');
    await git(clone, 'add', '.');
    await git(clone, 'commit', '-q', '-m', 'OAuth read token tries to push');
    expect(await gitFails(clone, 'push', 'origin', 'main')).toMatch(/403|not allowed/);
  });
});

describe('what others see', () => {
  it('hides a private project from outsiders (API 404, git 404) and asks anonymous callers to authenticate', async () => {
    const api = await s.request('GET', `/projects/${privateId}/repository/branches`, { token: outsider.token });
    expect(api.status).toBe(404);
    const res = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack`, { headers: { Authorization: basic(outsider.token) } });
    expect(res.status).toBe(404);
    const anon = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack`);
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toBe('Basic realm="GitLab"');
    const missing = await fetch(`${s.url}/gitowner/no-such-project.git/info/refs?service=git-upload-pack`, { headers: { Authorization: basic(outsider.token) } });
    expect(missing.status).toBe(404);
    const err = await gitFails(work, 'clone', remote(outsider.token, 'gitowner/pushed.git'), join(work, 'clone-outsider'));
    expect(err).toMatch(/not found|404/i);
    const anonErr = await gitFails(work, 'clone', remote(null, 'gitowner/pushed.git'), join(work, 'clone-anon'));
    expect(anonErr).toMatch(/Authentication failed|could not read Username|401/i);
  });

  it('lets a Guest of a private project see it but not clone or push it (GitLab read_code: Reporter+)', async () => {
    expect((await s.request('GET', `/projects/${privateId}`, { token: guest.token })).status).toBe(200);
    const api = await s.request('GET', `/projects/${privateId}/repository/branches`, { token: guest.token });
    expect(api.status).toBe(403);
    const res = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack`, { headers: { Authorization: basic(guest.token) } });
    expect(res.status).toBe(403);
    expect(await res.text()).toBe('You are not allowed to download code from this project.\n');
    const push = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-receive-pack`, { headers: { Authorization: basic(guest.token) } });
    expect(push.status).toBe(403);
    expect(await push.text()).toBe('You are not allowed to push code to this project.\n');
    // A repeated service parameter is not a way around the push check (git would run the last one).
    const mixed = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack&service=git-receive-pack`, { headers: { Authorization: basic(reporter.token) } });
    expect(mixed.status).toBe(403);
    expect(await mixed.text()).not.toContain('git-receive-pack');
    const err = await gitFails(work, 'clone', remote(guest.token, 'gitowner/pushed.git'), join(work, 'clone-guest'));
    expect(err).toMatch(/not allowed to download code|403/);
  });

  it('refuses bad, revoked and malformed credentials with 401', async () => {
    const bad = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack`, { headers: { Authorization: basic('not-a-token') } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Basic realm="GitLab"');
    const malformed = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack`, { headers: { Authorization: 'Basic !!!' } });
    expect(malformed.status).toBe(401);
    const t = await s.request('POST', `/users/${dev.id}/personal_access_tokens`, { json: { name: 'soon-revoked', scopes: ['api'] } });
    await s.request('DELETE', `/personal_access_tokens/${t.body.id}`);
    const revoked = await fetch(`${s.url}/gitowner/pushed.git/info/refs?service=git-upload-pack`, { headers: { Authorization: basic(t.body.token) } });
    expect(revoked.status).toBe(401);
    const dumb = await fetch(`${s.url}/gitowner/pushed.git/info/refs`, { headers: { Authorization: basic(dev.token) } });
    expect(dumb.status).toBe(403);
  });

  it('lets anyone clone a public project, but pushing needs credentials', async () => {
    const pub = await newProject('open-source', 'public');
    const local = join(work, 'pub-local');
    await makeLocalRepo(local);
    // Only a feature branch: it becomes the default branch and HEAD.
    await git(local, 'push', '-q', remote(owner.token, 'gitowner/open-source.git'), 'feature/login');
    const p = await s.request('GET', `/projects/${pub}`, { token: null });
    expect(p.body.default_branch).toBe('feature/login');
    const clone = join(work, 'pub-clone');
    await git(work, 'clone', '-q', remote(null, 'gitowner/open-source.git'), clone);
    expect((await git(clone, 'rev-parse', '--abbrev-ref', 'HEAD')).trim()).toBe('feature/login');
    const push = await fetch(`${s.url}/gitowner/open-source.git/info/refs?service=git-receive-pack`);
    expect(push.status).toBe(401);
    const outsiderPush = await fetch(`${s.url}/gitowner/open-source.git/info/refs?service=git-receive-pack`, { headers: { Authorization: basic(outsider.token) } });
    expect(outsiderPush.status).toBe(403);
  });

  it('keeps serving a renamed project at its old path', async () => {
    const id = await newProject('will-move', 'private');
    const local = join(work, 'move-local');
    await makeLocalRepo(local);
    await git(local, 'push', '-q', remote(owner.token, 'gitowner/will-move.git'), 'main');
    const renamed = await s.request('PUT', `/projects/${id}`, { token: owner.token, json: { path: 'moved-here', name: 'moved-here' } });
    expect(renamed.status).toBe(200);
    const oldPath = await git(work, 'ls-remote', remote(owner.token, 'gitowner/will-move.git'));
    const newPath = await git(work, 'ls-remote', remote(owner.token, 'gitowner/moved-here.git'));
    expect(oldPath).toBe(newPath);
    expect(newPath).toContain('refs/heads/main');
    const outsiderOld = await fetch(`${s.url}/gitowner/will-move.git/info/refs?service=git-upload-pack`, { headers: { Authorization: basic(outsider.token) } });
    expect(outsiderOld.status).toBe(404);
  });

  it('catches up when a branch reached the repository without the database noticing (crash recovery)', async () => {
    const id = await newProject('crashed', 'private');
    const local = join(work, 'crash-local');
    await makeLocalRepo(local);
    // Straight into the bare repository, as if the server died after the ref moved.
    await git(local, 'push', '-q', join(s.dataDir, 'repositories', `${id}.git`), 'develop');
    const before = await s.app.lw.db.selectFrom('projects').select('default_branch').where('id', '=', id).executeTakeFirstOrThrow();
    expect(before.default_branch).toBeNull();
    const b = await s.request('GET', `/projects/${id}/repository/branches`, { token: owner.token });
    expect(b.body.map((x: any) => [x.name, x.default])).toEqual([['develop', true]]);
    const p = await s.request('GET', `/projects/${id}`, { token: owner.token });
    expect(p.body.default_branch).toBe('develop');
  });

  it('serves gzip-compressed upload-pack requests', async () => {
    const head = await s.request('GET', `/projects/${privateId}/repository/branches/main`, { token: owner.token });
    const sha = head.body.commit.id as string;
    const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
    const body = `${pkt(`want ${sha}\n`)}0000${pkt('done\n')}`;
    const res = await fetch(`${s.url}/gitowner/pushed.git/git-upload-pack`, {
      method: 'POST',
      headers: {
        Authorization: basic(dev.token),
        'Content-Type': 'application/x-git-upload-pack-request',
        'Content-Encoding': 'gzip',
      },
      body: gzipSync(Buffer.from(body)),
    });
    expect(res.status).toBe(200);
    const out = Buffer.from(await res.arrayBuffer());
    expect(out.subarray(0, 8).toString()).toBe('0008NAK\n');
    expect(out.includes(Buffer.from('PACK'))).toBe(true);
    const wrongType = await fetch(`${s.url}/gitowner/pushed.git/git-upload-pack`, {
      method: 'POST', headers: { Authorization: basic(dev.token), 'Content-Type': 'application/json' }, body: '{}',
    });
    expect(wrongType.status).toBe(415);
  });
});
