// Spec document 1 §5 and §7.3 through the real app: every place a token is read, every failure,
// scopes, the §5.8 diagnosis, sudo, and security case G32 (identical 401 bodies).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenDigest } from '../../src/services/secrets.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };

const UNAUTHORIZED = { message: '401 Unauthorized' };
const yesterday = () => new Date(Date.now() - 86400_000).toISOString().slice(0, 10);

async function tokenFor(userId: number, scopes: string[], extra: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
  const r = await s.request('POST', `/users/${userId}/personal_access_tokens`, { json: { name: `t-${scopes.join('-')}`, scopes, ...extra } });
  expect(r.status).toBe(201);
  return { id: r.body.id, token: r.body.token };
}

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
});
afterAll(async () => {
  await s?.close();
});

describe('where tokens are read', () => {
  it('PRIVATE-TOKEN header', async () => {
    const r = await s.request('GET', '/user', { token: null, headers: { 'PRIVATE-TOKEN': alice.token } });
    expect(r.status).toBe(200);
    expect(r.body.username).toBe('alice');
  });

  it('private_token parameter (query and body)', async () => {
    const q = await s.request('GET', `/user?private_token=${encodeURIComponent(alice.token)}`, { token: null });
    expect(q.status).toBe(200);
    expect(q.body.username).toBe('alice');
    const b = await s.request('PUT', `/users/${alice.id}`, { token: null, json: { private_token: s.rootToken, bio: 'body token' } });
    expect(b.status).toBe(200);
    expect(b.body.bio).toBe('body token');
  });

  it('Authorization: Bearer with a personal access token, any case of "bearer"', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const r = await s.request('GET', '/user', { token: null, headers: { Authorization: `${scheme} ${alice.token}` } });
      expect(r.status, scheme).toBe(200);
      expect(r.body.username).toBe('alice');
    }
  });

  it('access_token parameter', async () => {
    const r = await s.request('GET', `/user?access_token=${encodeURIComponent(bob.token)}`, { token: null });
    expect(r.status).toBe(200);
    expect(r.body.username).toBe('bob');
  });

  it('a token in two places answers 400 and does nothing', async () => {
    const pairs: Array<{ path: string; headers: Record<string, string> }> = [
      { path: `/user?access_token=${alice.token}`, headers: { Authorization: `Bearer ${alice.token}` } },
      { path: `/user?private_token=${alice.token}`, headers: { 'PRIVATE-TOKEN': alice.token } },
      { path: '/user', headers: { 'PRIVATE-TOKEN': alice.token, Authorization: `Bearer ${alice.token}` } },
    ];
    for (const p of pairs) {
      const r = await s.request('GET', p.path, { token: null, headers: p.headers });
      expect(r.status, JSON.stringify(p)).toBe(400);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(typeof r.body.message).toBe('string');
      expect(r.body.message.startsWith('400 Bad request')).toBe(true);
    }
    const put = await s.request('PUT', `/users/${bob.id}?private_token=${s.rootToken}`, { json: { bio: 'never written' } });
    expect(put.status).toBe(400);
    expect((await s.request('GET', `/users/${bob.id}`)).body.bio).not.toBe('never written');
  });

  it('no token means anonymous: public reads work, /user is 401', async () => {
    expect((await s.request('GET', '/users', { token: null })).status).toBe(200);
    const r = await s.request('GET', '/user', { token: null });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });
});

describe('G32: bad tokens give one identical 401', () => {
  it('unknown, expired (yesterday), revoked, and a blocked owner all answer the same body', async () => {
    const expired = await tokenFor(alice.id, ['api']);
    await s.app.lw.db.updateTable('personal_access_tokens').set({ expires_at: yesterday() }).where('id', '=', expired.id).execute();
    await s.settle();
    const revoked = await tokenFor(alice.id, ['api']);
    expect((await s.request('DELETE', `/personal_access_tokens/${revoked.id}`)).status).toBe(204);
    const carol = await s.createUser('carol');
    expect((await s.request('POST', `/users/${carol.id}/block`)).status).toBe(201);

    const bodies = new Set<string>();
    const cases: Record<string, string | null> = {
      missing: null,
      unknown: 'glpat-this-token-does-not-exist-000000',
      expired: expired.token,
      revoked: revoked.token,
      blocked: carol.token,
    };
    for (const [name, token] of Object.entries(cases)) {
      for (const how of ['private', 'bearer'] as const) {
        if (!token && how === 'bearer') continue;
        const headers: Record<string, string> = token ? (how === 'private' ? { 'PRIVATE-TOKEN': token } : { Authorization: `Bearer ${token}` }) : {};
        const r = await s.request('GET', '/user', { token: null, headers });
        expect(r.status, `${name}/${how}`).toBe(401);
        expect(r.headers.get('content-type')).toBe('application/json');
        expect(r.body, `${name}/${how}`).toEqual(UNAUTHORIZED);
        bodies.add(r.text);
      }
    }
    expect([...bodies]).toEqual([JSON.stringify(UNAUTHORIZED)]);
  });

  it('an invalid token fails even on a route anonymous callers may use', async () => {
    const r = await s.request('GET', '/users', { token: 'unknown-token' });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });

  it('a token expiring today is already expired; tomorrow still works', async () => {
    const today = await tokenFor(bob.id, ['api']);
    await s.app.lw.db.updateTable('personal_access_tokens').set({ expires_at: new Date().toISOString().slice(0, 10) }).where('id', '=', today.id).execute();
    await s.settle();
    expect((await s.request('GET', '/user', { token: today.token })).status).toBe(401);
    const tomorrow = new Date(Date.now() + 86400_000).toISOString().slice(0, 10);
    const ok = await tokenFor(bob.id, ['api'], { expires_at: tomorrow });
    expect((await s.request('GET', '/user', { token: ok.token })).status).toBe(200);
  });

  it('a blocked user is 401 and comes back after unblock', async () => {
    const dave = await s.createUser('dave');
    await s.request('POST', `/users/${dave.id}/block`);
    expect((await s.request('GET', '/user', { token: dave.token })).status).toBe(401);
    await s.request('POST', `/users/${dave.id}/unblock`);
    expect((await s.request('GET', '/user', { token: dave.token })).status).toBe(200);
  });

  it('a non-string private_token parameter is refused, not a 500', async () => {
    const r = await s.request('GET', '/user?private_token[]=x', { token: null });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });
});

