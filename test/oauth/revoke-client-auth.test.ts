// Security cases F28–F31 (revocation, client authentication, token placement), token/info,
// userinfo, metadata and CORS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, apiUser, authorizeCode, codeFlowTokens, createApp, signIn, tokenInfoStatus, tokenRequest, type TestApp } from './helpers.js';

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

function revoke(form: Record<string, string>, opts: { basic?: [string, string] } = {}) {
  return tokenRequest(s, form, { path: '/oauth/revoke', ...opts });
}
const creds = (a: TestApp) => ({ client_id: a.uid, client_secret: a.secret });

describe('F28 revocation basics', () => {
  it('unknown token 200 {}, missing token 400, wrong secret 401, bogus hint ignored', async () => {
    const t = await codeFlowTokens(s, alice, app);
    const unknown = await revoke({ ...creds(app), token: 'nope' });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({});
    const missing = await revoke(creds(app));
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
    const wrong = await revoke({ client_id: app.uid, client_secret: 'wrong', token: t.access_token });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(await apiUser(s, t.access_token)).toBe(200);
    const hinted = await revoke({ ...creds(app), token: t.access_token, token_type_hint: 'bogus' });
    expect(hinted.status).toBe(200);
    expect(await apiUser(s, t.access_token)).toBe(401);
  });
});

describe('F29 cross-client revocation', () => {
  it('client B cannot revoke A\'s token', async () => {
    const t = await codeFlowTokens(s, alice, app);
    const r = await revoke({ ...creds(appB), token: t.access_token });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('unauthorized_client');
    const rr = await revoke({ ...creds(appB), token: t.refresh_token });
    expect(rr.status).toBe(403);
    expect(await apiUser(s, t.access_token)).toBe(200);
  });
});

describe('F30 revocation cascade', () => {
  it('revoking a refresh token ends every access token of the grant; repeats are 200', async () => {
    const other = await codeFlowTokens(s, alice, app);
    const t1 = await codeFlowTokens(s, alice, app);
    const t2 = (await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t1.refresh_token, ...creds(app) })).body;
    expect((await revoke({ ...creds(app), token: t2.refresh_token, token_type_hint: 'refresh_token' })).status).toBe(200);
    expect((await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t2.refresh_token, ...creds(app) })).body.error).toBe('invalid_grant');
    for (const at of [t1.access_token, t2.access_token]) {
      expect(await apiUser(s, at)).toBe(401);
      expect(await tokenInfoStatus(s, at)).toBe(401);
    }
    expect((await revoke({ ...creds(app), token: t2.refresh_token })).status).toBe(200);
    expect(await apiUser(s, other.access_token)).toBe(200);
  });
  it('revoking an access token: 401 at once, repeat 200, others unaffected', async () => {
    const other = await codeFlowTokens(s, alice, app);
    const t = await codeFlowTokens(s, alice, app);
    expect((await revoke({ ...creds(app), token: t.access_token })).status).toBe(200);
    expect(await apiUser(s, t.access_token)).toBe(401);
    const info = await fetch(`${s.url}/oauth/token/info?access_token=${t.access_token}`);
    expect(info.status).toBe(401);
    expect(await info.json()).toEqual({ error: 'invalid_token', error_description: 'The access token was revoked' });
    expect((await revoke({ ...creds(app), token: t.access_token })).status).toBe(200);
    expect(await apiUser(s, other.access_token)).toBe(200);
  });
  it('a public client revokes with client_id alone', async () => {
    const pub = await createApp(s, { confidential: false, redirectUri: 'https://pub.example/cb' });
    const { pkcePair } = await import('./helpers.js');
    const { verifier, challenge } = pkcePair();
    const { code } = await authorizeCode(alice, pub, { code_challenge: challenge, code_challenge_method: 'S256' });
    const t = (await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: pub.redirectUri, client_id: pub.uid, code_verifier: verifier })).body;
    expect((await revoke({ client_id: pub.uid, token: t.access_token })).status).toBe(200);
    expect(await apiUser(s, t.access_token)).toBe(401);
  });
});

