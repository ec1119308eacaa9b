// The users API through the real app: create, conflicts, validation, update with rename, delete,
// block/unblock, filters, what other users see, and admin-only routes.
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

const newUser = (u: string, extra: Record<string, unknown> = {}) => ({ username: u, email: `${u}@example.com`, name: `User ${u}`, password: 'password-1234', ...extra });

async function userCount(): Promise<number> {
  const row = await s.app.lw.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('GET /user', () => {
  it('returns the current user with web_url <base>/<username> and email', async () => {
    const r = await s.request('GET', '/user', { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: alice.id, username: 'alice', email: 'alice@example.com', web_url: `${s.url}/alice`, state: 'active' });
    expect(r.body.is_admin).toBeUndefined();
    const root = await s.request('GET', '/user');
    expect(root.body.is_admin).toBe(true);
    expect(root.body.id).toBe(1);
    expect(typeof root.body.namespace_id).toBe('number');
  });

  it('every user has a personal namespace of kind user', async () => {
    const ns = await s.app.lw.db.selectFrom('namespaces').selectAll().where('owner_id', '=', alice.id).where('kind', '=', 'user').execute();
    expect(ns).toHaveLength(1);
    expect(ns[0].full_path).toBe('alice');
  });
});

describe('POST /users', () => {
  it('creates a user: 201 with UserWithAdmin', async () => {
    const r = await s.request('POST', '/users', { json: newUser('carol', { admin: false, bio: 'hi' }) });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ username: 'carol', email: 'carol@example.com', name: 'User carol', is_admin: false, bio: 'hi' });
    expect(r.body.password).toBeUndefined();
    expect(r.body.password_digest).toBeUndefined();
    expect(typeof r.body.namespace_id).toBe('number');
  });

  it('409 when the username or email is taken (case-insensitive), nothing created', async () => {
    const before = await userCount();
    const u = await s.request('POST', '/users', { json: newUser('ALICE', { email: 'fresh@example.com' }) });
    expect(u.status).toBe(409);
    expect(u.body).toEqual({ message: 'Username has already been taken' });
    const e = await s.request('POST', '/users', { json: newUser('fresh', { email: 'Alice@Example.com' }) });
    expect(e.status).toBe(409);
    expect(e.body).toEqual({ message: 'Email has already been taken' });
    expect(await userCount()).toBe(before);
  });

  it('400 for missing attributes, bad values and wrong types; nothing created', async () => {
    const before = await userCount();
    const cases: Array<[Record<string, unknown>, (b: any) => void]> = [
      [{ email: 'x@example.com', name: 'x', password: 'password-1234' }, (b) => expect(JSON.stringify(b)).toContain('username')],
      [{ username: 'x', name: 'x', password: 'password-1234' }, (b) => expect(JSON.stringify(b)).toContain('email')],
      [{ username: 'x', email: 'x@example.com', password: 'password-1234' }, (b) => expect(JSON.stringify(b)).toContain('name')],
      [{ username: 'x', email: 'x@example.com', name: 'x' }, (b) => expect(b.error).toContain('password')],
      [newUser('short', { password: 'short' }), (b) => expect(b.message.password[0]).toMatch(/too short/)],
      [newUser('bademail', { email: 'not-an-email' }), (b) => expect(b.message.email).toEqual(['is invalid'])],
      [newUser('bad/name'), (b) => expect(b.message.username).toBeDefined()],
      [newUser('flagged', { admin: 'maybe' }), (b) => expect(b).toEqual({ error: 'admin is invalid' })],
      [newUser('flagged2', { admin: null }), (b) => expect(b).toEqual({ error: 'admin is invalid' })],
      [newUser('arr', { name: ['a', 'b'] }), (b) => expect(b).toEqual({ error: 'name is invalid' })],
      [newUser('longbio', { bio: 'x'.repeat(300) }), (b) => expect(b.error).toMatch(/bio is too long/)],
      [newUser('plimit', { projects_limit: -1 }), (b) => expect(b.error).toMatch(/projects_limit/)],
      [newUser('twice', { reset_password: true }), (b) => expect(b.error).toMatch(/mutually exclusive/)],
    ];
    for (const [body, check] of cases) {
      const r = await s.request('POST', '/users', { json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.headers.get('content-type')).toBe('application/json');
      check(r.body);
    }
    expect(await userCount()).toBe(before);
  });

  it('a username that is another namespace path is taken', async () => {
    // A user renamed away leaves a route behind? No: the new name claims a route; its old name is free again only if unused.
    const r = await s.request('POST', '/users', { json: newUser('root', { email: 'root2@example.com' }) });
    expect(r.status).toBe(409);
  });

  it('non-admins get 403 and create nothing; anonymous gets 401', async () => {
    const before = await userCount();
    const r = await s.request('POST', '/users', { token: alice.token, json: newUser('mallory') });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ message: '403 Forbidden' });
    const anon = await s.request('POST', '/users', { token: null, json: newUser('mallory') });
    expect(anon.status).toBe(401);
    expect(await userCount()).toBe(before);
  });

  it('the created user can log in with a token and sees itself', async () => {
    const dan = await s.createUser('dan');
    const me = await s.request('GET', '/user', { token: dan.token });
    expect(me.body.username).toBe('dan');
  });
});

