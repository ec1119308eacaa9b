// Stars: starring and unstarring (201 with the project, 304 when nothing changes), star_count,
// starrers, `starred=true` and `order_by=star_count`, a user's projects and starred projects, and
// stars going with their project or user; the repository size measured again after commits.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let alice: U;
let bob: U;
let carol: U;
let pub: { id: number };
let other: { id: number };
let secret: { id: number };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  carol = await s.createUser('carol');
  pub = await createProject(s, 'pub', { token: alice.token, visibility: 'public' });
  other = await createProject(s, 'other', { token: alice.token, visibility: 'public' });
  secret = await createProject(s, 'secret', { token: alice.token });
}, 60_000);

afterAll(async () => closeServer(s));

const star = (token: string, id: number, action = 'star') => s.request('POST', `/projects/${id}/${action}`, { token });

describe('stars', () => {
  it('stars once (201 with the project and its count), then 304; unstars likewise', async () => {
    const first = await star(bob.token, pub.id);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id: pub.id, star_count: 1 });
    expect(first.body.permissions).toBeDefined();
    const again = await star(bob.token, pub.id);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect((await star(carol.token, pub.id)).body.star_count).toBe(2);
    expect((await s.request('GET', `/projects/${pub.id}`, { token: alice.token })).body.star_count).toBe(2);
    const un = await star(carol.token, pub.id, 'unstar');
    expect(un.status).toBe(201);
    expect(un.body.star_count).toBe(1);
    expect((await star(carol.token, pub.id, 'unstar')).status).toBe(304);
  });

  it('needs a signed-in caller who can see the project', async () => {
    expect((await s.request('POST', `/projects/${pub.id}/star`, { token: null })).status).toBe(401);
    expect((await star(bob.token, secret.id)).body).toEqual({ message: '404 Project Not Found' });
  });

  it('lists starrers, newest first, with their star dates, and searches them', async () => {
    await star(carol.token, pub.id);
    const r = await s.request('GET', `/projects/${pub.id}/starrers`, { token: null });
    expect(r.status).toBe(200);
    expect(r.body.map((x: any) => x.user.username)).toEqual(['carol', 'bob']);
    expect(Object.keys(r.body[0])).toEqual(['starred_since', 'user']);
    expect(r.body[0].starred_since).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(r.headers.get('x-total')).toBe('2');
    const found = await s.request('GET', `/projects/${pub.id}/starrers`, { token: bob.token, query: { search: 'bo' } });
    expect(found.body.map((x: any) => x.user.username)).toEqual(['bob']);
  });

  it('filters and sorts project lists by stars', async () => {
    await star(bob.token, other.id);
    const mine = await s.request('GET', '/projects', { token: bob.token, query: { starred: true, order_by: 'id', sort: 'asc' } });
    expect(mine.body.map((p: any) => p.id)).toEqual([pub.id, other.id]);
    const byStars = await s.request('GET', '/projects', { token: alice.token, query: { order_by: 'star_count', sort: 'desc', owned: true } });
    expect(byStars.body.map((p: any) => [p.id, p.star_count])).toEqual([[pub.id, 2], [other.id, 1], [secret.id, 0]]);
  });

  it('lists a user\'s projects and starred projects, by id or username, as the caller may see them', async () => {
    const owned = await s.request('GET', `/users/${alice.username}/projects`, { token: carol.token, query: { order_by: 'id', sort: 'asc' } });
    expect(owned.status).toBe(200);
    expect(owned.body.map((p: any) => p.id)).toEqual([pub.id, other.id]);
    const ownedBySelf = await s.request('GET', `/users/${alice.id}/projects`, { token: alice.token });
    expect(ownedBySelf.body).toHaveLength(3);
    const starred = await s.request('GET', `/users/${bob.id}/starred_projects`, { token: null, query: { order_by: 'id', sort: 'asc' } });
    expect(starred.body.map((p: any) => p.id)).toEqual([pub.id, other.id]);
    expect((await s.request('GET', '/users/nobody/projects', { token: bob.token })).body).toEqual({ message: '404 User Not Found' });
    // A private profile keeps its stars to itself.
    const priv = await s.request('PUT', `/users/${bob.id}`, { json: { private_profile: true } });
    expect(priv.status, priv.text).toBe(200);
    expect((await s.request('GET', `/users/${bob.id}/starred_projects`, { token: carol.token })).body).toEqual([]);
    expect((await s.request('GET', `/users/${bob.id}/starred_projects`, { token: bob.token })).body).toHaveLength(2);
    expect((await s.request('GET', `/projects/${pub.id}/starrers`, { token: carol.token })).body.map((x: any) => x.user.username)).toEqual(['carol']);
    // A private profile's projects likewise (GitLab's PersonalProjectsFinder), and a blocked user's.
    await s.request('PUT', `/users/${alice.id}`, { json: { private_profile: true } });
    expect((await s.request('GET', `/users/${alice.id}/projects`, { token: carol.token })).body).toEqual([]);
    expect((await s.request('GET', `/users/${alice.id}/projects`, { token: alice.token })).body).toHaveLength(3);
    await s.request('PUT', `/users/${alice.id}`, { json: { private_profile: false } });
    expect((await s.request('POST', `/users/${alice.id}/block`)).status).toBe(201);
    expect((await s.request('GET', `/users/${alice.id}/projects`, { token: carol.token })).body).toEqual([]);
    expect((await s.request('POST', `/users/${alice.id}/unblock`)).status).toBe(201);
    expect((await s.request('GET', `/users/${alice.id}/projects`, { token: carol.token })).body).toHaveLength(2);
  });

  it('stars go with a deleted user (counts follow) and a deleted project', async () => {
    const dave = await s.createUser('dave');
    await star(dave.token, other.id);
    expect((await s.request('GET', `/projects/${other.id}`, { token: alice.token })).body.star_count).toBe(2);
    const del = await s.request('DELETE', `/users/${dave.id}`);
    expect([202, 204]).toContain(del.status);
    for (let i = 0; i < 50; i++) {
      if ((await s.request('GET', `/projects/${other.id}`, { token: alice.token })).body.star_count === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await s.request('GET', `/projects/${other.id}`, { token: alice.token })).body.star_count).toBe(1);
    expect((await s.request('DELETE', `/projects/${other.id}`, { token: alice.token })).status).toBe(202);
    expect((await s.request('GET', `/users/${bob.id}/starred_projects`, { token: bob.token })).body.map((p: any) => p.id)).toEqual([pub.id]);
  });
});

