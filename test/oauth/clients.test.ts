// An independent OAuth client library (oauth4webapi) runs the PKCE flow and the device flow
// against the real server, then uses, refreshes and revokes the tokens.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, apiUser, createApp, csrfFrom, hiddenFields, signIn, type TestApp } from './helpers.js';

let s: TestServer;
let alice: Agent;
let as: oauth.AuthorizationServer;
const insecure = { [oauth.allowInsecureRequests]: true };

beforeAll(async () => {
  s = await startServer();
  await s.createUser('alice');
  alice = await signIn(s, 'alice');
  const issuer = new URL(s.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
});
afterAll(() => s.close());

describe('oauth4webapi: authorization code with PKCE (public client)', () => {
  it('discovers, authorizes, exchanges, refreshes and revokes', async () => {
    const registered: TestApp = await createApp(s, { confidential: false, redirectUri: 'http://127.0.0.1/callback', scopes: 'api read_user' });
    const client: oauth.Client = { client_id: registered.uid };
    const auth = oauth.None();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'api read_user',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();

    const consent = await alice.get(url.pathname + url.search);
    expect(consent.status).toBe(200);
    const approved = await alice.post('/oauth/authorize', { ...hiddenFields(consent.text), decision: 'approve' });
    expect(approved.status).toBe(303);

    const params = oauth.validateAuthResponse(as, client, new URL(approved.location!), state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, insecure),
    );
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('api read_user');
    expect(await apiUser(s, tokens.access_token)).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure));
    expect(await apiUser(s, tokens.access_token)).toBe(401);
    expect(await apiUser(s, refreshed.access_token)).toBe(200);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.access_token, insecure));
    expect(await apiUser(s, refreshed.access_token)).toBe(401);
  });

  it('a confidential client with client_secret_basic', async () => {
    const registered = await createApp(s, { redirectUri: 'https://conf.example/cb' });
    const client: oauth.Client = { client_id: registered.uid };
    const auth = oauth.ClientSecretBasic(registered.secret);
    const verifier = oauth.generateRandomCodeVerifier();
    const consent = await alice.get(
      `/oauth/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: registered.redirectUri, response_type: 'code', scope: 'api', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })}`,
    );
    const approved = await alice.post('/oauth/authorize', { ...hiddenFields(consent.text), decision: 'approve' });
    const params = oauth.validateAuthResponse(as, client, new URL(approved.location!), oauth.expectNoState);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, registered.redirectUri, verifier, insecure));
    expect(await apiUser(s, tokens.access_token)).toBe(200);
  });
});

describe('oauth4webapi: device authorization grant', () => {
  it('polls, the user approves in between, the device gets its tokens', async () => {
    const registered = await createApp(s, { confidential: false, redirectUri: 'https://device.example/cb', scopes: 'api' });
    const client: oauth.Client = { client_id: registered.uid };
    const auth = oauth.None();
    const device = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, auth, { scope: 'api' }, insecure));
    expect(device.user_code).toMatch(/^[0-9A-Z]{8}$/);
    expect(device.interval).toBe(5);

    await expect(
      oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, insecure)),
    ).rejects.toMatchObject({ error: 'authorization_pending' });

    const complete = new URL(device.verification_uri_complete!);
    const entry = await alice.get(complete.pathname + complete.search);
    expect(entry.text).toContain(device.user_code);
    const confirm = await alice.post('/oauth/device', { authenticity_token: csrfFrom(entry.text), user_code: device.user_code });
    const done = await alice.post('/oauth/device/confirm', { authenticity_token: csrfFrom(confirm.text), user_code: device.user_code, decision: 'approve' });
    expect(done.status).toBe(200);

    await new Promise((r) => setTimeout(r, device.interval! * 1000 + 200));
    const tokens = await oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, insecure));
    expect(tokens.scope).toBe('api');
    expect(await apiUser(s, tokens.access_token)).toBe(200);
  }, 20_000);
});
