// Deploy keys: a project's Maintainers add (or get back, or reuse from their other projects),
// enable, update and remove keys; administrators list every key and add instance-wide (public)
// ones; GitLab's entities, field order, codes and messages; a fingerprint unique against users'
// SSH keys too; project and user deletion; python-gitlab's and @gitbeaker/rest's calls.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { Gitlab } from '@gitbeaker/rest';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responseFor } from '../../src/api/v4/schemas/registry.js';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { openssh as makeKey } from '../helpers/ssh-keys.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

/** A new key, with this file's default comment. */
function openssh(kind: 'ed25519' | 'rsa' = 'ed25519', comment = 'deploy@host'): string {
  return makeKey(kind, comment);
}

const KEY_FIELDS = ['id', 'title', 'created_at', 'expires_at', 'last_used_at', 'key', 'usage_type', 'fingerprint', 'fingerprint_sha256'];
const LINK_FIELDS = [...KEY_FIELDS, 'can_push'];
const IDENTITY_FIELDS = ['id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at'];

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U; // creates the projects
let maint: U; // Maintainer of p1 and p2
let dev: U; // Developer of p1
let outsider: U;
let p1: { id: number; path_with_namespace: string };
let p2: { id: number; path_with_namespace: string };
let p3: { id: number; path_with_namespace: string }; // the owner's alone

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('dkowner');
  maint = await s.createUser('dkmaint');
  dev = await s.createUser('dkdev');
  outsider = await s.createUser('dkoutsider');
  p1 = await createProject(s, 'dk-one', { token: owner.token });
  p2 = await createProject(s, 'dk-two', { token: owner.token });
  p3 = await createProject(s, 'dk-three', { token: owner.token });
  await addMember(s, p1.id, maint.id, 40);
  await addMember(s, p2.id, maint.id, 40);
  await addMember(s, p1.id, dev.id, 30);
}, 60_000);

afterAll(async () => closeServer(s));

const path = (p: { id: number }) => `/projects/${p.id}/deploy_keys`;

