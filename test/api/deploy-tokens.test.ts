// Deploy tokens: the API (project Maintainers; group Maintainers read, Owners manage; the instance
// list for administrators), GitLab's entity and errors, tokens stored as digests, and the real git
// CLI cloning with one (its username, read_repository, its project or its group's projects, never a
// push, never after deletion, expiry or on the REST API).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, gitFails } from '../helpers/git.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
let work: string;
type U = { id: number; username: string; token: string };
let alice: U; // Owner of the group, creator of the projects
let maint: U; // Maintainer of the group and of the personal project
let dev: U;
let group: { id: number; full_path: string };
let sub: { id: number; full_path: string };
let inGroup: { id: number; path_with_namespace: string };
let inSub: { id: number; path_with_namespace: string };
let personal: { id: number; path_with_namespace: string };

beforeAll(async () => {
  s = await startServer();
  work = mkdtempSync(join(tmpdir(), 'lw-deploy-tokens-'));
  alice = await s.createUser('dtalice');
  maint = await s.createUser('dtmaint');
  dev = await s.createUser('dtdev');
  group = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Deploy', path: 'deploy' } })).body;
  sub = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Sub', path: 'sub', parent_id: group.id } })).body;
  expect((await s.request('POST', `/groups/${group.id}/members`, { token: alice.token, json: { user_id: maint.id, access_level: 40 } })).status).toBe(201);
  expect((await s.request('POST', `/groups/${group.id}/members`, { token: alice.token, json: { user_id: dev.id, access_level: 30 } })).status).toBe(201);
  inGroup = await createProject(s, 'app', { token: alice.token, extra: { namespace_id: group.id } });
  inSub = await createProject(s, 'lib', { token: alice.token, extra: { namespace_id: sub.id } });
  personal = await createProject(s, 'mine', { token: alice.token });
  await addMember(s, personal.id, maint.id, 40);
}, 60_000);