describe('scopes', () => {
  it('read_api works on GET and gives 403 insufficient_scope on POST/PUT/DELETE', async () => {
    const t = await tokenFor(alice.id, ['read_api']);
    expect((await s.request('GET', '/user', { token: t.token })).status).toBe(200);
    expect((await s.request('GET', '/personal_access_tokens', { token: t.token })).status).toBe(200);
    for (const [method, path] of [['POST', '/user/personal_access_tokens'], ['PUT', `/users/${alice.id}`], ['DELETE', '/personal_access_tokens/self']] as const) {
      const r = await s.request(method, path, { token: t.token, json: { name: 'x', scopes: ['k8s_proxy'] } });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(r.body).toEqual({
        error: 'insufficient_scope',
        error_description: 'The request requires higher privileges than provided by the access token.',
        scope: 'api',
      });
    }
    // The refused DELETE left the token alive.
    expect((await s.request('GET', '/personal_access_tokens/self', { token: t.token })).status).toBe(200);
  });

  it('read_user works on /user, /users and /version (as GitLab), and is 403 elsewhere', async () => {
    const t = await tokenFor(alice.id, ['read_user']);
    expect((await s.request('GET', '/user', { token: t.token })).status).toBe(200);
    expect((await s.request('GET', '/users', { token: t.token })).status).toBe(200);
    expect((await s.request('GET', `/users/${bob.id}`, { token: t.token })).status).toBe(200);
    expect((await s.request('GET', '/version', { token: t.token })).status).toBe(200);
    for (const path of ['/personal_access_tokens', '/personal_access_tokens?state=active']) {
      const r = await s.request('GET', path, { token: t.token });
      expect(r.status, path).toBe(403);
      expect(r.body.error).toBe('insufficient_scope');
    }
    const put = await s.request('PUT', `/users/${alice.id}`, { token: t.token, json: { bio: 'x' } });
    expect(put.status).toBe(403);
  });

  it('§5.8 diagnosis: GET /user answers 200 for a valid token, 401 for an invalid one, 403 for a token that cannot read the user', async () => {
    const apiTok = await tokenFor(bob.id, ['api']);
    const repoOnly = await tokenFor(bob.id, ['read_repository']);
    expect((await s.request('GET', '/user', { token: apiTok.token })).status).toBe(200);
    expect((await s.request('GET', '/user', { token: 'not-a-token' })).status).toBe(401);
    const r = await s.request('GET', '/user', { token: repoOnly.token });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('insufficient_scope');
  });
});

