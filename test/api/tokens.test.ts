// Personal access tokens through the real app: admin creation, self creation, list and filters,
// get, self, revoke, rotate (old token 401 after), expiry rules, another user's access.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };

const day = (offset: number) => new Date(Date.now() + offset * 86400_000).toISOString().slice(0, 10);
const FIELDS = ['id', 'name', 'revoked', 'created_at', 'description', 'scopes', 'user_id', 'last_used_at', 'last_used_ips', 'active', 'expires_at'];

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
});
afterAll(async () => {
  await s?.close();
});

async function create(userId: number, body: Record<string, unknown>) {
  return s.request('POST', `/users/${userId}/personal_access_tokens`, { json: body });
}

async function tokenCount(): Promise<number> {
  const row = await s.app.lw.db.selectFrom('personal_access_tokens').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('POST /users/:user_id/personal_access_tokens', () => {
  it('201 with PersonalAccessTokenWithToken, and the token works once created', async () => {
    const r = await create(alice.id, { name: 'ci', scopes: ['api', 'read_user'], expires_at: day(30), description: 'for CI' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual([...FIELDS, 'token']);
    expect(r.body).toMatchObject({ name: 'ci', revoked: false, active: true, scopes: ['api', 'read_user'], user_id: alice.id, expires_at: day(30), description: 'for CI', last_used_at: null });
    expect(r.body.token).toMatch(/^glpat-/);
    expect(r.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect((await s.request('GET', '/user', { token: r.body.token })).body.username).toBe('alice');
  });

  it('accepts scopes as a comma list', async () => {
    const r = await create(alice.id, { name: 'comma', scopes: 'read_api,read_user' });
    expect(r.status).toBe(201);
    expect(r.body.scopes).toEqual(['read_api', 'read_user']);
  });

  it('400 for bad input and nothing is created', async () => {
    const before = await tokenCount();
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{ scopes: ['api'] }, { message: '400 Bad request - "name" not given' }],
      [{ name: 'x' }, { message: '400 Bad request - "scopes" not given' }],
      [{ name: 'x', scopes: [] }, { error: 'scopes is empty' }],
      [{ name: 'x', scopes: ['everything'] }, { error: 'scopes does not have a valid value' }],
      [{ name: '', scopes: ['api'] }, { error: 'name is empty' }],
      [{ name: 'x', scopes: ['api'], expires_at: 'tomorrow' }, { error: 'expires_at is invalid' }],
      [{ name: 'x', scopes: ['api'], expires_at: '2024-02-30' }, { error: 'expires_at is invalid' }],
      [{ name: 'x', scopes: [{ a: 1 }] }, { error: 'scopes is invalid' }],
      [{ name: { a: 1 }, scopes: ['api'] }, { error: 'name is invalid' }],
    ];
    for (const [body, expected] of cases) {
      const r = await create(alice.id, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body, JSON.stringify(body)).toEqual(expected);
    }
    expect((await create(alice.id, { name: 'x', scopes: ['api'], expires_at: day(0) })).status).toBe(400);
    expect((await create(alice.id, { name: 'x', scopes: ['api'], expires_at: day(-1) })).status).toBe(400);
    expect(await tokenCount()).toBe(before);
  });

  it('403 for non-admins, 404 for an unknown user', async () => {
    const r = await s.request('POST', `/users/${bob.id}/personal_access_tokens`, { token: alice.token, json: { name: 'steal', scopes: ['api'] } });
    expect(r.status).toBe(403);
    expect((await create(999999, { name: 'x', scopes: ['api'] })).status).toBe(404);
    expect((await create(999999, { name: 'x', scopes: ['api'] })).body).toEqual({ message: '404 User Not Found' });
  });
});

describe('POST /user/personal_access_tokens', () => {
  it('non-admins may only create k8s_proxy / self_rotate tokens for themselves', async () => {
    const ok = await s.request('POST', '/user/personal_access_tokens', { token: alice.token, json: { name: 'rot', scopes: ['self_rotate'] } });
    expect(ok.status).toBe(201);
    expect(ok.body.user_id).toBe(alice.id);
    const bad = await s.request('POST', '/user/personal_access_tokens', { token: alice.token, json: { name: 'api', scopes: ['api'] } });
    expect(bad.status).toBe(400);
  });
});

describe('listing and reading', () => {
  it('users see only their own tokens; admins see all and may filter by user_id', async () => {
    const mine = await s.request('GET', '/personal_access_tokens', { token: bob.token });
    expect(mine.status).toBe(200);
    expect(mine.body.length).toBeGreaterThan(0);
    expect(mine.body.every((t: any) => t.user_id === bob.id)).toBe(true);
    expect(mine.body[0].token).toBeUndefined();
    const other = await s.request('GET', `/personal_access_tokens?user_id=${alice.id}`, { token: bob.token });
    expect([401, 403]).toContain(other.status);
    const admin = await s.request('GET', `/personal_access_tokens?user_id=${alice.id}`);
    expect(admin.body.length).toBeGreaterThan(0);
    expect(admin.body.every((t: any) => t.user_id === alice.id)).toBe(true);
    expect(admin.headers.get('x-total')).toBe(String(admin.body.length));
  });

  it('filters: state, revoked, search, created_after with %2B, expires_before', async () => {
    const a = await create(bob.id, { name: 'filter-keep', scopes: ['api'], expires_at: day(10) });
    const b = await create(bob.id, { name: 'filter-revoke', scopes: ['api'], expires_at: day(100) });
    await s.request('DELETE', `/personal_access_tokens/${b.body.id}`);
    const q = (query: string) => s.request('GET', `/personal_access_tokens?user_id=${bob.id}&${query}`).then((r) => r.body.map((t: any) => t.name));
    expect(await q('search=filter')).toEqual(['filter-keep', 'filter-revoke']);
    expect(await q('search=filter&revoked=true')).toEqual(['filter-revoke']);
    expect(await q('search=filter&state=active')).toEqual(['filter-keep']);
    expect(await q('search=filter&state=inactive')).toEqual(['filter-revoke']);
    expect(await q(`search=filter&expires_before=${day(50)}`)).toEqual(['filter-keep']);
    expect(await q(`search=filter&expires_after=${day(50)}`)).toEqual(['filter-revoke']);
    expect(await q('search=filter&created_after=2000-01-01T00:00:00%2B01:00')).toEqual(['filter-keep', 'filter-revoke']);
    expect(await q('search=filter&created_before=2000-01-01T00:00:00%2B01:00')).toEqual([]);
    expect(a.status).toBe(201);
    for (const bad of ['state=gone', 'revoked=maybe', 'created_after=never', 'expires_before=soon', 'user_id=abc']) {
      const r = await s.request('GET', `/personal_access_tokens?${bad}`);
      expect(r.status, bad).toBe(400);
    }
  });

  it('GET /personal_access_tokens/:id: own or admin; another user’s token is 404', async () => {
    const t = await create(alice.id, { name: 'private', scopes: ['api'] });
    expect((await s.request('GET', `/personal_access_tokens/${t.body.id}`, { token: alice.token })).status).toBe(200);
    expect((await s.request('GET', `/personal_access_tokens/${t.body.id}`)).status).toBe(200);
    const other = await s.request('GET', `/personal_access_tokens/${t.body.id}`, { token: bob.token });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ message: '404 Personal Access Token Not Found' });
    expect((await s.request('GET', '/personal_access_tokens/999999')).status).toBe(404);
    expect((await s.request('GET', '/personal_access_tokens/abc')).status).toBe(400);
  });

  it('GET /personal_access_tokens/self describes the calling token without its value', async () => {
    const r = await s.request('GET', '/personal_access_tokens/self', { token: alice.token });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(FIELDS);
    expect(r.body.user_id).toBe(alice.id);
    expect((await s.request('GET', '/personal_access_tokens/self', { token: null })).status).toBe(401);
  });
});

