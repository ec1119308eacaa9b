// Projects API through the real HTTP app: create, read, list, update, rename/move rules, archive,
// transfer, delete, and bad input.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
});
afterAll(async () => {
  await s?.close();
});

async function create(token: string, json: Record<string, unknown>) {
  const r = await s.request('POST', '/projects', { token, json });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.body;
}

describe('POST /projects', () => {
  it('creates a project in the personal namespace with GitLab fields', async () => {
    const r = await s.request('POST', '/projects', { token: alice.token, json: { name: 'First Project', description: 'hello' } });
    expect(r.status).toBe(201);
    const p = r.body;
    expect(p.name).toBe('First Project');
    expect(p.path).toBe('first-project');
    expect(p.path_with_namespace).toBe('alice/first-project');
    expect(p.name_with_namespace).toBe('alice / First Project');
    expect(p.description).toBe('hello');
    expect(p.visibility).toBe('private');
    expect(p.http_url_to_repo).toBe(`${s.url}/alice/first-project.git`);
    expect(p.web_url).toBe(`${s.url}/alice/first-project`);
    expect(p.namespace).toEqual({ id: expect.any(Number), name: 'alice', path: 'alice', kind: 'user', full_path: 'alice', parent_id: null, avatar_url: null, web_url: `${s.url}/alice` });
    expect(p.merge_requests_enabled).toBe(true);
    expect(p.merge_requests_access_level).toBe('enabled');
    expect(p.archived).toBe(false);
    expect(p.empty_repo).toBe(true);
    expect(p).not.toHaveProperty('forked_from_project');
    expect(p.owner.username).toBe('alice');
    expect(p.creator_id).toBe(alice.id);
    expect(p.permissions).toEqual({ project_access: { access_level: 50, notification_level: 3 }, group_access: null });
    expect(Object.keys(p).slice(0, 7)).toEqual(['id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at']);
    expect(existsSync(join(s.app.lw.reposDir, `${p.id}.git`, 'HEAD'))).toBe(true);
  });

  it('accepts every merge setting and initializes a README commit on the default branch', async () => {
    const p = await create(alice.token, {
      path: 'settings',
      visibility: 'internal',
      default_branch: 'trunk',
      initialize_with_readme: true,
      merge_requests_access_level: 'private',
      squash_option: 'always',
      merge_method: 'ff',
      only_allow_merge_if_pipeline_succeeds: true,
      only_allow_merge_if_all_discussions_are_resolved: 'true',
      remove_source_branch_after_merge: false,
    });
    expect(p.name).toBe('settings');
    expect(p.visibility).toBe('internal');
    expect(p.default_branch).toBe('trunk');
    expect(p.empty_repo).toBe(false);
    expect(p.readme_url).toBe(`${s.url}/alice/settings/-/blob/trunk/README.md`);
    expect(p.merge_requests_access_level).toBe('private');
    expect(p.merge_requests_enabled).toBe(true);
    expect(p.squash_option).toBe('always');
    expect(p.merge_method).toBe('ff');
    expect(p.only_allow_merge_if_pipeline_succeeds).toBe(true);
    expect(p.only_allow_merge_if_all_discussions_are_resolved).toBe(true);
    expect(p.remove_source_branch_after_merge).toBe(false);
    const { GitRepository } = await import('../../src/git/repository.js');
    const repo = new GitRepository(join(s.app.lw.reposDir, `${p.id}.git`));
    const sha = await repo.branchSha('trunk');
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    const blob = await repo.readBlob('trunk', 'README.md');
    expect(blob?.content.toString()).toContain('# settings');
  });

  it('merge_requests_enabled=false disables merge requests', async () => {
    const p = await create(alice.token, { name: 'nomr', merge_requests_enabled: false });
    expect(p.merge_requests_enabled).toBe(false);
    expect(p.merge_requests_access_level).toBe('disabled');
  });

  it('refuses bad input with GitLab bodies and creates nothing', async () => {
    const cases: Array<[Record<string, unknown>, number, unknown]> = [
      [{}, 400, { error: 'name, path are missing, at least one parameter must be provided' }],
      [{ name: 'x1', visibility: 'secret' }, 400, { error: 'visibility does not have a valid value' }],
      [{ name: 'x2', merge_method: 'octopus' }, 400, { error: 'merge_method does not have a valid value' }],
      [{ name: 'x3', squash_option: 'sometimes' }, 400, { error: 'squash_option does not have a valid value' }],
      [{ name: 'x4', initialize_with_readme: null }, 400, { error: 'initialize_with_readme is invalid' }],
      [{ name: 'x5', only_allow_merge_if_pipeline_succeeds: 'maybe' }, 400, { error: 'only_allow_merge_if_pipeline_succeeds is invalid' }],
      [{ name: { a: 1 } }, 400, { error: 'name is invalid' }],
      [{ name: 'x6', path: 'bad path!' }, 400, { message: { path: [expect.stringContaining("can contain only letters")] } }],
      [{ name: '-bad' }, 400, { message: { name: [expect.stringContaining('It must start with')] } }],
      [{ name: 'x7', path: 'x7.git' }, 400, { message: { path: [expect.stringContaining('.git')] } }],
      [{ name: 'x8', default_branch: 'bad..branch', initialize_with_readme: true }, 400, { message: { default_branch: ['is invalid'] } }],
      [{ name: 'x9', namespace_id: 999999 }, 404, { message: '404 Namespace Not Found' }],
      [{ name: 'x10', namespace_id: 'bob' }, 400, { message: { namespace: ['is not valid'] } }],
      // null names nothing: the same 400 as no name at all (was a 500).
      [{ name: null }, 400, { error: 'name, path are missing, at least one parameter must be provided' }],
      [{ name: null, path: null }, 400, { error: 'name, path are missing, at least one parameter must be provided' }],
      [{ name: 'x11', default_branch: 'refs/heads/main' }, 400, { message: { default_branch: ['is invalid'] } }],
      [{ name: 'x12', default_branch: 'b'.repeat(300) }, 400, { message: { default_branch: ['is invalid'] } }],
    ];
    for (const [json, status, body] of cases) {
      const r = await s.request('POST', '/projects', { token: alice.token, json });
      expect({ json, status: r.status, body: r.body }).toEqual({ json, status, body });
    }
    const list = await s.request('GET', '/projects', { token: alice.token, query: { search: 'x', owned: true } });
    expect(list.body.filter((p: any) => /^x\d+$/.test(p.name))).toEqual([]);
  });

  it('reports a taken name and path together', async () => {
    await create(alice.token, { name: 'dup' });
    const r = await s.request('POST', '/projects', { token: alice.token, json: { name: 'dup' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: { name: ['has already been taken'], path: ['has already been taken'] } });
    const r2 = await s.request('POST', '/projects', { token: alice.token, json: { name: 'Other', path: 'DUP' } });
    expect(r2.body).toEqual({ message: { path: ['has already been taken'] } });
    // Another user may use the same name in their own namespace.
    const b = await s.request('POST', '/projects', { token: bob.token, json: { name: 'dup' } });
    expect(b.status).toBe(201);
  });

  it('racing creates of one path give one project and GitLab 400s, never a 500', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => s.request('POST', '/projects', { token: alice.token, json: { name: 'racer' } })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.status === 400)) expect(r.body.message.path).toEqual(['has already been taken']);
    const renames = await Promise.all(
      (await Promise.all([create(alice.token, { name: 'r1' }), create(alice.token, { name: 'r2' })])).map((p: any) =>
        s.request('PUT', `/projects/${p.id}`, { token: alice.token, json: { path: 'racetarget' } }),
      ),
    );
    expect(renames.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it('a repository made by a request racing the creation is kept, not a 500 that deletes the project', async () => {
    const before = await create(alice.token, { name: 'race-repo-before' });
    // What openRepository does when a git or repository API request reaches the new id first.
    const { initBareRepository } = await import('../../src/git/repository.js');
    await initBareRepository(join(s.dataDir, 'repositories', `${before.id + 1}.git`));
    const r = await s.request('POST', '/projects', { token: alice.token, json: { name: 'race-repo', default_branch: 'trunk', initialize_with_readme: true } });
    expect([r.status, r.body.id]).toEqual([201, before.id + 1]);
    expect(r.body.default_branch).toBe('trunk');
    const readme = await s.request('GET', `/projects/${r.body.id}/repository/files/README.md/raw`, { token: alice.token, query: { ref: 'trunk' } });
    expect(readme.text).toContain('# race-repo');
  });

  it('requires authentication', async () => {
    const r = await s.request('POST', '/projects', { token: null, json: { name: 'anon' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ message: '401 Unauthorized' });
  });

  it('accepts form bodies', async () => {
    const r = await s.request('POST', '/projects', { token: alice.token, form: { name: 'formed', visibility: 'public', initialize_with_readme: 'false' } });
    expect(r.status).toBe(201);
    expect(r.body.visibility).toBe('public');
  });

  it('POST /projects/user/:user_id lets an administrator create for a user', async () => {
    const r = await s.request('POST', `/projects/user/${bob.id}`, { json: { name: 'given' } });
    expect(r.status).toBe(201);
    expect(r.body.path_with_namespace).toBe('bob/given');
    expect(r.body.creator_id).toBe(bob.id);
    const denied = await s.request('POST', `/projects/user/${bob.id}`, { token: alice.token, json: { name: 'given2' } });
    expect(denied.status).toBe(403);
    const missing = await s.request('POST', '/projects/user/999999', { json: { name: 'given3' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 User Not Found' });
  });
});

describe('GET /projects/:id', () => {
  it('finds a project by id and by encoded path; 404 for unknown', async () => {
    const p = await create(alice.token, { name: 'findme' });
    const byId = await s.request('GET', `/projects/${p.id}`, { token: alice.token });
    expect(byId.status).toBe(200);
    expect(byId.body.id).toBe(p.id);
    const byPath = await s.request('GET', `/projects/alice%2Ffindme`, { token: alice.token });
    expect(byPath.status).toBe(200);
    expect(byPath.body.id).toBe(p.id);
    const byUpper = await s.request('GET', `/projects/ALICE%2FFindMe`, { token: alice.token });
    expect(byUpper.body.id).toBe(p.id);
    for (const id of ['999999', 'alice%2Fnope', 'nope', '0', '-1']) {
      const r = await s.request('GET', `/projects/${id}`, { token: alice.token });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Project Not Found' });
    }
  });

  it('a private project is a 404 for outsiders and anonymous callers, visible to admins', async () => {
    const p = await create(alice.token, { name: 'secret' });
    for (const token of [bob.token, null]) {
      const r = await s.request('GET', `/projects/${p.id}`, { token });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ message: '404 Project Not Found' });
      const byPath = await s.request('GET', `/projects/alice%2Fsecret`, { token });
      expect(byPath.status).toBe(404);
    }
    const admin = await s.request('GET', `/projects/${p.id}`);
    expect(admin.status).toBe(200);
    expect(admin.body.permissions).toEqual({ project_access: null, group_access: null });
  });
});

describe('PUT /projects/:id', () => {
  it('updates settings and keeps the old path working as spec rule 12 says', async () => {
    const p = await create(alice.token, { name: 'renamer', initialize_with_readme: true });
    const r = await s.request('PUT', `/projects/${p.id}`, {
      token: alice.token,
      json: { name: 'Renamed', path: 'renamed', description: 'new', merge_method: 'rebase_merge', squash_option: 'never', visibility: 'public' },
    });
    expect(r.status).toBe(200);
    expect(r.body.path_with_namespace).toBe('alice/renamed');
    expect(r.body.name).toBe('Renamed');
    expect(r.body.description).toBe('new');
    expect(r.body.merge_method).toBe('rebase_merge');
    expect(r.body.squash_option).toBe('never');
    expect(r.body.visibility).toBe('public');
    const old = await s.request('GET', '/projects/alice%2Frenamer', { token: alice.token });
    expect(old.status).toBe(301);
    expect(old.headers.get('location')).toBe(`${s.url}/api/v4/projects/${p.id}`);
    const oldSub = await s.request('GET', '/projects/alice%2Frenamer/members?per_page=5', { token: alice.token });
    expect(oldSub.status).toBe(301);
    expect(oldSub.headers.get('location')).toBe(`${s.url}/api/v4/projects/${p.id}/members?per_page=5`);
    for (const method of ['PUT', 'DELETE', 'POST']) {
      const path = method === 'POST' ? '/projects/alice%2Frenamer/archive' : '/projects/alice%2Frenamer';
      const w = await s.request(method, path, { token: alice.token, json: method === 'DELETE' ? undefined : { description: 'x' } });
      expect(w.status).toBe(405);
      expect(w.body).toEqual({ message: 'Non GET methods are not allowed for moved projects' });
    }
    const now = await s.request('GET', `/projects/alice%2Frenamed`, { token: alice.token });
    expect(now.body.description).toBe('new');
    // The old path can be claimed again by a new project, which then wins.
    const again = await create(alice.token, { name: 'renamer' });
    const resolved = await s.request('GET', '/projects/alice%2Frenamer', { token: alice.token });
    expect(resolved.status).toBe(200);
    expect(resolved.body.id).toBe(again.id);
  });

  it('sets default_branch only to an existing branch', async () => {
    const p = await create(alice.token, { name: 'branchy', initialize_with_readme: true });
    const bad = await s.request('PUT', `/projects/${p.id}`, { token: alice.token, json: { default_branch: 'nope' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Could not set the default branch' });
    const ok = await s.request('PUT', `/projects/${p.id}`, { token: alice.token, json: { default_branch: 'main' } });
    expect(ok.status).toBe(200);
    expect(ok.body.default_branch).toBe('main');
  });

  it('refuses bad input and other users', async () => {
    const p = await create(alice.token, { name: 'guarded', visibility: 'public' });
    const cases: Array<[Record<string, unknown>, number, unknown]> = [
      [{ visibility: 'everyone' }, 400, { error: 'visibility does not have a valid value' }],
      [{ remove_source_branch_after_merge: null }, 400, { error: 'remove_source_branch_after_merge is invalid' }],
      [{ merge_requests_access_level: 'sometimes' }, 400, { error: 'merge_requests_access_level does not have a valid value' }],
      [{ path: 'no spaces' }, 400, { message: { path: [expect.stringContaining('can contain only')] } }],
      [{ name: '' }, 400, { message: { name: ["can't be blank"] } }],
      [{}, 400, { error: expect.stringContaining('are missing, at least one parameter must be provided') }],
    ];
    for (const [json, status, body] of cases) {
      const r = await s.request('PUT', `/projects/${p.id}`, { token: alice.token, json });
      expect({ json, status: r.status, body: r.body }).toEqual({ json, status, body });
    }
    await create(alice.token, { name: 'taken' });
    const clash = await s.request('PUT', `/projects/${p.id}`, { token: alice.token, json: { path: 'taken' } });
    expect(clash.status).toBe(400);
    expect(clash.body).toEqual({ message: { path: ['has already been taken'] } });
    // bob can see the public project but not change it; anonymous gets 401.
    const denied = await s.request('PUT', `/projects/${p.id}`, { token: bob.token, json: { description: 'mine' } });
    expect(denied.status).toBe(403);
    const anon = await s.request('PUT', `/projects/${p.id}`, { token: null, json: { description: 'mine' } });
    expect(anon.status).toBe(401);
    const after = await s.request('GET', `/projects/${p.id}`, { token: alice.token });
    expect(after.body.description).toBeNull();
    expect(after.body.path).toBe('guarded');
  });
});

describe('archive, transfer, delete', () => {
  it('archives and unarchives with 201; archived projects refuse updates', async () => {
    const p = await create(alice.token, { name: 'archivable' });
    const a = await s.request('POST', `/projects/${p.id}/archive`, { token: alice.token });
    expect(a.status).toBe(201);
    expect(a.body.archived).toBe(true);
    const put = await s.request('PUT', `/projects/${p.id}`, { token: alice.token, json: { description: 'x' } });
    expect(put.status).toBe(403);
    const listed = await s.request('GET', '/projects', { token: alice.token, query: { archived: true, owned: true } });
    expect(listed.body.map((x: any) => x.id)).toContain(p.id);
    const u = await s.request('POST', `/projects/${p.id}/unarchive`, { token: alice.token });
    expect(u.status).toBe(201);
    expect(u.body.archived).toBe(false);
    const other = await s.request('POST', `/projects/${p.id}/archive`, { token: bob.token });
    expect(other.status).toBe(404);
  });

  it('transfers to another namespace by id or path; the old path redirects', async () => {
    const p = await create(alice.token, { name: 'mover', initialize_with_readme: true });
    // alice cannot move into bob's namespace.
    const denied = await s.request('PUT', `/projects/${p.id}/transfer`, { token: alice.token, json: { namespace: 'bob' } });
    expect(denied.status).toBe(403);
    const r = await s.request('PUT', `/projects/${p.id}/transfer`, { json: { namespace: 'bob' } });
    expect(r.status).toBe(200);
    expect(r.body.path_with_namespace).toBe('bob/mover');
    expect(r.body.namespace.path).toBe('bob');
    const old = await s.request('GET', '/projects/alice%2Fmover', { token: bob.token });
    expect(old.status).toBe(301);
    expect(old.headers.get('location')).toBe(`${s.url}/api/v4/projects/${p.id}`);
    const back = await s.request('POST', `/projects/${p.id}/transfer`, { json: { namespace_id: 'alice' } });
    expect(back.status).toBe(201);
    expect(back.body.path_with_namespace).toBe('alice/mover');
    const missing = await s.request('PUT', `/projects/${p.id}/transfer`, { json: {} });
    expect(missing.status).toBe(400);
    const unknown = await s.request('PUT', `/projects/${p.id}/transfer`, { json: { namespace: 'nobody-here' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Namespace Not Found' });
  });

  it('deletes with 202 and the project is gone at once with its repository', async () => {
    const p = await create(alice.token, { name: 'doomed', initialize_with_readme: true });
    const dir = join(s.app.lw.reposDir, `${p.id}.git`);
    expect(existsSync(dir)).toBe(true);
    const other = await s.request('DELETE', `/projects/${p.id}`, { token: bob.token });
    expect(other.status).toBe(404);
    const r = await s.request('DELETE', `/projects/${p.id}`, { token: alice.token });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ message: '202 Accepted' });
    const gone = await s.request('GET', `/projects/${p.id}`, { token: alice.token });
    expect(gone.status).toBe(404);
    expect(existsSync(dir)).toBe(false);
    const again = await create(alice.token, { name: 'doomed' });
    expect(again.id).not.toBe(p.id);
  });

  it('deleting a user deletes their personal projects', async () => {
    const carol = await s.createUser('carol');
    const p = await create(carol.token, { name: 'orphan', initialize_with_readme: true });
    const del = await s.request('DELETE', `/users/${carol.id}`);
    expect([202, 204]).toContain(del.status);
    const gone = await s.request('GET', `/projects/${p.id}`);
    expect(gone.status).toBe(404);
    const dir = join(s.app.lw.reposDir, `${p.id}.git`);
    for (let i = 0; i < 40 && existsSync(dir); i++) await new Promise((res) => setTimeout(res, 50));
    expect(existsSync(dir)).toBe(false);
  });
});
