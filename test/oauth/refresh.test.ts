// Security cases D17–D21: refresh rotation, reuse, concurrency, client binding, blocked users.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, apiUser, codeFlowTokens, createApp, signIn, tokenInfoStatus, tokenRequest, type TestApp } from './helpers.js';

let s: TestServer;
let alice: Agent;
let app: TestApp;
let appB: TestApp;

beforeAll(async () => {
  s = await startServer();
  await s.createUser('alice');
  alice = await signIn(s, 'alice');
  app = await createApp(s, { redirectUri: 'https://a.example/cb' });
  appB = await createApp(s, { redirectUri: 'https://b.example/cb' });
});
afterAll(() => s.close());

function refresh(a: TestApp, rt: string, extra: Record<string, string> = {}) {
  return tokenRequest(s, { grant_type: 'refresh_token', refresh_token: rt, client_id: a.uid, client_secret: a.secret, ...extra });
}

/** Live tokens of the family: the first pair (family_id empty: its own id) and those refreshed from it. */
async function liveInFamily(accessTokenId: number): Promise<number> {
  const row = await s.app.lw.db.selectFrom('oauth_access_tokens').select(['id', 'family_id']).where('id', '=', accessTokenId).executeTakeFirstOrThrow();
  const family = row.family_id ?? row.id;
  const live = await s.app.lw.db
    .selectFrom('oauth_access_tokens')
    .select('id')
    .where((eb) => eb.or([eb('family_id', '=', family), eb('id', '=', family)]))
    .where('revoked_at', 'is', null)
    .execute();
  return live.length;
}

async function lastTokenId(): Promise<number> {
  return (await s.app.lw.db.selectFrom('oauth_access_tokens').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow()).id;
}

describe('D17 normal rotation', () => {
  it('gives a new pair; the old access token is 401 and the old refresh token invalid_grant', async () => {
    const t1 = await codeFlowTokens(s, alice, app, 'api read_user');
    const r = await refresh(app, t1.refresh_token);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toContain('no-store');
    expect(r.body.access_token).not.toBe(t1.access_token);
    expect(r.body.refresh_token).not.toBe(t1.refresh_token);
    expect(r.body.scope).toBe('api read_user');
    expect(await apiUser(s, t1.access_token)).toBe(401);
    expect(await apiUser(s, r.body.access_token)).toBe(200);
  });
  it('works after the access token has expired', async () => {
    const t1 = await codeFlowTokens(s, alice, app);
    // Age the token past its two hours instead of waiting.
    const id = await lastTokenId();
    await s.app.lw.db.updateTable('oauth_access_tokens').set({ created_at: new Date(Date.now() - 7201_000).toISOString() }).where('id', '=', id).execute();
    await s.settle();
    expect(await apiUser(s, t1.access_token)).toBe(401);
    expect(await tokenInfoStatus(s, t1.access_token)).toBe(401);
    const r = await refresh(app, t1.refresh_token);
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe('api');
    expect(await apiUser(s, r.body.access_token)).toBe(200);
  });
});

describe('D18 reuse after rotation', () => {
  it('revokes the whole family and nothing else', async () => {
    const other = await codeFlowTokens(s, alice, app);
    const t1 = await codeFlowTokens(s, alice, app);
    const t2 = (await refresh(app, t1.refresh_token)).body;
    const reuse = await refresh(app, t1.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await refresh(app, t2.refresh_token)).body.error).toBe('invalid_grant');
    expect(await apiUser(s, t2.access_token)).toBe(401);
    expect(await apiUser(s, other.access_token)).toBe(200);
  });
});

describe('D19 concurrent refresh', () => {
  it('exactly one success; never more than one live refresh token in the family', async () => {
    const t1 = await codeFlowTokens(s, alice, app);
    const firstId = await lastTokenId();
    const results = await Promise.all(Array.from({ length: 6 }, () => refresh(app, t1.refresh_token)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.error).toBe('invalid_grant');
    // Documented strict policy: the losing requests are reuses, so the family ends revoked.
    expect(await liveInFamily(firstId)).toBe(0);
    expect(await apiUser(s, ok[0].body.access_token)).toBe(401);
  });
});

describe('D20 wrong client or scope escalation', () => {
  it('neither consumes the refresh token', async () => {
    const t1 = await codeFlowTokens(s, alice, app, 'read_user');
    const wrong = await refresh(appB, t1.refresh_token);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    const wider = await refresh(app, t1.refresh_token, { scope: 'read_user api' });
    expect(wider.status).toBe(400);
    expect(wider.body.error).toBe('invalid_scope');
    expect(await apiUser(s, t1.access_token)).toBe(200);
    const ok = await refresh(app, t1.refresh_token);
    expect(ok.status).toBe(200);
    expect(ok.body.scope).toBe('read_user');
  });
  it('a narrower scope is allowed', async () => {
    const t1 = await codeFlowTokens(s, alice, app, 'api read_user');
    const r = await refresh(app, t1.refresh_token, { scope: 'read_user' });
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe('read_user');
  });
});

describe('D21 blocked or deleted user', () => {
  it('blocked: refresh invalid_grant and API 401; unblocking restores only what was never revoked', async () => {
    const bob = await s.createUser('bob');
    const bobAgent = await signIn(s, 'bob');
    const t = await codeFlowTokens(s, bobAgent, app);
    const reused = await codeFlowTokens(s, bobAgent, app);
    await refresh(app, reused.refresh_token); // rotates: reused.access_token is now revoked
    expect((await s.request('POST', `/users/${bob.id}/block`)).status).toBe(201);
    expect((await refresh(app, t.refresh_token)).body.error).toBe('invalid_grant');
    expect(await apiUser(s, t.access_token)).toBe(401);
    expect(await tokenInfoStatus(s, t.access_token)).toBe(401);
    expect((await s.request('POST', `/users/${bob.id}/unblock`)).status).toBe(201);
    // Policy: blocking suspends tokens, it does not revoke them; revoked ones stay revoked.
    expect(await apiUser(s, t.access_token)).toBe(200);
    expect(await apiUser(s, reused.access_token)).toBe(401);
  });
  it('deleted: refresh invalid_grant and API 401', async () => {
    const carol = await s.createUser('carol');
    const agent = await signIn(s, 'carol');
    const t = await codeFlowTokens(s, agent, app);
    expect((await s.request('DELETE', `/users/${carol.id}`)).status).toBe(204);
    expect((await refresh(app, t.refresh_token)).body.error).toBe('invalid_grant');
    expect(await apiUser(s, t.access_token)).toBe(401);
  });
  it('the refresh grant does not need redirect_uri, and a public client refreshes with client_id alone', async () => {
    const pubApp = await createApp(s, { confidential: false, redirectUri: 'https://p.example/cb' });
    const { verifier, challenge } = (await import('./helpers.js')).pkcePair();
    const { code } = await (await import('./helpers.js')).authorizeCode(alice, pubApp, { code_challenge: challenge, code_challenge_method: 'S256' });
    const t = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: pubApp.redirectUri, client_id: pubApp.uid, code_verifier: verifier });
    expect(t.status).toBe(200);
    const r = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t.body.refresh_token, client_id: pubApp.uid });
    expect(r.status).toBe(200);
  });
});