describe('revoking', () => {
  it('DELETE /personal_access_tokens/:id: 204, the token stops working; others’ tokens are 404 and survive', async () => {
    const t = await create(alice.id, { name: 'to-revoke', scopes: ['api'] });
    const victim = await create(bob.id, { name: 'victim', scopes: ['api'] });
    const denied = await s.request('DELETE', `/personal_access_tokens/${victim.body.id}`, { token: t.body.token });
    expect(denied.status).toBe(404);
    expect((await s.request('GET', '/user', { token: victim.body.token })).status).toBe(200);
    const r = await s.request('DELETE', `/personal_access_tokens/${t.body.id}`, { token: alice.token });
    expect(r.status).toBe(204);
    expect((await s.request('GET', '/user', { token: t.body.token })).status).toBe(401);
    const got = await s.request('GET', `/personal_access_tokens/${t.body.id}`);
    expect(got.body).toMatchObject({ revoked: true, active: false });
  });

  it('DELETE /personal_access_tokens/self revokes the calling token', async () => {
    const t = await create(bob.id, { name: 'self-revoke', scopes: ['api'] });
    expect((await s.request('DELETE', '/personal_access_tokens/self', { token: t.body.token })).status).toBe(204);
    expect((await s.request('GET', '/user', { token: t.body.token })).status).toBe(401);
    expect((await s.request('GET', '/user', { token: bob.token })).status).toBe(200);
  });
});

