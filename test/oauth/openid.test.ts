// OpenID Connect: a code granted with `openid` yields an RS256 ID token with GitLab's claims and
// the request's nonce, verifiable with the keys at /oauth/discovery/keys; oauth4webapi runs the
// flow in OIDC mode (it checks issuer, audience, expiry and nonce) and the signature is checked
// here against the published key.
import { createPublicKey, verify } from 'node:crypto';
import { statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, authorizeCode, codeFlowTokens, createApp, hiddenFields, signIn, tokenRequest, type TestApp } from './helpers.js';

let s: TestServer;
let alice: Agent;
let aliceId: number;
const insecure = { [oauth.allowInsecureRequests]: true };

beforeAll(async () => {
  s = await startServer();
  aliceId = (await s.createUser('oidcalice')).id;
  const g = await s.request('POST', '/groups', { json: { name: 'oidc-team', path: 'oidc-team' } });
  await s.request('POST', `/groups/${g.body.id}/members`, { json: { user_id: aliceId, access_level: 30 } });
  alice = await signIn(s, 'oidcalice');
});
afterAll(() => s.close());

function decode(jwt: string) {
  const [h, p, sig] = jwt.split('.');
  return { header: JSON.parse(Buffer.from(h!, 'base64url').toString()), payload: JSON.parse(Buffer.from(p!, 'base64url').toString()), signingInput: `${h}.${p}`, signature: Buffer.from(sig!, 'base64url') };
}

async function verifies(jwt: string): Promise<boolean> {
  const { header, signingInput, signature } = decode(jwt);
  const jwks = await (await fetch(`${s.url}/oauth/discovery/keys`)).json();
  const jwk = jwks.keys.find((k: { kid: string }) => k.kid === header.kid);
  if (!jwk) return false;
  return verify('sha256', Buffer.from(signingInput), createPublicKey({ key: jwk, format: 'jwk' }), signature);
}

