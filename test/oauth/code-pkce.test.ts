// Security cases B8–B12 (PKCE) and C13–C16 (authorization codes).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { advanceClock, resetClock } from '../../src/oauth/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, apiUser, authorizeCode, authorizeUrl, codeFlowTokens, countRows, createApp, pkcePair, signIn, tokenInfoStatus, tokenRequest, type TestApp } from './helpers.js';

let s: TestServer;
let alice: Agent;
let app: TestApp;
let appB: TestApp;
let pub: TestApp;

beforeAll(async () => {
  s = await startServer();
  await s.createUser('alice');
  alice = await signIn(s, 'alice');
  app = await createApp(s, { redirectUri: 'https://a.example/cb' });
  appB = await createApp(s, { redirectUri: 'https://b.example/cb' });
  pub = await createApp(s, { redirectUri: 'https://pub.example/cb', confidential: false });
});
afterAll(() => s.close());
afterEach(() => resetClock());

async function redirectError(a: TestApp, extra: Record<string, string>): Promise<string | null> {
  const before = await countRows(s, 'oauth_access_grants');
  const r = await alice.get(authorizeUrl(a, extra));
  expect(r.status).toBe(302);
  expect(await countRows(s, 'oauth_access_grants')).toBe(before);
  const loc = new URL(r.location!);
  expect(loc.searchParams.has('code')).toBe(false);
  return loc.searchParams.get('error');
}

function redeem(a: TestApp, code: string, extra: Record<string, string> = {}, secret: string | null = a.secret) {
  const form: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: a.redirectUri, client_id: a.uid, ...extra };
  if (secret) form.client_secret = secret;
  return tokenRequest(s, form);
}

describe('B8 plain method', () => {
  it('is refused with invalid_request', async () => {
    const { verifier } = pkcePair();
    expect(await redirectError(pub, { code_challenge: verifier, code_challenge_method: 'plain' })).toBe('invalid_request');
  });
});

describe('B9 malformed or missing challenge', () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['42 chars', { code_challenge: 'a'.repeat(42), code_challenge_method: 'S256' }],
    ['129 chars', { code_challenge: 'a'.repeat(129), code_challenge_method: 'S256' }],
    ['contains =', { code_challenge: 'a'.repeat(42) + '=', code_challenge_method: 'S256' }],
    ['contains $', { code_challenge: 'a'.repeat(42) + '$', code_challenge_method: 'S256' }],
    ['method without challenge', { code_challenge_method: 'S256' }],
    ['challenge without method', { code_challenge: pkcePair().challenge }],
    ['public client without PKCE', {}],
  ];
  for (const [name, extra] of cases) {
    it(name, async () => {
      expect(await redirectError(pub, extra)).toBe('invalid_request');
    });
  }
});

describe('B10 missing verifier', () => {
  it('gives invalid_grant without consuming the code', async () => {
    const { verifier, challenge } = pkcePair();
    const { code } = await authorizeCode(alice, pub, { code_challenge: challenge, code_challenge_method: 'S256' });
    const tokensBefore = await countRows(s, 'oauth_access_tokens');
    const r = await redeem(pub, code, {}, null);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
    expect(await countRows(s, 'oauth_access_tokens')).toBe(tokensBefore);
    const ok = await redeem(pub, code, { code_verifier: verifier }, null);
    expect(ok.status).toBe(200);
    expect(await apiUser(s, ok.body.access_token)).toBe(200);
  });
});

describe('B11 bad verifier', () => {
  it('wrong, short, long or ill-formed verifiers fail and the code stays redeemable', async () => {
    const { verifier, challenge } = pkcePair();
    const { code } = await authorizeCode(alice, pub, { code_challenge: challenge, code_challenge_method: 'S256' });
    for (const bad of [pkcePair().verifier, verifier.slice(0, 42), verifier + 'a'.repeat(129 - verifier.length), verifier.slice(0, 42) + '$']) {
      const r = await redeem(pub, code, { code_verifier: bad }, null);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_grant');
    }
    const ok = await redeem(pub, code, { code_verifier: verifier }, null);
    expect(ok.status).toBe(200);
  });
});

describe('B12 PKCE downgrade', () => {
  it('a verifier for a code issued without a challenge is refused', async () => {
    const { code } = await authorizeCode(alice, app);
    const before = await countRows(s, 'oauth_access_tokens');
    const r = await redeem(app, code, { code_verifier: pkcePair().verifier });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
    expect(await countRows(s, 'oauth_access_tokens')).toBe(before);
  });
});