describe('rotating', () => {
  it('POST /personal_access_tokens/:id/rotate: 200 with a new token; the old one is revoked and 401', async () => {
    const t = await create(alice.id, { name: 'rotate-me', scopes: ['api', 'read_user'], description: 'd' });
    const r = await s.request('POST', `/personal_access_tokens/${t.body.id}/rotate`, { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body.token).toBeTruthy();
    expect(r.body.token).not.toBe(t.body.token);
    expect(r.body).toMatchObject({ name: 'rotate-me', scopes: ['api', 'read_user'], description: 'd', revoked: false, active: true });
    expect(r.body.expires_at).toBe(day(7));
    expect((await s.request('GET', '/user', { token: t.body.token })).status).toBe(401);
    expect((await s.request('GET', '/user', { token: r.body.token })).body.username).toBe('alice');
    const old = await s.request('GET', `/personal_access_tokens/${t.body.id}`);
    expect(old.body.revoked).toBe(true);
    // Rotating a revoked token is refused.
    const again = await s.request('POST', `/personal_access_tokens/${t.body.id}/rotate`);
    expect(again.status).toBe(400);
  });

  it('/self/rotate with expires_at; more than a year away is 400 and changes nothing', async () => {
    const t = await create(bob.id, { name: 'self-rotate', scopes: ['api'] });
    const tooFar = await s.request('POST', '/personal_access_tokens/self/rotate', { token: t.body.token, json: { expires_at: day(400) } });
    expect(tooFar.status).toBe(400);
    expect((await s.request('GET', '/user', { token: t.body.token })).status).toBe(200);
    const past = await s.request('POST', '/personal_access_tokens/self/rotate', { token: t.body.token, json: { expires_at: day(-1) } });
    expect(past.status).toBe(400);
    const bad = await s.request('POST', '/personal_access_tokens/self/rotate', { token: t.body.token, json: { expires_at: 'soon' } });
    expect(bad.status).toBe(400);
    expect((await s.request('GET', '/user', { token: t.body.token })).status).toBe(200);
    const ok = await s.request('POST', '/personal_access_tokens/self/rotate', { token: t.body.token, json: { expires_at: day(300) } });
    expect(ok.status).toBe(200);
    expect(ok.body.expires_at).toBe(day(300));
    expect((await s.request('GET', '/user', { token: t.body.token })).status).toBe(401);
    expect((await s.request('GET', '/user', { token: ok.body.token })).status).toBe(200);
  });

  it('another user cannot rotate my token', async () => {
    const t = await create(alice.id, { name: 'mine', scopes: ['api'] });
    const r = await s.request('POST', `/personal_access_tokens/${t.body.id}/rotate`, { token: bob.token });
    expect(r.status).toBe(404);
    expect((await s.request('GET', '/user', { token: t.body.token })).status).toBe(200);
  });

  it('two concurrent rotations of one token give one new token', async () => {
    const t = await create(alice.id, { name: 'race', scopes: ['api'] });
    const [a, b] = await Promise.all([
      s.request('POST', `/personal_access_tokens/${t.body.id}/rotate`),
      s.request('POST', `/personal_access_tokens/${t.body.id}/rotate`),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const rows = await s.app.lw.db.selectFrom('personal_access_tokens').select('id').where('previous_personal_access_token_id', '=', t.body.id).execute();
    expect(rows).toHaveLength(1);
  });
});