describe('project deploy keys', () => {
  let k1: any;
  const text = openssh('rsa', 'ci@example.com');

  it('a Maintainer adds a key: 201, DeployKeysProject in GitLab order, the key stripped, its fingerprints', async () => {
    const r = await s.request('POST', path(p1), { token: maint.token, json: { title: 'CI', key: `  ${text}\n`, can_push: true } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(LINK_FIELDS);
    const blob = Buffer.from(text.split(' ')[1], 'base64');
    expect(r.body).toMatchObject({
      title: 'CI',
      key: text,
      expires_at: null,
      last_used_at: null,
      usage_type: 'auth_and_signing',
      fingerprint: createHash('md5').update(blob).digest('hex').match(/../g)!.join(':'),
      fingerprint_sha256: 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, ''),
      can_push: true,
    });
    expect(r.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    k1 = r.body;
    const list = await s.request('GET', path(p1), { token: maint.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([k1]);
    expect(list.headers.get('x-total')).toBe('1');
    const one = await s.request('GET', `${path(p1)}/${k1.id}`, { token: maint.token });
    expect(one.body).toEqual(k1);
  });

  it('the same key again gives the project its key back (201, link unchanged); expires_at is kept', async () => {
    const again = await s.request('POST', path(p1), { token: maint.token, json: { title: 'other title', key: text, can_push: false } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(k1);
    const later = new Date(Date.now() + 86_400_000 * 30).toISOString();
    const expiring = await s.request('POST', path(p1), { token: maint.token, json: { title: 'expiring', key: openssh(), expires_at: later } });
    expect(expiring.status).toBe(201);
    expect(expiring.body.expires_at).toBe(later);
    expect(expiring.body.can_push).toBe(false);
  });

  it('the same new key posted several times at once: one key, every answer 201 with it', async () => {
    const fresh = openssh();
    const raced = await createProject(s, 'dk-raced', { token: maint.token });
    const answers = await Promise.all([0, 1, 2, 3].map(() => s.request('POST', path(raced), { token: maint.token, json: { title: 'raced', key: fresh } })));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  });

  it('who may: anonymous 401, Developers 403, a hidden project 404, administrators 200', async () => {
    for (const [method, url] of [
      ['GET', path(p1)],
      ['GET', `${path(p1)}/${k1.id}`],
      ['POST', path(p1)],
      ['PUT', `${path(p1)}/${k1.id}`],
      ['POST', `${path(p1)}/${k1.id}/enable`],
      ['DELETE', `${path(p1)}/${k1.id}`],
    ] as const) {
      expect((await s.request(method, url, { token: null })).status, `${method} ${url}`).toBe(401);
      expect((await s.request(method, url, { token: dev.token })).status, `${method} ${url}`).toBe(403);
      expect((await s.request(method, url, { token: outsider.token })).body, `${method} ${url}`).toEqual({ message: '404 Project Not Found' });
    }
    expect((await s.request('GET', path(p1))).status).toBe(200);
    // authenticate! comes first: anonymous callers get 401 on a public project too; outsiders 403 there.
    const open = await createProject(s, 'dk-public', { token: owner.token, visibility: 'public' });
    expect((await s.request('GET', path(open), { token: null })).status).toBe(401);
    expect((await s.request('GET', path(open), { token: outsider.token })).status).toBe(403);
    // The project and the level come before the parameters (Grape's before filter).
    expect((await s.request('POST', path(open), { token: outsider.token, json: {} })).status).toBe(403);
    expect((await s.request('GET', `${path(p1)}/99999`, { token: maint.token })).body).toEqual({ message: '404 Not found' });
    expect((await s.request('GET', `${path(p1)}/abc`, { token: maint.token })).body).toEqual({ error: 'key_id is invalid' });
  });

  it('refuses bad input with GitLab validation errors named after the link\'s deploy_key', async () => {
    const missing = await s.request('POST', path(p1), { token: maint.token, json: { title: 'no key' } });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('key');
    expect((await s.request('POST', path(p1), { token: maint.token, json: { key: openssh() } })).status).toBe(400);
    const bad = await s.request('POST', path(p1), { token: maint.token, json: { title: 'bad', key: 'ssh-ed25519 AAAA' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: { deploy_key: { key: ['is invalid'], fingerprint_sha256: ['cannot be generated'] } } });
    const blank = await s.request('POST', path(p1), { token: maint.token, json: { title: ' ', key: openssh() } });
    expect(blank.body).toEqual({ message: { deploy_key: { title: ["can't be blank"] } } });
    const long = await s.request('POST', path(p1), { token: maint.token, json: { title: 'x'.repeat(256), key: openssh() } });
    expect(long.body).toEqual({ message: { deploy_key: { title: ['is too long (maximum is 255 characters)'] } } });
    const past = await s.request('POST', path(p1), { token: maint.token, json: { title: 'old', key: openssh(), expires_at: '2001-01-01T00:00:00Z' } });
    expect(past.body).toEqual({ message: { deploy_key: { key: ['has expired'] } } });
    const badDate = await s.request('POST', path(p1), { token: maint.token, json: { title: 'x', key: openssh(), expires_at: 'soon' } });
    expect(badDate.body).toEqual({ error: 'expires_at is invalid' });
    const badBool = await s.request('POST', path(p1), { token: maint.token, json: { title: 'x', key: openssh(), can_push: 'maybe' } });
    expect(badBool.body).toEqual({ error: 'can_push is invalid' });
    expect((await s.request('GET', path(p1), { token: maint.token })).body.length).toBe(2);
  });

  it('a fingerprint is unique across deploy keys and users\' SSH keys, both ways', async () => {
    const mine = openssh();
    expect((await s.request('POST', '/user/keys', { token: maint.token, json: { title: 'laptop', key: mine } })).status).toBe(201);
    const asDeploy = await s.request('POST', path(p1), { token: maint.token, json: { title: 'dup', key: mine } });
    expect(asDeploy.status).toBe(400);
    expect(asDeploy.body).toEqual({ message: { deploy_key: { fingerprint_sha256: ['has already been taken'] } } });
    const both = await s.request('POST', path(p1), { token: maint.token, json: { title: '', key: mine, expires_at: '2001-01-01T00:00:00Z' } });
    expect(both.body).toEqual({ message: { deploy_key: { title: ["can't be blank"], fingerprint_sha256: ['has already been taken'], key: ['has expired'] } } });
    expect(Object.keys(both.body.message.deploy_key)).toEqual(['title', 'fingerprint_sha256', 'key']);
    const asUserKey = await s.request('POST', '/user/keys', { token: outsider.token, json: { title: 'mine', key: text } });
    expect(asUserKey.status).toBe(400);
    expect(asUserKey.body.message.fingerprint_sha256).toEqual(['has already been taken']);
    // A key in a project the caller is no member of is not theirs to reuse.
    const theirs = await createProject(s, 'dk-outsider', { token: outsider.token });
    const taken = await s.request('POST', path(theirs), { token: outsider.token, json: { title: 'steal', key: text } });
    expect(taken.body).toEqual({ message: { deploy_key: { fingerprint_sha256: ['has already been taken'] } } });
    // Another comment makes another key text: not reused, and its fingerprint is taken.
    const recommented = text.replace('ci@example.com', 'someone@else');
    expect((await s.request('POST', path(p2), { token: maint.token, json: { title: 'x', key: recommented } })).status).toBe(400);
  });

  it('reuses a key the caller sees in another project of theirs (201, the same id, its own can_push)', async () => {
    const r = await s.request('POST', path(p2), { token: maint.token, json: { title: 'ignored', key: text } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ ...k1, can_push: false });
    expect((await s.request('GET', path(p2), { token: maint.token })).body.map((k: any) => k.id)).toEqual([k1.id]);
  });

  it('enables a key the caller can see (201, DeployKey); other keys are 404 Deploy key Not Found', async () => {
    const secret = await s.request('POST', path(p3), { token: owner.token, json: { title: 'owner only', key: openssh() } });
    expect(secret.status).toBe(201);
    const hidden = await s.request('POST', `${path(p2)}/${secret.body.id}/enable`, { token: maint.token });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ message: '404 Deploy key Not Found' });
    expect((await s.request('POST', `${path(p2)}/99999/enable`, { token: maint.token })).body).toEqual({ message: '404 Deploy key Not Found' });
    const ok = await s.request('POST', `${path(p3)}/${k1.id}/enable`, { token: owner.token });
    expect(ok.status).toBe(201);
    expect(Object.keys(ok.body)).toEqual(KEY_FIELDS);
    expect(ok.body.id).toBe(k1.id);
    const twice = await s.request('POST', `${path(p3)}/${k1.id}/enable`, { token: owner.token });
    expect(twice.status).toBe(201);
    const listed = await s.request('GET', path(p3), { token: owner.token });
    expect(listed.body.map((k: any) => [k.id, k.can_push])).toEqual([
      [secret.body.id, false],
      [k1.id, false],
    ]);
  });

  it('updates can_push; the title only where the caller may change the key itself', async () => {
    const none = await s.request('PUT', `${path(p2)}/${k1.id}`, { token: maint.token, json: {} });
    expect(none.body).toEqual({ error: 'title, can_push are missing, at least one parameter must be provided' });
    const push = await s.request('PUT', `${path(p2)}/${k1.id}`, { token: maint.token, json: { can_push: true, title: 'renamed' } });
    expect(push.status).toBe(200);
    expect(Object.keys(push.body)).toEqual(LINK_FIELDS);
    // k1 is in three projects: a Maintainer's title is left as it was (GitLab answers 200 all the same).
    expect(push.body).toMatchObject({ id: k1.id, title: 'CI', can_push: true });
    expect((await s.request('GET', `${path(p1)}/${k1.id}`, { token: maint.token })).body.can_push).toBe(true);
    const byAdmin = await s.request('PUT', `${path(p2)}/${k1.id}`, { json: { title: 'CI key' } });
    expect(byAdmin.body).toMatchObject({ title: 'CI key', can_push: true });
    expect((await s.request('GET', `${path(p1)}/${k1.id}`, { token: maint.token })).body.title).toBe('CI key');
    // A private key in this project alone: its Maintainer renames it; a blank title is a validation error.
    const only = (await s.request('POST', path(p2), { token: maint.token, json: { title: 'single', key: openssh() } })).body;
    const renamed = await s.request('PUT', `${path(p2)}/${only.id}`, { token: maint.token, form: { title: 'single renamed' } });
    expect(renamed.body).toMatchObject({ title: 'single renamed', can_push: false });
    const blank = await s.request('PUT', `${path(p2)}/${only.id}`, { token: maint.token, json: { title: '' } });
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual({ message: { deploy_key: { title: ["can't be blank"] } } });
    expect((await s.request('PUT', `${path(p2)}/99999`, { token: maint.token, json: { can_push: true } })).body).toEqual({ message: '404 Not found' });
    expect((await s.request('PUT', `${path(p1)}/${only.id}`, { token: maint.token, json: { can_push: true } })).status).toBe(404);
  });

  it('removes a key from a project (204); a private key in no other project is deleted, one in others stays', async () => {
    const del = await s.request('DELETE', `${path(p2)}/${k1.id}`, { token: maint.token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await s.request('DELETE', `${path(p2)}/${k1.id}`, { token: maint.token })).body).toEqual({ message: '404 Deploy key Not Found' });
    expect((await s.request('GET', `${path(p1)}/${k1.id}`, { token: maint.token })).status).toBe(200);
    const lone = (await s.request('POST', path(p2), { token: maint.token, json: { title: 'lone', key: openssh() } })).body;
    expect((await s.request('DELETE', `${path(p2)}/${lone.id}`, { token: maint.token })).status).toBe(204);
    const all = await s.request('GET', '/deploy_keys', { query: { per_page: 100 } });
    expect(all.body.map((k: any) => k.id)).not.toContain(lone.id);
    expect(all.body.map((k: any) => k.id)).toContain(k1.id);
    // Grape's destroy_conditionally!: a link changed after If-Unmodified-Since is 412.
    const fresh = (await s.request('POST', path(p2), { token: maint.token, json: { title: 'cond', key: openssh() } })).body;
    const stale = await s.request('DELETE', `${path(p2)}/${fresh.id}`, { token: maint.token, headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 2004 00:00:00 GMT' } });
    expect(stale.status).toBe(412);
  });

  it('pages a project\'s keys in the order they were enabled', async () => {
    const first = await s.request('GET', path(p3), { token: owner.token, query: { per_page: 1 } });
    expect(first.body.length).toBe(1);
    expect(first.headers.get('x-total')).toBe('2');
    expect(first.headers.get('x-next-page')).toBe('2');
    const second = await s.request('GET', path(p3), { token: owner.token, query: { per_page: 1, page: 2 } });
    expect(second.body[0].id).toBe(k1.id);
  });
});

describe('instance deploy keys (administrators)', () => {
  let pub: any;

  it('POST /deploy_keys makes a public key (201, DeployKey); others get 401/403; duplicates 400', async () => {
    const text = openssh('ed25519', 'fleet');
    expect((await s.request('POST', '/deploy_keys', { token: null, json: { title: 'fleet', key: text } })).status).toBe(401);
    expect((await s.request('POST', '/deploy_keys', { token: maint.token, json: { title: 'fleet', key: text } })).status).toBe(403);
    const r = await s.request('POST', '/deploy_keys', { json: { title: 'fleet', key: text } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(KEY_FIELDS);
    pub = r.body;
    const dup = await s.request('POST', '/deploy_keys', { json: { title: 'again', key: text } });
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({ message: { fingerprint_sha256: ['has already been taken'] } });
    const bad = await s.request('POST', '/deploy_keys', { json: { title: 'bad', key: 'nope' } });
    expect(bad.body).toEqual({ message: { key: ['is invalid'], fingerprint_sha256: ['cannot be generated'] } });
  });

  it('any Maintainer enables or adds a public key; a Maintainer updates its can_push but not its title', async () => {
    const en = await s.request('POST', `${path(p2)}/${pub.id}/enable`, { token: maint.token });
    expect(en.status).toBe(201);
    expect(en.body).toEqual(pub);
    const added = await s.request('POST', path(p1), { token: maint.token, json: { title: 'x', key: pub.key, can_push: true } });
    expect(added.body).toEqual({ ...pub, can_push: true });
    const put = await s.request('PUT', `${path(p2)}/${pub.id}`, { token: maint.token, json: { title: 'mine now', can_push: true } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ title: 'fleet', can_push: true });
    // Removing a public key from its last project keeps the key.
    await s.request('DELETE', `${path(p1)}/${pub.id}`, { token: maint.token });
    await s.request('DELETE', `${path(p2)}/${pub.id}`, { token: maint.token });
    const all = await s.request('GET', '/deploy_keys', { query: { public: true } });
    expect(all.body.map((k: any) => k.id)).toEqual([pub.id]);
  });

  it('GET /deploy_keys lists every key with the projects it is in, by access', async () => {
    expect((await s.request('GET', '/deploy_keys', { token: null })).status).toBe(401);
    expect((await s.request('GET', '/deploy_keys', { token: maint.token })).status).toBe(403);
    expect((await s.request('GET', '/deploy_keys', { query: { public: 'perhaps' } })).body).toEqual({ error: 'public is invalid' });
    const all = await s.request('GET', '/deploy_keys', { query: { per_page: 100 } });
    expect(all.status).toBe(200);
    expect(all.body.map((k: any) => k.id)).toEqual([...all.body.map((k: any) => k.id)].sort((a: number, b: number) => a - b));
    for (const k of all.body) expect(Object.keys(k)).toEqual([...KEY_FIELDS, 'projects_with_write_access', 'projects_with_readonly_access']);
    const ci = all.body.find((k: any) => k.title === 'CI key');
    expect(ci.projects_with_write_access.map((p: any) => p.id)).toEqual([p1.id]);
    expect(ci.projects_with_readonly_access.map((p: any) => p.id)).toEqual([p3.id]);
    expect(Object.keys(ci.projects_with_write_access[0])).toEqual(IDENTITY_FIELDS);
    expect(ci.projects_with_write_access[0]).toMatchObject({ name: 'dk-one', path: 'dk-one', path_with_namespace: p1.path_with_namespace, name_with_namespace: 'dkowner / dk-one' });
  });
});

describe('deletion', () => {
  it('a deleted project takes its links; its keys stay (as in GitLab)', async () => {
    const gone = await createProject(s, 'dk-gone', { token: owner.token });
    const k = (await s.request('POST', path(gone), { token: owner.token, json: { title: 'orphan', key: openssh() } })).body;
    expect((await s.request('DELETE', `/projects/${gone.id}`, { token: owner.token })).status).toBe(202);
    const links = await s.app.lw.db.selectFrom('deploy_keys_projects').select('id').where('project_id', '=', gone.id).execute();
    expect(links).toEqual([]);
    const all = await s.request('GET', '/deploy_keys', { query: { per_page: 100 } });
    const left = all.body.find((x: any) => x.id === k.id);
    expect(left).toMatchObject({ title: 'orphan', projects_with_write_access: [], projects_with_readonly_access: [] });
    // The owner, still a member of nothing holding it, cannot enable it again; an administrator's list keeps it.
    expect((await s.request('POST', `${path(p3)}/${k.id}/enable`, { token: owner.token })).status).toBe(404);
  });

  it('a deleted user\'s keys stay, with no owner (dependent: :nullify)', async () => {
    const leaver = await s.createUser('dkleaver');
    const mine = await createProject(s, 'dk-leaver', { token: owner.token });
    await addMember(s, mine.id, leaver.id, 40);
    const k = (await s.request('POST', path(mine), { token: leaver.token, json: { title: 'leaver', key: openssh() } })).body;
    expect((await s.request('DELETE', `/users/${leaver.id}`)).status).toBe(204);
    const row = await s.app.lw.db.selectFrom('deploy_keys').select(['id', 'user_id']).where('id', '=', k.id).executeTakeFirst();
    expect(row).toEqual({ id: k.id, user_id: null });
    expect((await s.request('GET', `${path(mine)}/${k.id}`, { token: owner.token })).body.title).toBe('leaver');
  });
});

describe('GET /keys?fingerprint=', () => {
  it('finds a deploy key by either fingerprint (DeployKeyWithUser: its projects as links); users\' keys as before', async () => {
    const k = (await s.request('GET', path(p1), { token: maint.token })).body[0];
    for (const fingerprint of [k.fingerprint, k.fingerprint_sha256, k.fingerprint_sha256.slice('SHA256:'.length)]) {
      const r = await s.request('GET', '/keys', { query: { fingerprint } });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body)).toEqual([...KEY_FIELDS, 'user', 'deploy_keys_projects']);
      expect(r.body).toMatchObject({ id: k.id, title: k.title, user: { id: maint.id, username: 'dkmaint' } });
      expect(r.body.deploy_keys_projects).toContainEqual(expect.objectContaining({ deploy_key_id: k.id, project_id: p1.id }));
      expect(Object.keys(r.body.deploy_keys_projects[0])).toEqual(['id', 'deploy_key_id', 'project_id', 'created_at', 'updated_at', 'can_push']);
    }
    expect((await s.request('GET', '/keys', { query: { fingerprint: 'SHA256:nothing' } })).status).toBe(404);
    expect((await s.request('GET', '/keys', { token: maint.token, query: { fingerprint: k.fingerprint } })).status).toBe(403);
  });
});

describe('GET /users/:id/project_deploy_keys', () => {
  it('the keys of the projects both users maintain; none in common is 403', async () => {
    const both = await s.request('GET', `/users/${maint.id}/project_deploy_keys`, { token: owner.token });
    expect(both.status).toBe(200);
    for (const k of both.body) expect(Object.keys(k)).toEqual(KEY_FIELDS);
    const p1Keys = (await s.request('GET', path(p1), { token: owner.token, query: { per_page: 100 } })).body.map((k: any) => k.id);
    const p2Keys = (await s.request('GET', path(p2), { token: owner.token, query: { per_page: 100 } })).body.map((k: any) => k.id);
    expect(both.body.map((k: any) => k.id)).toEqual([...new Set([...p1Keys, ...p2Keys])].sort((a, b) => a - b));
    const byName = await s.request('GET', `/users/${maint.username}/project_deploy_keys`, { token: owner.token });
    expect(byName.body).toEqual(both.body);
    const forbidden = await s.request('GET', `/users/${owner.id}/project_deploy_keys`, { token: dev.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ message: '403 Forbidden - No common authorized project found' });
    expect((await s.request('GET', '/users/99999/project_deploy_keys', { token: owner.token })).body).toEqual({ message: '404 User Not Found' });
    expect((await s.request('GET', `/users/${owner.id}/project_deploy_keys`, { token: null })).status).toBe(401);
  });
});

describe('response schemas', () => {
  it('every answer matches its entry in the response registry', async () => {
    const ajv = new Ajv({ strict: false });
    const k = (await s.request('GET', path(p1), { token: maint.token })).body[0];
    const cases: Array<[string, string, string, any]> = [
      ['GET', '/deploy_keys', '/deploy_keys', (await s.request('GET', '/deploy_keys')).body],
      ['GET', '/projects/:id/deploy_keys', path(p1), (await s.request('GET', path(p1), { token: maint.token })).body],
      ['GET', '/projects/:id/deploy_keys/:key_id', `${path(p1)}/${k.id}`, (await s.request('GET', `${path(p1)}/${k.id}`, { token: maint.token })).body],
      ['PUT', '/projects/:id/deploy_keys/:key_id', `${path(p1)}/${k.id}`, (await s.request('PUT', `${path(p1)}/${k.id}`, { token: maint.token, json: { can_push: true } })).body],
      ['POST', '/projects/:id/deploy_keys/:key_id/enable', `${path(p2)}/${k.id}/enable`, (await s.request('POST', `${path(p2)}/${k.id}/enable`, { token: maint.token })).body],
      ['POST', '/projects/:id/deploy_keys', path(p2), (await s.request('POST', path(p2), { token: maint.token, json: { title: 'schema', key: openssh() } })).body],
      ['POST', '/deploy_keys', '/deploy_keys', (await s.request('POST', '/deploy_keys', { json: { title: 'schema', key: openssh() } })).body],
      ['GET', '/users/:id/project_deploy_keys', `/users/${maint.id}/project_deploy_keys`, (await s.request('GET', `/users/${maint.id}/project_deploy_keys`, { token: owner.token })).body],
      ['GET', '/keys', '/keys', (await s.request('GET', '/keys', { query: { fingerprint: k.fingerprint_sha256 } })).body],
    ];
    for (const [method, route, url, body] of cases) {
      const spec = responseFor(method, `/api/v4${route}`) as { kind: string; schema: object };
      expect(spec.kind, url).toBe('json');
      const validate = ajv.compile(spec.schema);
      expect(validate(body), `${method} ${url}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });
});

describe('clients', () => {
  it('@gitbeaker/rest DeployKeys: create, all, show, edit, enable, remove', async () => {
    const api = new Gitlab({ host: s.url, token: maint.token });
    const made = await api.DeployKeys.create(p2.id, 'gitbeaker', openssh(), { canPush: true });
    expect(made).toMatchObject({ title: 'gitbeaker', can_push: true });
    const listed = await api.DeployKeys.all({ projectId: p2.id });
    expect(listed.map((k) => k.id)).toContain(made.id);
    const shown = await api.DeployKeys.show(p2.id, made.id);
    expect(shown.fingerprint_sha256).toBe(made.fingerprint_sha256);
    const edited = await api.DeployKeys.edit(p2.id, made.id, { canPush: false, title: 'gitbeaker 2' });
    expect(edited).toMatchObject({ title: 'gitbeaker 2', can_push: false });
    const enabled = await api.DeployKeys.enable(p1.id, made.id);
    expect(enabled.id).toBe(made.id);
    const mineAcross = await api.DeployKeys.all({ userId: maint.id });
    expect(mineAcross.map((k) => k.id)).toContain(made.id);
    await api.DeployKeys.remove(p1.id, made.id);
    await api.DeployKeys.remove(p2.id, made.id);
    await expect(api.DeployKeys.show(p2.id, made.id)).rejects.toThrow();
    const admin = new Gitlab({ host: s.url, token: s.rootToken });
    const everything = await admin.DeployKeys.all({ public: true });
    expect(everything.every((k) => Array.isArray(k.projects_with_write_access))).toBe(true);
  });

  it("answers python-gitlab's calls", async () => {
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
project = gl.projects.get(int(sys.argv[3]))
other = gl.projects.get(int(sys.argv[4]))
key = project.keys.create({'title': 'python', 'key': sys.argv[5], 'can_push': True})
listed = [k.id for k in project.keys.list(get_all=True)]
got = project.keys.get(key.id)
got.title = 'python 2'
got.can_push = False
got.save()
again = project.keys.get(key.id)
enabled = other.keys.enable(key.id)
in_other = [k.id for k in other.keys.list(get_all=True)]
project.keys.delete(key.id)
other.keys.delete(key.id)
print(json.dumps({'listed': key.id in listed, 'title': again.title, 'can_push': again.can_push, 'enabled': enabled['id'] == key.id, 'in_other': key.id in in_other, 'left': [k.id for k in project.keys.list(get_all=True)].count(key.id)}))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, maint.token, String(p2.id), String(p1.id), openssh()]);
    expect(JSON.parse(stdout)).toEqual({ listed: true, title: 'python 2', can_push: false, enabled: true, in_other: true, left: 0 });
  });
});