describe('F31 client authentication and token placement', () => {
  it('secret in both Basic and body is 400; no token issued', async () => {
    const { code } = await authorizeCode(alice, app);
    const r = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_secret: app.secret }, { basic: [app.uid, app.secret] });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request');
    expect(r.headers.get('cache-control')).toContain('no-store');
    // The code is still good with one mechanism.
    const ok = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri }, { basic: [app.uid, app.secret] });
    expect(ok.status).toBe(200);
  });
  it('malformed Basic headers are invalid_client with WWW-Authenticate', async () => {
    for (const header of ['Basic !!!notbase64', 'Basic ' + Buffer.from('no-colon').toString('base64'), 'Basic']) {
      const r = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: 'x' }, { headers: { authorization: header } });
      expect(r.status, header).toBe(401);
      expect(r.body.error).toBe('invalid_client');
      expect(r.headers.get('www-authenticate')).toContain('Basic');
    }
  });
  it('body client_id different from the Basic user is invalid_client', async () => {
    const { code } = await authorizeCode(alice, app);
    const r = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: appB.uid }, { basic: [app.uid, app.secret] });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_client');
    expect(r.headers.get('www-authenticate')).toContain('Basic');
  });
  it('a confidential client without or with a wrong secret is invalid_client', async () => {
    const { code } = await authorizeCode(alice, app);
    for (const form of [{ client_id: app.uid }, { client_id: app.uid, client_secret: 'gloas-wrong' }, { client_id: 'unknown', client_secret: 'x' }, {}] as Array<Record<string, string>>) {
      const r = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, ...form });
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('invalid_client');
    }
  });
  it('a public client may send Basic with an empty secret', async () => {
    const pub = await createApp(s, { confidential: false, redirectUri: 'https://pub2.example/cb' });
    const { pkcePair } = await import('./helpers.js');
    const { verifier, challenge } = pkcePair();
    const { code } = await authorizeCode(alice, pub, { code_challenge: challenge, code_challenge_method: 'S256' });
    const r = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: pub.redirectUri, code_verifier: verifier }, { basic: [pub.uid, ''] });
    expect(r.status).toBe(200);
  });
  it('access token in both the header and the query is 400; a lower-case scheme works', async () => {
    const t = await codeFlowTokens(s, alice, app);
    const both = await fetch(`${s.api}/user?access_token=${t.access_token}`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(both.status).toBe(400);
    const bothInfo = await fetch(`${s.url}/oauth/token/info?access_token=${t.access_token}`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(bothInfo.status).toBe(400);
    const lower = await fetch(`${s.api}/user`, { headers: { authorization: `bearer ${t.access_token}` } });
    expect(lower.status).toBe(200);
    const query = await fetch(`${s.api}/user?access_token=${t.access_token}`);
    expect(query.status).toBe(200);
  });
  it('duplicated parameters at the token endpoint are invalid_request', async () => {
    const { code } = await authorizeCode(alice, app);
    const raw = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.uid, client_secret: app.secret }).toString() + `&code=${code}`;
    const r = await tokenRequest(s, {}, { raw });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_request');
  });
});

describe('token info, userinfo, scopes at work', () => {
  it('token/info has GitLab\'s fields and aliases', async () => {
    const t = await codeFlowTokens(s, alice, app, 'api read_user');
    const r = await fetch(`${s.url}/oauth/token/info`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(r.status).toBe(200);
    const b = await r.json();
    expect(b.scope).toEqual(['api', 'read_user']);
    expect(b.scopes).toEqual(['api', 'read_user']);
    expect(b.expires_in).toBeGreaterThan(7100);
    expect(b.expires_in_seconds).toBe(b.expires_in);
    expect(b.application).toEqual({ uid: app.uid });
    expect(typeof b.resource_owner_id).toBe('number');
    const bad = await fetch(`${s.url}/oauth/token/info`, { headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain('invalid_token');
  });
  it('userinfo gives GitLab claims for openid tokens; email only with email', async () => {
    const t = await codeFlowTokens(s, alice, app, 'openid email');
    for (const method of ['GET', 'POST']) {
      const r = await fetch(`${s.url}/oauth/userinfo`, { method, headers: { authorization: `Bearer ${t.access_token}` } });
      expect(r.status).toBe(200);
      const b = await r.json();
      expect(b).toMatchObject({ nickname: 'alice', preferred_username: 'alice', email: 'alice@example.com', profile: `${s.url}/alice`, groups: [] });
      expect(typeof b.sub).toBe('string');
    }
    const noEmail = await codeFlowTokens(s, alice, app, 'openid');
    const b = await (await fetch(`${s.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${noEmail.access_token}` } })).json();
    expect(b.email).toBeUndefined();
    const api = await codeFlowTokens(s, alice, app, 'api');
    expect((await fetch(`${s.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${api.access_token}` } })).status).toBe(403);
    expect((await fetch(`${s.url}/oauth/userinfo`)).status).toBe(401);
  });
  it('scopes are enforced on the API: read_user cannot write', async () => {
    const t = await codeFlowTokens(s, alice, app, 'read_user');
    expect(await apiUser(s, t.access_token)).toBe(200);
    const w = await fetch(`${s.api}/user/personal_access_tokens`, { method: 'POST', headers: { authorization: `Bearer ${t.access_token}`, 'content-type': 'application/json' }, body: '{"name":"x","scopes":["k8s_proxy"]}' });
    expect(w.status).toBe(403);
  });
});

describe('metadata and CORS', () => {
  it('serves both discovery documents', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const b = await (await fetch(`${s.url}${path}`)).json();
      expect(b.issuer).toBe(s.url);
      expect(b.token_endpoint).toBe(`${s.url}/oauth/token`);
      expect(b.device_authorization_endpoint).toBe(`${s.url}/oauth/authorize_device`);
      expect(b.code_challenge_methods_supported).toEqual(['S256']);
    }
  });
  it('preflight allows simple headers plus Authorization and refuses X-Requested-With', async () => {
    for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/userinfo']) {
      const ok = await fetch(`${s.url}${path}`, { method: 'OPTIONS', headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe('*');
      expect(ok.headers.get('access-control-allow-headers')).toBe('Authorization');
      const bad = await fetch(`${s.url}${path}`, { method: 'OPTIONS', headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-requested-with' } });
      expect(bad.status).toBe(403);
      expect(bad.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
  it('cross-origin token responses carry Access-Control-Allow-Origin', async () => {
    const r = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: 'x', ...creds(app) }, { headers: { origin: 'https://spa.example' } });
    expect(r.status).toBe(400);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });
});