afterAll(async () => {
  await closeServer(s);
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The first step of a clone or a push: GET info/refs with the token as Basic credentials. */
async function refs(path: string, user: string, token: string, service = 'git-upload-pack'): Promise<number> {
  const r = await fetch(`${s.url}/${path}.git/info/refs?service=${service}`, { headers: { authorization: `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}` } });
  await r.arrayBuffer();
  return r.status;
}

function remote(user: string, token: string, path: string): string {
  return `http://${encodeURIComponent(user)}:${token}@${s.url.replace('http://', '')}/${path}.git`;
}

describe('project deploy tokens', () => {
  it("creates one for Maintainers with GitLab's entity; the token is shown once and stored as a digest", async () => {
    const r = await s.request('POST', `/projects/${personal.id}/deploy_tokens`, {
      token: maint.token,
      json: { name: 'ci', scopes: ['read_registry', 'read_repository'], expires_at: '2099-01-01' },
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['id', 'name', 'username', 'expires_at', 'scopes', 'revoked', 'expired', 'token']);
    expect(r.body).toMatchObject({
      name: 'ci',
      username: `gitlab+deploy-token-${r.body.id}`,
      expires_at: '2099-01-01T00:00:00.000Z',
      scopes: ['read_repository', 'read_registry'],
      revoked: false,
      expired: false,
    });
    expect(r.body.token).toMatch(/^gldt-[A-Za-z0-9_-]{20}$/);
    const row = await s.app.lw.db.selectFrom('deploy_tokens').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(r.body.token);
    const got = await s.request('GET', `/projects/${personal.id}/deploy_tokens/${r.body.id}`, { token: maint.token });
    const { token: _t, ...shown } = r.body;
    expect(got.body).toEqual(shown);
    expect((await s.request('GET', `/projects/${personal.id}/deploy_tokens`, { token: alice.token })).body).toEqual([shown]);
  });

  it("refuses wrong input with GitLab's messages and creates nothing", async () => {
    const cases: Array<[Record<string, unknown>, number, unknown]> = [
      [{}, 400, { message: '400 Bad request - "name" not given' }],
      [{ name: 'x' }, 400, { message: '400 Bad request - "scopes" not given' }],
      [{ name: 'x', scopes: ['read_repository', 'all_access'] }, 400, { error: 'scopes does not have a valid value' }],
      [{ name: 'x', scopes: ['read_repository'], expires_at: 'foo' }, 400, { error: 'expires_at is invalid' }],
      [{ name: 'x', scopes: [] }, 400, { message: "Scopes can't be blank" }],
      [{ name: 'n'.repeat(256), scopes: [], username: 'bad name' }, 400, { message: "Name is too long (maximum is 255 characters), Username can contain only letters, digits, '_', '-', '+', and '.', and Scopes can't be blank" }],
    ];
    const before = (await s.request('GET', `/projects/${personal.id}/deploy_tokens`, { token: maint.token })).body.length;
    for (const [json, status, body] of cases) {
      const r = await s.request('POST', `/projects/${personal.id}/deploy_tokens`, { token: maint.token, json });
      expect([json, r.status, r.body]).toEqual([json, status, body]);
    }
    expect((await s.request('GET', `/projects/${personal.id}/deploy_tokens`, { token: maint.token })).body.length).toBe(before);
    // A comma-separated list and a custom username are fine; a blank username is the default.
    const ok = await s.request('POST', `/projects/${personal.id}/deploy_tokens`, { token: maint.token, form: { name: 'pkg', scopes: 'read_package_registry,write_package_registry', username: 'deployer+ci.1' } });
    expect(ok.body).toMatchObject({ username: 'deployer+ci.1', scopes: ['read_package_registry', 'write_package_registry'], expires_at: null });
    const blank = await s.request('POST', `/projects/${personal.id}/deploy_tokens`, { token: maint.token, json: { name: '', scopes: ['read_registry'], username: ' ' } });
    expect(blank.body.username).toBe(`gitlab+deploy-token-${blank.body.id}`);
  });

  it('is for Maintainers: Developers 403, outsiders 404, anonymous callers 404 on a private project', async () => {
    expect((await s.request('GET', `/projects/${inGroup.id}/deploy_tokens`, { token: dev.token })).body).toEqual({ message: '403 Forbidden' });
    expect((await s.request('POST', `/projects/${inGroup.id}/deploy_tokens`, { token: dev.token, json: { name: 'x', scopes: ['read_repository'] } })).status).toBe(403);
    expect((await s.request('GET', `/projects/${personal.id}/deploy_tokens`, { token: dev.token })).body).toEqual({ message: '404 Project Not Found' });
    expect((await s.request('GET', `/projects/${personal.id}/deploy_tokens`, { token: null })).body).toEqual({ message: '404 Project Not Found' });
    expect((await s.request('GET', `/projects/${personal.id}/deploy_tokens/abc`, { token: maint.token })).body).toEqual({ error: 'token_id is invalid' });
    expect((await s.request('GET', `/projects/${personal.id}/deploy_tokens/999999`, { token: maint.token })).body).toEqual({ message: '404 Not found' });
  });

  it('clones its project with git as its username, nothing else, never pushes, and stops working once deleted', async () => {
    const made = (await s.request('POST', `/projects/${personal.id}/deploy_tokens`, { token: maint.token, json: { name: 'clone', scopes: ['read_repository'] } })).body;
    const dir = join(work, 'personal');
    await git(work, 'clone', '-q', remote(made.username, made.token, personal.path_with_namespace), dir);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('mine');
    // Another username, another project, a push: refused.
    expect(await gitFails(work, 'clone', '-q', remote('someone', made.token, personal.path_with_namespace), join(work, 'x1'))).toContain('Authentication failed');
    expect(await gitFails(work, 'clone', '-q', remote(made.username, made.token, inGroup.path_with_namespace), join(work, 'x2'))).toContain('Authentication failed');
    await git(dir, 'commit', '-q', '--allow-empty', '-m', 'try');
    expect(await gitFails(dir, 'push', '-q', 'origin', 'HEAD:main')).toContain('You are not allowed to upload code.');
    // Not a REST API credential.
    const api = await s.request('GET', `/projects/${personal.id}`, { token: made.token });
    expect(api.status).toBe(401);
    // Registry scopes alone do not read code.
    const reg = (await s.request('POST', `/projects/${personal.id}/deploy_tokens`, { token: maint.token, json: { name: 'reg', scopes: ['read_registry'] } })).body;
    expect(await gitFails(work, 'clone', '-q', remote(reg.username, reg.token, personal.path_with_namespace), join(work, 'x3'))).toContain('You are not allowed to download code.');
    // Deleted: 204, then refused.
    const del = await s.request('DELETE', `/projects/${personal.id}/deploy_tokens/${made.id}`, { token: maint.token });
    expect(del.status).toBe(204);
    expect((await s.request('DELETE', `/projects/${personal.id}/deploy_tokens/${made.id}`, { token: maint.token })).body).toEqual({ message: '404 Not found' });
    expect(await gitFails(work, 'clone', '-q', remote(made.username, made.token, personal.path_with_namespace), join(work, 'x4'))).toContain('Authentication failed');
  });

  it('an expired token lists as expired, is left out by active=true, and clones nothing', async () => {
    const old = (await s.request('POST', `/projects/${personal.id}/deploy_tokens`, { token: maint.token, json: { name: 'old', scopes: ['read_repository'], expires_at: '2001-01-01T00:00:00Z' } })).body;
    expect(old.expired).toBe(true);
    const active = (await s.request('GET', `/projects/${personal.id}/deploy_tokens`, { token: maint.token, query: { active: true } })).body;
    expect(active.map((t: any) => t.id)).not.toContain(old.id);
    const all = (await s.request('GET', `/projects/${personal.id}/deploy_tokens`, { token: maint.token })).body;
    expect(all.map((t: any) => t.id)).toContain(old.id);
    expect(await gitFails(work, 'clone', '-q', remote(old.username, old.token, personal.path_with_namespace), join(work, 'x5'))).toContain('Authentication failed');
  });
});

describe('group deploy tokens', () => {
  it('Maintainers read, Owners create and delete; the token clones every project of the group and its subgroups', async () => {
    expect((await s.request('POST', `/groups/${group.id}/deploy_tokens`, { token: maint.token, json: { name: 'g', scopes: ['read_repository'] } })).body).toEqual({ message: '403 Forbidden' });
    const made = await s.request('POST', `/groups/${group.full_path}/deploy_tokens`, { token: alice.token, json: { name: 'group ci', scopes: ['read_repository'], username: 'group-bot' } });
    expect(made.status).toBe(201);
    expect((await s.request('GET', `/groups/${group.id}/deploy_tokens`, { token: maint.token })).body.map((t: any) => t.name)).toEqual(['group ci']);
    expect((await s.request('GET', `/groups/${group.id}/deploy_tokens`, { token: dev.token })).status).toBe(403);
    expect((await s.request('DELETE', `/groups/${group.id}/deploy_tokens/${made.body.id}`, { token: maint.token })).status).toBe(403);
    await git(work, 'clone', '-q', remote('group-bot', made.body.token, inGroup.path_with_namespace), join(work, 'g1'));
    await git(work, 'clone', '-q', remote('group-bot', made.body.token, inSub.path_with_namespace), join(work, 'g2'));
    expect(await gitFails(work, 'clone', '-q', remote('group-bot', made.body.token, personal.path_with_namespace), join(work, 'g3'))).toContain('Authentication failed');
    // A project's token list does not show its group's tokens.
    expect((await s.request('GET', `/projects/${inGroup.id}/deploy_tokens/${made.body.id}`, { token: alice.token })).status).toBe(404);
  });

  it('reaches what is below the group now: moves, renames, turned-off repositories, forks, the REST API and archives', async () => {
    const top = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Reach', path: 'reach' } })).body;
    const g = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'G', path: 'g', parent_id: top.id } })).body;
    const other = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Other', path: 'reach-other' } })).body;
    const stays = await createProject(s, 'stays', { token: alice.token, extra: { namespace_id: g.id } });
    const leaves = await createProject(s, 'leaves', { token: alice.token, extra: { namespace_id: g.id } });
    const off = await createProject(s, 'off', { token: alice.token, extra: { namespace_id: g.id } });
    const topToken = (await s.request('POST', `/groups/${top.id}/deploy_tokens`, { token: alice.token, json: { name: 'top', scopes: ['read_repository'] } })).body;
    const gToken = (await s.request('POST', `/groups/${g.id}/deploy_tokens`, { token: alice.token, json: { name: 'g', scopes: ['read_repository'] } })).body;
    expect(await refs(stays.path_with_namespace, topToken.username, topToken.token)).toBe(200);
    expect(await refs(stays.path_with_namespace, gToken.username, gToken.token, 'git-receive-pack')).toBe(403);
    // A project moved out of the group: neither its new path nor its old one.
    const moved = await s.request('PUT', `/projects/${leaves.id}/transfer`, { token: alice.token, json: { namespace: other.id } });
    expect(moved.status).toBe(200);
    expect(await refs(moved.body.path_with_namespace, gToken.username, gToken.token)).toBe(401);
    expect(await refs(leaves.path_with_namespace, gToken.username, gToken.token)).toBe(401);
    // A renamed project's old path still clones (it is the same project), never pushes.
    const renamed = await s.request('PUT', `/projects/${stays.id}`, { token: alice.token, json: { path: 'stays-renamed' } });
    expect(renamed.status).toBe(200);
    expect(await refs(stays.path_with_namespace, gToken.username, gToken.token)).toBe(200);
    expect(await refs(stays.path_with_namespace, gToken.username, gToken.token, 'git-receive-pack')).toBe(403);
    // A turned-off repository answers as wrong credentials.
    expect((await s.request('PUT', `/projects/${off.id}`, { token: alice.token, json: { repository_access_level: 'disabled' } })).status).toBe(200);
    expect(await refs(off.path_with_namespace, gToken.username, gToken.token)).toBe(401);
    // The subgroup moved under another group: the old parent's token loses it, its own keeps it.
    expect((await s.request('POST', `/groups/${g.id}/transfer`, { token: alice.token, json: { group_id: other.id } })).status).toBe(201);
    expect(await refs(`${other.full_path}/g/stays-renamed`, topToken.username, topToken.token)).toBe(401);
    expect(await refs(`${other.full_path}/g/stays-renamed`, gToken.username, gToken.token)).toBe(200);
    // A fork in a personal namespace is outside every group.
    const fork = await s.request('POST', `/projects/${stays.id}/fork`, { token: alice.token, json: {} });
    expect(fork.status).toBe(201);
    expect(await refs(fork.body.path_with_namespace, gToken.username, gToken.token)).toBe(401);
    // Not a credential of the REST API nor of web archive downloads.
    const credentials: Array<Record<string, string>> = [{ 'PRIVATE-TOKEN': gToken.token }, { authorization: `Bearer ${gToken.token}` }];
    for (const headers of credentials) {
      expect((await fetch(`${s.api}/projects/${stays.id}`, { headers })).status).toBe(401);
    }
    const archive = await fetch(`${s.url}/${other.full_path}/g/stays-renamed/-/archive/main/x.tar.gz?private_token=${gToken.token}`, { redirect: 'manual' });
    expect(archive.status).toBe(302);
    expect(archive.headers.get('location')).not.toContain(gToken.token);
    // Expired earlier today: refused, though shown as not yet expired (GitLab compares dates).
    const soon = (await s.request('POST', `/groups/${other.id}/deploy_tokens`, { token: alice.token, json: { name: 'soon', scopes: ['read_repository'], expires_at: new Date(Date.now() - 60_000).toISOString() } })).body;
    expect(await refs(`${other.full_path}/g/stays-renamed`, soon.username, soon.token)).toBe(401);
    expect(new Date().getUTCHours() === 0 || soon.expired === false).toBe(true);
    // Impossible dates are refused, not rolled over.
    const feb30 = await s.request('POST', `/groups/${other.id}/deploy_tokens`, { token: alice.token, json: { name: 'x', scopes: ['read_repository'], expires_at: '2026-02-30' } });
    expect(feb30.body).toEqual({ error: 'expires_at is invalid' });
    expect((await s.request('GET', `/groups/${other.id}/deploy_tokens/-1`, { token: alice.token })).status).toBe(404);
    expect((await s.request('POST', `/groups/${other.id}/deploy_tokens`, { token: alice.token, json: { name: '😀'.repeat(200), scopes: ['read_repository'] } })).status).toBe(201);
  }, 60_000);

  it('the instance list is for administrators; deleting a group or project deletes its tokens', async () => {
    expect((await s.request('GET', '/deploy_tokens', { token: alice.token })).status).toBe(403);
    expect((await s.request('GET', '/deploy_tokens', { token: null })).status).toBe(401);
    const all = await s.request('GET', '/deploy_tokens');
    expect(all.body.length).toBeGreaterThan(3);
    expect(all.body.map((t: any) => t.id)).toEqual([...all.body.map((t: any) => t.id)].sort((a: number, b: number) => a - b));
    const g2 = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Gone', path: 'gone' } })).body;
    const p2 = await createProject(s, 'gone-p', { token: alice.token });
    await s.request('POST', `/groups/${g2.id}/deploy_tokens`, { token: alice.token, json: { name: 'a', scopes: ['read_repository'] } });
    await s.request('POST', `/projects/${p2.id}/deploy_tokens`, { token: alice.token, json: { name: 'b', scopes: ['read_repository'] } });
    expect((await s.request('DELETE', `/groups/${g2.id}`, { token: alice.token })).status).toBe(202);
    expect((await s.request('DELETE', `/projects/${p2.id}`, { token: alice.token })).status).toBe(202);
    const left = await s.app.lw.db
      .selectFrom('deploy_tokens')
      .select('id')
      .where((eb) => eb.or([eb('group_id', '=', g2.id), eb('project_id', '=', p2.id)]))
      .execute();
    expect(left).toEqual([]);
  });
});