describe('repository size', () => {
  it('is measured again after commits, so group statistics grow with the repository', async () => {
    const g = await s.request('POST', '/groups', { json: { name: 'sized', path: 'sized' } });
    expect(g.status).toBe(201);
    const p = await s.request('POST', '/projects', { json: { name: 'big', namespace_id: g.body.id, initialize_with_readme: true } });
    expect(p.status).toBe(201);
    const before = (await s.request('GET', '/groups', { query: { statistics: true, search: 'sized' } })).body[0].statistics.repository_size;
    expect(before).toBeGreaterThan(0);
    // 300 KB that do not compress.
    const content = randomBytes(300 * 1024).toString('base64');
    const c = await s.request('POST', `/projects/${p.body.id}/repository/commits`, { json: { branch: 'main', commit_message: 'big', actions: [{ action: 'create', file_path: 'big.b64', content }] } });
    expect(c.status, c.text).toBe(201);
    const after = (await s.request('GET', '/groups', { query: { statistics: true, search: 'sized' } })).body[0].statistics.repository_size;
    expect(after - before).toBeGreaterThan(250 * 1024);
  });

  it('shows project statistics to Reporters and up with statistics=true: the size and the default branch\'s commits', async () => {
    const p = await s.request('POST', '/projects', { token: alice.token, json: { name: 'counted', visibility: 'public', initialize_with_readme: true } });
    expect(p.status).toBe(201);
    for (const f of ['a', 'b']) {
      const c = await s.request('POST', `/projects/${p.body.id}/repository/commits`, { token: alice.token, json: { branch: 'main', commit_message: f, actions: [{ action: 'create', file_path: f, content: f }] } });
      expect(c.status).toBe(201);
    }
    const side = await s.request('POST', `/projects/${p.body.id}/repository/commits`, { token: alice.token, json: { branch: 'side', start_branch: 'main', commit_message: 'side', actions: [{ action: 'create', file_path: 's', content: 's' }] } });
    expect(side.status).toBe(201);
    const r = await s.request('GET', `/projects/${p.body.id}`, { token: alice.token, query: { statistics: true } });
    expect(r.body.statistics).toMatchObject({ commit_count: 3, wiki_size: 0, container_registry_size: 0 });
    expect(r.body.statistics.repository_size).toBeGreaterThan(0);
    expect(r.body.statistics.storage_size).toBe(r.body.statistics.repository_size);
    const keys = Object.keys(r.body);
    expect(keys.indexOf('statistics')).toBe(keys.indexOf('issue_branch_template') + 1);
    expect((await s.request('GET', `/projects/${p.body.id}`, { token: alice.token })).body).not.toHaveProperty('statistics');
    // Not for callers who are not Reporters (GitLab's read_statistics).
    expect((await s.request('GET', `/projects/${p.body.id}`, { token: carol.token, query: { statistics: true } })).body).not.toHaveProperty('statistics');
    const list = await s.request('GET', '/projects', { token: alice.token, query: { statistics: true, search: 'counted' } });
    expect(list.body[0].statistics.commit_count).toBe(3);
  });
});