describe('sudo', () => {
  it('an admin token with the sudo scope acts as another user, by id and by username, header or parameter', async () => {
    const byHeaderId = await s.request('GET', '/user', { headers: { Sudo: String(alice.id) } });
    expect(byHeaderId.status).toBe(200);
    expect(byHeaderId.body.username).toBe('alice');
    const byParamName = await s.request('GET', '/user?sudo=bob');
    expect(byParamName.status).toBe(200);
    expect(byParamName.body.username).toBe('bob');
    const byHeaderName = await s.request('GET', '/user', { headers: { Sudo: 'alice' } });
    expect(byHeaderName.body.username).toBe('alice');
  });

  it('as the sudo target, admin-only routes are refused', async () => {
    const r = await s.request('POST', '/users', { headers: { Sudo: 'alice' }, json: { username: 'x1', email: 'x1@example.com', name: 'x', password: 'password-1234' } });
    expect(r.status).toBe(403);
  });

  it('a non-admin gets 403 "Must be admin to use sudo"', async () => {
    const r = await s.request('GET', '/user', { token: alice.token, headers: { Sudo: 'bob' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ message: '403 Forbidden - Must be admin to use sudo' });
  });

  it('an admin token without the sudo scope gets 403 insufficient_scope', async () => {
    const admin2 = await s.createUser('admin2', { admin: true, scopes: ['api'] });
    const r = await s.request('GET', '/user', { token: admin2.token, headers: { Sudo: 'bob' } });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('insufficient_scope');
    expect(r.body.scope).toBe('sudo');
  });

  it('an unknown sudo user gets 404 with GitLab’s message', async () => {
    const r = await s.request('GET', '/user', { headers: { Sudo: 'nobody-here' } });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: "404 User with ID or username 'nobody-here' Not Found" });
    const id = await s.request('GET', '/user?sudo=999999');
    expect(id.status).toBe(404);
    expect(id.body).toEqual({ message: "404 User with ID or username '999999' Not Found" });
  });

  it('sudo without any token is 401', async () => {
    const r = await s.request('GET', '/users', { token: null, headers: { Sudo: 'alice' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });
});

describe('last_used_at', () => {
  it('is recorded on use, without a write on every request', async () => {
    const t = await tokenFor(bob.id, ['api']);
    await s.request('GET', '/user', { token: t.token });
    let row: { last_used_at: string | null; updated_at: string } | undefined;
    for (let i = 0; i < 50; i++) {
      row = await s.app.lw.db.selectFrom('personal_access_tokens').select(['last_used_at', 'updated_at']).where('id', '=', t.id).executeTakeFirst();
      if (row?.last_used_at) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(row?.last_used_at).toBeTruthy();
    const first = row!.last_used_at;
    await s.request('GET', '/user', { token: t.token });
    await new Promise((r) => setTimeout(r, 50));
    const again = await s.app.lw.db.selectFrom('personal_access_tokens').select('last_used_at').where('id', '=', t.id).executeTakeFirst();
    expect(again?.last_used_at).toBe(first);
  });
});

describe('OAuth access tokens (rows written directly; the provider is tested elsewhere)', () => {
  async function oauthToken(userId: number, scopes: string, opts: { expiresIn?: number | null; createdAt?: string; revoked?: boolean } = {}): Promise<string> {
    const value = `oauth-${Math.random().toString(36).slice(2)}${Date.now()}`;
    await s.app.lw.db
      .insertInto('oauth_access_tokens')
      .values({
        resource_owner_id: userId,
        application_id: null,
        token_digest: tokenDigest(s.app.lw.config.secret, value),
        refresh_token_digest: null,
        expires_in: opts.expiresIn === undefined ? 7200 : opts.expiresIn,
        scopes,
        grant_id: null,
        grant_kind: null,
        family_id: null,
        created_at: opts.createdAt ?? new Date().toISOString(),
        revoked_at: opts.revoked ? new Date().toISOString() : null,
        last_used_at: null,
      } as never)
      .execute();
    await s.settle();
    return value;
  }

  it('Authorization: Bearer and access_token accept an OAuth access token', async () => {
    const t = await oauthToken(alice.id, 'api');
    const h = await s.request('GET', '/user', { token: null, headers: { Authorization: `Bearer ${t}` } });
    expect(h.status).toBe(200);
    expect(h.body.username).toBe('alice');
    const q = await s.request('GET', `/user?access_token=${t}`, { token: null });
    expect(q.body.username).toBe('alice');
  });

  it('an OAuth token is not a PRIVATE-TOKEN', async () => {
    const t = await oauthToken(alice.id, 'api');
    const r = await s.request('GET', '/user', { token: null, headers: { 'PRIVATE-TOKEN': t } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
  });

  it('expired and revoked OAuth tokens get the same 401 body', async () => {
    const expired = await oauthToken(alice.id, 'api', { expiresIn: 60, createdAt: new Date(Date.now() - 3600_000).toISOString() });
    const revoked = await oauthToken(alice.id, 'api', { revoked: true });
    for (const t of [expired, revoked, 'unknown-oauth-token']) {
      const r = await s.request('GET', '/user', { token: null, headers: { Authorization: `Bearer ${t}` } });
      expect(r.status).toBe(401);
      expect(r.body).toEqual(UNAUTHORIZED);
    }
  });

  it('OAuth scopes are enforced like PAT scopes (read_user, openid)', async () => {
    const readUser = await oauthToken(alice.id, 'read_user openid');
    expect((await s.request('GET', '/user', { token: null, headers: { Authorization: `Bearer ${readUser}` } })).status).toBe(200);
    const put = await s.request('PUT', `/users/${alice.id}`, { token: null, headers: { Authorization: `Bearer ${readUser}` }, json: { bio: 'x' } });
    expect(put.status).toBe(403);
    const openid = await oauthToken(alice.id, 'openid profile');
    expect((await s.request('GET', '/user', { token: null, headers: { Authorization: `Bearer ${openid}` } })).status).toBe(403);
  });
});