describe('C13 code replay', () => {
  it('a second redemption fails and revokes what the first issued, sparing other grants', async () => {
    const other = await codeFlowTokens(s, alice, app);
    const { code } = await authorizeCode(alice, app);
    const first = await redeem(app, code);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toContain('no-store');
    expect(await apiUser(s, first.body.access_token)).toBe(200);

    const again = await redeem(app, code);
    expect(again.status).toBe(400);
    expect(again.headers.get('content-type')).toBe('application/json');
    expect(again.body.error).toBe('invalid_grant');
    expect(again.body.error_description).not.toMatch(/[\r\n\t]/);

    advanceClock(30_000);
    const later = await redeem(app, code);
    expect(later.body.error).toBe('invalid_grant');

    expect(await apiUser(s, first.body.access_token)).toBe(401);
    expect(await tokenInfoStatus(s, first.body.access_token)).toBe(401);
    const refresh = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: app.uid, client_secret: app.secret });
    expect(refresh.body.error).toBe('invalid_grant');
    expect(await apiUser(s, other.access_token)).toBe(200);
  });
});

describe('C14 concurrent redemption', () => {
  it('at most one success, at most one token row, none live afterwards', async () => {
    const { verifier, challenge } = pkcePair();
    const { code } = await authorizeCode(alice, pub, { code_challenge: challenge, code_challenge_method: 'S256' });
    const results = await Promise.all(Array.from({ length: 10 }, () => redeem(pub, code, { code_verifier: verifier }, null)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeLessThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.error).toBe('invalid_grant');
    const grant = await s.app.lw.db.selectFrom('oauth_access_grants').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const rows = await s.app.lw.db.selectFrom('oauth_access_tokens').select(['id', 'revoked_at']).where('grant_kind', '=', 'code').where('grant_id', '=', grant.id).execute();
    expect(rows.length).toBeLessThanOrEqual(1);
    // Documented policy: the losers count as replays, so the winner's pair is revoked.
    expect(rows.filter((r) => r.revoked_at === null)).toHaveLength(0);
    if (ok.length) expect(await apiUser(s, ok[0].body.access_token)).toBe(401);
  });
});

describe('C15 code bound to client', () => {
  it('client B cannot redeem client A\'s code; A still can', async () => {
    const { code } = await authorizeCode(alice, app);
    const r = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: appB.uid, client_secret: appB.secret });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
    expect((await redeem(app, code)).status).toBe(200);
  });
});

describe('C16 expired code or redirect mismatch', () => {
  it('an expired code fails and is purged; live tokens are untouched', async () => {
    const live = await codeFlowTokens(s, alice, app);
    const { code } = await authorizeCode(alice, app);
    const before = await countRows(s, 'oauth_access_grants');
    advanceClock(600_000 + 1000);
    const r = await redeem(app, code);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
    expect(await countRows(s, 'oauth_access_grants')).toBe(before - 1);
    resetClock();
    expect(await apiUser(s, live.access_token)).toBe(200);
  });
  it('a different or omitted redirect_uri fails without consuming the code', async () => {
    const { code } = await authorizeCode(alice, app);
    const before = await countRows(s, 'oauth_access_tokens');
    const diff = await redeem(app, code, { redirect_uri: 'https://a.example/cb/' });
    expect(diff.body.error).toBe('invalid_grant');
    const omitted = await tokenRequest(s, { grant_type: 'authorization_code', code, client_id: app.uid, client_secret: app.secret });
    expect(omitted.body.error).toBe('invalid_grant');
    expect(await countRows(s, 'oauth_access_tokens')).toBe(before);
    expect((await redeem(app, code)).status).toBe(200);
  });
});

describe('token endpoint basics', () => {
  it('a code just under ten minutes old still works', async () => {
    const { code } = await authorizeCode(alice, app);
    advanceClock(599_000);
    const r = await redeem(app, code);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'api' });
    expect(r.body.access_token).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof r.body.created_at).toBe('number');
  });
  it('unknown grant types, password and client_credentials are unsupported_grant_type', async () => {
    for (const gt of ['password', 'client_credentials', 'implicit']) {
      const r = await tokenRequest(s, { grant_type: gt, client_id: app.uid, client_secret: app.secret });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('unsupported_grant_type');
      expect(r.headers.get('cache-control')).toContain('no-store');
    }
    const none = await tokenRequest(s, { client_id: app.uid, client_secret: app.secret });
    expect(none.body.error).toBe('invalid_request');
  });
  it('stores only digests of codes and tokens', async () => {
    const { code } = await authorizeCode(alice, app);
    const t = (await redeem(app, code)).body;
    const grants = await s.app.lw.db.selectFrom('oauth_access_grants').selectAll().execute();
    const tokens = await s.app.lw.db.selectFrom('oauth_access_tokens').selectAll().execute();
    const dump = JSON.stringify([grants, tokens]);
    expect(dump).not.toContain(code);
    expect(dump).not.toContain(t.access_token);
    expect(dump).not.toContain(t.refresh_token);
  });
  it('garbage bodies give OAuth errors, never 500', async () => {
    for (const raw of ['%', '&&&', 'grant_type[]=x', 'grant_type[a]=b&client_id=' + app.uid, 'a'.repeat(10000)]) {
      const r = await tokenRequest(s, {}, { raw });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
  });
});