describe('ID tokens', () => {
  it('oauth4webapi in OpenID Connect mode: discovery, nonce, ID token claims, signature', async () => {
    const issuer = new URL(s.url);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }));
    expect(as.jwks_uri).toBe(`${s.url}/oauth/discovery/keys`);
    expect(as.id_token_signing_alg_values_supported).toEqual(['RS256']);
    const registered: TestApp = await createApp(s, { confidential: false, redirectUri: 'http://127.0.0.1/callback', scopes: 'openid profile email read_user' });
    const client: oauth.Client = { client_id: registered.uid };
    const verifier = oauth.generateRandomCodeVerifier();
    const nonce = oauth.generateRandomNonce();
    const state = oauth.generateRandomState();
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid email',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const consent = await alice.get(url.pathname + url.search);
    expect(consent.status).toBe(200);
    const approved = await alice.post('/oauth/authorize', { ...hiddenFields(consent.text), decision: 'approve' });
    const params = oauth.validateAuthResponse(as, client, new URL(approved.location!), state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims).toMatchObject({ iss: s.url, sub: String(aliceId), aud: registered.uid, nonce, email: 'oidcalice@example.com', email_verified: expect.any(Boolean), groups_direct: ['oidc-team'] });
    expect(typeof claims.sub_legacy).toBe('string');
    expect(claims.exp - claims.iat).toBe(120);
    expect(typeof claims.auth_time).toBe('number');
    expect(await verifies(tokens.id_token!)).toBe(true);
    // The header names the key; a token altered after signing no longer verifies.
    const { header } = decode(tokens.id_token!);
    expect(header).toEqual({ typ: 'JWT', alg: 'RS256', kid: expect.any(String) });
    const [h, , sig] = tokens.id_token!.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: '1' })).toString('base64url')}.${sig}`;
    expect(await verifies(forged)).toBe(false);
  });

  it('only for the openid scope, and without email when neither the scope nor a public email allows it', async () => {
    const app = await createApp(s, { confidential: true, redirectUri: 'http://127.0.0.1/cb', scopes: 'openid api' });
    expect((await codeFlowTokens(s, alice, app, 'api')).id_token).toBeUndefined();
    const body = await codeFlowTokens(s, alice, app, 'openid api');
    const { payload } = decode(body.id_token);
    expect(payload.email).toBeUndefined();
    expect(payload.nonce).toBeUndefined();
    expect(await verifies(body.id_token)).toBe(true);
    // One key, kept in the data directory for every process (and restart) of the instance, readable by its owner only.
    expect(statSync(join(s.dataDir, 'openid_connect_signing_key.pem')).mode & 0o777).toBe(0o600);
    const jwks = await (await fetch(`${s.url}/oauth/discovery/keys`)).json();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', use: 'sig', alg: 'RS256', e: 'AQAB' });
    expect(jwks.keys[0].d).toBeUndefined();
  });

  it('in refreshed token responses too (without a nonce), as GitLab', async () => {
    const app = await createApp(s, { confidential: true, redirectUri: 'http://127.0.0.1/cb', scopes: 'openid api' });
    const first = await codeFlowTokens(s, alice, app, 'openid api');
    const refreshed = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: app.uid, client_secret: app.secret });
    expect(refreshed.status).toBe(200);
    const { payload } = decode(refreshed.body.id_token);
    expect(payload).toMatchObject({ sub: String(aliceId), aud: app.uid, iss: s.url });
    expect(payload.nonce).toBeUndefined();
    expect(await verifies(refreshed.body.id_token)).toBe(true);
  });

  it('a key that cannot be read fails the exchange before the code is spent', async () => {
    const other = await startServer();
    try {
      await other.createUser('keyless');
      const agent = await signIn(other, 'keyless');
      const app = await createApp(other, { confidential: true, redirectUri: 'http://127.0.0.1/cb', scopes: 'openid api' });
      const keyFile = join(other.dataDir, 'openid_connect_signing_key.pem');
      writeFileSync(keyFile, 'not a key');
      const { code } = await authorizeCode(agent, app, { scope: 'openid api' });
      const form = { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.uid, client_secret: app.secret };
      expect((await tokenRequest(other, form)).status).toBe(500);
      // The key repaired (here: removed, so a new one is made), the same code still works.
      unlinkSync(keyFile);
      const retried = await tokenRequest(other, form);
      expect(retried.status).toBe(200);
      expect(retried.body.id_token).toEqual(expect.any(String));
    } finally {
      await other.close();
    }
  });

  it('publishes its keys to browsers (CORS)', async () => {
    const r = await fetch(`${s.url}/oauth/discovery/keys`, { headers: { Origin: 'https://spa.example' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('refuses an overlong nonce at the authorization endpoint', async () => {
    const app = await createApp(s, { confidential: true, redirectUri: 'http://127.0.0.1/cb', scopes: 'openid' });
    const page = await alice.get(`/oauth/authorize?${new URLSearchParams({ client_id: app.uid, redirect_uri: app.redirectUri, response_type: 'code', scope: 'openid', state: 's', nonce: 'n'.repeat(600) })}`);
    expect(page.status).toBe(302);
    expect(new URL(page.location!).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('prompt and max_age (OpenID Connect requests)', () => {
  const oidcUrl = (app: TestApp, extra: Record<string, string>) => authorizeUrlFor(app, { scope: 'openid', ...extra });
  function authorizeUrlFor(app: TestApp, extra: Record<string, string>) {
    const q = new URLSearchParams({ client_id: app.uid, redirect_uri: app.redirectUri, response_type: 'code', state: 'st', ...extra });
    return `/oauth/authorize?${q}`;
  }
  const errorOf = (location: string | null) => {
    const u = new URL(location!);
    return [u.searchParams.get('error'), u.searchParams.get('state')];
  };

  it('prompt=none: login_required without a session, consent_required before consent, a code after', async () => {
    const app = await createApp(s, { scopes: 'openid read_user' });
    const anonymous = new Agent(s.url);
    const noSession = await anonymous.get(oidcUrl(app, { prompt: 'none' }));
    expect(noSession.status).toBe(302);
    expect(errorOf(noSession.location)).toEqual(['login_required', 'st']);
    const bob = await signIn(s, (await s.createUser('promptbob')).username);
    expect(errorOf((await bob.get(oidcUrl(app, { prompt: 'none' }))).location)).toEqual(['consent_required', 'st']);
    // Consent once (and a token issued): later requests of the same scopes skip the page.
    const { code } = await authorizeCode(bob, app, { scope: 'openid' });
    const t = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.uid, client_secret: app.secret });
    expect(t.status).toBe(200);
    const silent = await bob.get(oidcUrl(app, { prompt: 'none' }));
    expect(silent.status).toBe(302);
    expect(new URL(silent.location!).searchParams.get('code')).toMatch(/.+/);
    // prompt=consent shows the page again; unknown values and `none` with others are invalid_request.
    expect((await bob.get(oidcUrl(app, { prompt: 'consent' }))).status).toBe(200);
    expect(errorOf((await bob.get(oidcUrl(app, { prompt: 'none login' }))).location)).toEqual(['invalid_request', 'st']);
    expect(errorOf((await bob.get(oidcUrl(app, { prompt: 'sometimes' }))).location)).toEqual(['invalid_request', 'st']);
    expect(errorOf((await bob.get(oidcUrl(app, { prompt: 'select_account' }))).location)).toEqual(['account_selection_required', 'st']);
    // Without `openid` the parameter is not OpenID Connect's, and is ignored (Doorkeeper).
    expect((await bob.get(authorizeUrlFor(app, { scope: 'read_user', prompt: 'none' }))).status).toBe(200);
  });

  it('prompt=login and an exceeded max_age sign the user out and come back without `login`', async () => {
    const app = await createApp(s, { scopes: 'openid read_user' });
    const carol = await signIn(s, (await s.createUser('promptcarol')).username);
    const r = await carol.get(oidcUrl(app, { prompt: 'login consent' }));
    expect(r.status).toBe(302);
    const to = new URL(r.location!, s.url);
    expect(to.pathname).toBe('/users/sign_in');
    const back = new URL(to.searchParams.get('redirect_to')!, s.url);
    expect(back.pathname).toBe('/oauth/authorize');
    expect(back.searchParams.get('prompt')).toBe('consent');
    // Signed out: the same request asks for a sign-in.
    expect((await carol.get(oidcUrl(app, {}))).location).toContain('/users/sign_in');
    const again = await signIn(s, 'promptcarol');
    expect((await again.get(oidcUrl(app, { max_age: '3600' }))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // Silent: login_required, and the session stays.
    const silent = await again.get(oidcUrl(app, { max_age: '1', prompt: 'none' }));
    expect(errorOf(silent.location)).toEqual(['login_required', 'st']);
    const old = await again.get(oidcUrl(app, { max_age: '1' }));
    expect(old.status).toBe(302);
    expect(old.location).toContain('/users/sign_in');
  });
});