describe('GET /users and /users/:id', () => {
  it('another user’s view lacks email and admin fields', async () => {
    const r = await s.request('GET', `/users/${bob.id}`, { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body.username).toBe('bob');
    expect(r.body.email).toBeUndefined();
    expect(r.body.is_admin).toBeUndefined();
    expect(r.body.web_url).toBe(`${s.url}/bob`);
    const list = await s.request('GET', '/users', { token: alice.token });
    for (const u of list.body) {
      expect(u.email).toBeUndefined();
      expect(u.is_admin).toBeUndefined();
    }
  });

  it('one’s own profile through /users/:id includes the email; admins see everything', async () => {
    const self = await s.request('GET', `/users/${alice.id}`, { token: alice.token });
    expect(self.body.email).toBe('alice@example.com');
    const admin = await s.request('GET', `/users/${alice.id}`);
    expect(admin.body.email).toBe('alice@example.com');
    expect(admin.body.is_admin).toBe(false);
  });

  it('404 for unknown or malformed ids', async () => {
    for (const id of ['999999', 'abc', '-1', '1.5', '99999999999999999999']) {
      const r = await s.request('GET', `/users/${id}`);
      expect(r.status, id).toBe(404);
      expect(r.body).toEqual({ message: '404 User Not Found' });
    }
  });

  it('filters: username (case-insensitive), search, active, blocked', async () => {
    const byName = await s.request('GET', '/users?username=ALICE');
    expect(byName.body.map((u: any) => u.username)).toEqual(['alice']);
    const search = await s.request('GET', '/users?search=bo');
    expect(search.body.map((u: any) => u.username)).toEqual(['bob']);
    const eve = await s.createUser('eve');
    await s.request('POST', `/users/${eve.id}/block`);
    const blocked = await s.request('GET', '/users?blocked=true');
    expect(blocked.body.map((u: any) => u.username)).toEqual(['eve']);
    const active = await s.request('GET', '/users?active=true&per_page=100');
    expect(active.body.map((u: any) => u.username)).not.toContain('eve');
    await s.request('POST', `/users/${eve.id}/unblock`);
  });

  it('non-admins cannot search by part of an email; exact email matches', async () => {
    const partial = await s.request('GET', '/users?search=bob@exa', { token: alice.token });
    expect(partial.body).toEqual([]);
    const exact = await s.request('GET', '/users?search=bob@example.com', { token: alice.token });
    expect(exact.body.map((u: any) => u.username)).toEqual(['bob']);
  });

  it('search with LIKE wildcards matches them literally', async () => {
    const r = await s.request('GET', '/users?search=%25');
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    const u = await s.request('GET', '/users?search=_');
    expect(u.body).toEqual([]);
  });
});

describe('PUT /users/:id', () => {
  it('updates fields and renames the personal namespace with the username', async () => {
    const frank = await s.createUser('frank');
    const r = await s.request('PUT', `/users/${frank.id}`, { json: { username: 'franklin', name: 'Franklin', bio: 'b' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ username: 'franklin', name: 'Franklin', bio: 'b', web_url: `${s.url}/franklin` });
    const ns = await s.app.lw.db.selectFrom('namespaces').selectAll().where('owner_id', '=', frank.id).where('kind', '=', 'user').executeTakeFirstOrThrow();
    expect(ns.full_path).toBe('franklin');
    expect(ns.path).toBe('franklin');
    // The token still works, and the old name is no longer the user's.
    expect((await s.request('GET', '/user', { token: frank.token })).body.username).toBe('franklin');
    expect((await s.request('GET', '/users?username=frank')).body).toEqual([]);
  });

  it('a case-only rename is allowed', async () => {
    const gina = await s.createUser('gina');
    const r = await s.request('PUT', `/users/${gina.id}`, { json: { username: 'Gina' } });
    expect(r.status).toBe(200);
    expect(r.body.username).toBe('Gina');
  });

  it('409 when renaming to a taken username or email; nothing changes', async () => {
    const r = await s.request('PUT', `/users/${bob.id}`, { json: { username: 'alice', bio: 'no' } });
    expect(r.status).toBe(409);
    const e = await s.request('PUT', `/users/${bob.id}`, { json: { email: 'ALICE@example.com' } });
    expect(e.status).toBe(409);
    const after = await s.request('GET', `/users/${bob.id}`);
    expect(after.body.username).toBe('bob');
    expect(after.body.email).toBe('bob@example.com');
    expect(after.body.bio).not.toBe('no');
  });

  it('400 for bad values; 403 for non-admins, even on themselves; 404 for unknown ids', async () => {
    expect((await s.request('PUT', `/users/${bob.id}`, { json: { email: 'nope' } })).status).toBe(400);
    expect((await s.request('PUT', `/users/${bob.id}`, { json: { username: '' } })).status).toBe(400);
    expect((await s.request('PUT', `/users/${bob.id}`, { json: { name: '' } })).status).toBe(400);
    expect((await s.request('PUT', `/users/${bob.id}`, { json: { projects_limit: 'ten' } })).body).toEqual({ error: 'projects_limit is invalid' });
    expect((await s.request('PUT', `/users/${bob.id}`, { token: alice.token, json: { bio: 'x' } })).status).toBe(403);
    expect((await s.request('PUT', `/users/${alice.id}`, { token: alice.token, json: { admin: true } })).status).toBe(403);
    expect((await s.request('GET', '/user', { token: alice.token })).body.is_admin).toBeUndefined();
    expect((await s.request('PUT', '/users/999999', { json: { bio: 'x' } })).status).toBe(404);
  });

  it('changes the password', async () => {
    const r = await s.request('PUT', `/users/${bob.id}`, { json: { password: 'another-password-1' } });
    expect(r.status).toBe(200);
  });
});

describe('DELETE /users/:id', () => {
  it('204, the user, its tokens and its namespace are gone, and the name is free again', async () => {
    const hank = await s.createUser('hank');
    const del = await s.request('DELETE', `/users/${hank.id}`, { query: { hard_delete: true } });
    expect(del.status).toBe(204);
    expect((await s.request('GET', `/users/${hank.id}`)).status).toBe(404);
    expect((await s.request('GET', '/user', { token: hank.token })).status).toBe(401);
    const ns = await s.app.lw.db.selectFrom('namespaces').select('id').where('owner_id', '=', hank.id).execute();
    expect(ns).toEqual([]);
    const again = await s.request('POST', '/users', { json: newUser('hank') });
    expect(again.status).toBe(201);
  });

  it('403 for non-admins, 404 for unknown users, 400 for a bad hard_delete', async () => {
    expect((await s.request('DELETE', `/users/${bob.id}`, { token: alice.token })).status).toBe(403);
    expect((await s.request('DELETE', '/users/999999')).status).toBe(404);
    expect((await s.request('DELETE', `/users/${bob.id}?hard_delete=perhaps`)).status).toBe(400);
    expect((await s.request('GET', `/users/${bob.id}`)).status).toBe(200);
  });

  it('an admin cannot delete itself', async () => {
    const r = await s.request('DELETE', '/users/1');
    expect(r.status).toBe(403);
    expect((await s.request('GET', '/user')).status).toBe(200);
  });
});

describe('block and unblock', () => {
  it('block: 201 true, the user is blocked and its tokens stop working; unblock restores', async () => {
    const ivan = await s.createUser('ivan');
    const b = await s.request('POST', `/users/${ivan.id}/block`);
    expect(b.status).toBe(201);
    expect(b.body).toBe(true);
    expect((await s.request('GET', `/users/${ivan.id}`)).body.state).toBe('blocked');
    expect((await s.request('GET', '/user', { token: ivan.token })).status).toBe(401);
    const u = await s.request('POST', `/users/${ivan.id}/unblock`);
    expect(u.status).toBe(201);
    expect(u.body).toBe(true);
    expect((await s.request('GET', '/user', { token: ivan.token })).status).toBe(200);
  });

  it('non-admins get 403; unknown users 404', async () => {
    expect((await s.request('POST', `/users/${bob.id}/block`, { token: alice.token })).status).toBe(403);
    expect((await s.request('GET', `/users/${bob.id}`)).body.state).toBe('active');
    expect((await s.request('POST', '/users/999999/block')).status).toBe(404);
  });
});

describe('concurrent writes', () => {
  it('concurrent creations of one username or email give one 201 and 409s, never a 500', async () => {
    const same = await Promise.all([0, 1, 2, 3, 4].map((i) => s.request('POST', '/users', { json: newUser('race', { email: `race${i}@example.com` }) })));
    expect(same.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const r of same.filter((x) => x.status === 409)) expect(r.body).toEqual({ message: 'Username has already been taken' });
    const email = await Promise.all([0, 1, 2, 3, 4].map((i) => s.request('POST', '/users', { json: newUser(`mail${i}`, { email: 'same@example.com' }) })));
    expect(email.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const r of email.filter((x) => x.status === 409)) expect(r.body).toEqual({ message: 'Email has already been taken' });
  });

  it('two users renamed to one name at once: one 200, one 409', async () => {
    const a = await s.createUser('rename-a');
    const b = await s.createUser('rename-b');
    const rs = await Promise.all([a, b].map((u) => s.request('PUT', `/users/${u.id}`, { json: { username: 'rename-target' } })));
    expect(rs.map((r) => r.status).sort()).toEqual([200, 409]);
    const ns = await s.app.lw.db.selectFrom('namespaces').select('owner_id').where('full_path', '=', 'rename-target').execute();
    expect(ns).toHaveLength(1);
  });
});
