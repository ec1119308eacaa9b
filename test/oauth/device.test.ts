// Security cases E22–E27: the device authorization grant.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { advanceClock, resetClock } from '../../src/oauth/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, apiUser, countRows, createApp, csrfFrom, signIn, tokenRequest, type TestApp } from './helpers.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
let s: TestServer;
let alice: Agent;
let app: TestApp;
let appB: TestApp;

beforeAll(async () => {
  s = await startServer();
  await s.createUser('alice');
  alice = await signIn(s, 'alice');
  app = await createApp(s, { confidential: false, scopes: 'api read_user', redirectUri: 'https://d.example/cb' });
  appB = await createApp(s, { confidential: false, scopes: 'api', redirectUri: 'https://e.example/cb' });
});
afterAll(() => s.close());
afterEach(async () => {
  resetClock();
  // The guess window is keyed by IP and every test comes from 127.0.0.1; start each test afresh.
  await s.app.lw.db.deleteFrom('web_throttles').execute();
  await s.settle();
});

async function authorizeDevice(a: TestApp = app, scope = 'api') {
  const r = await tokenRequest(s, { client_id: a.uid, scope }, { path: '/oauth/authorize_device' });
  expect(r.status).toBe(200);
  return r.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
}

function poll(deviceCode: string, a: TestApp = app) {
  return tokenRequest(s, { grant_type: GRANT, device_code: deviceCode, client_id: a.uid });
}

/** Enters the user code and returns the confirmation page (or the error page). */
async function enterCode(agent: Agent, code: string) {
  const page = await agent.get('/oauth/device');
  return agent.post('/oauth/device', { authenticity_token: csrfFrom(page.text), user_code: code });
}

async function decide(agent: Agent, code: string, decision: 'approve' | 'deny') {
  const confirm = await enterCode(agent, code);
  expect(confirm.status).toBe(200);
  return agent.post('/oauth/device/confirm', { authenticity_token: csrfFrom(confirm.text), user_code: code, decision });
}

describe('E22 device authorization response', () => {
  it('returns the fields of RFC 8628 §3.2', async () => {
    const d = await authorizeDevice();
    expect(d.device_code).toMatch(/^[0-9a-f]{64}$/);
    expect(d.user_code).toMatch(/^[0-9A-Z]{8}$/);
    expect(d.verification_uri).toBe(`${s.url}/oauth/device`);
    expect(d.verification_uri_complete).toBe(`${s.url}/oauth/device?user_code=${d.user_code}`);
    expect(d.expires_in).toBe(300);
    expect(d.interval).toBe(5);
  });
  it('unknown client 401 invalid_client, disallowed scope invalid_scope, no rows', async () => {
    const before = await countRows(s, 'oauth_device_grants');
    const unknown = await tokenRequest(s, { client_id: 'nope', scope: 'api' }, { path: '/oauth/authorize_device' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe('invalid_client');
    const scope = await tokenRequest(s, { client_id: app.uid, scope: 'sudo' }, { path: '/oauth/authorize_device' });
    expect(scope.status).toBe(400);
    expect(scope.body.error).toBe('invalid_scope');
    expect(await countRows(s, 'oauth_device_grants')).toBe(before);
  });
  it('stores neither the device code nor the user code in clear', async () => {
    const d = await authorizeDevice();
    const dump = JSON.stringify(await s.app.lw.db.selectFrom('oauth_device_grants').selectAll().execute());
    expect(dump).not.toContain(d.device_code);
    expect(dump).not.toContain(d.user_code);
  });
});

describe('E23 polling too fast', () => {
  it('slow_down raises the interval by 5 each time and only a patient poll is pending', async () => {
    const d = await authorizeDevice();
    expect((await poll(d.device_code)).body.error).toBe('authorization_pending');
    advanceClock(500);
    expect((await poll(d.device_code)).body.error).toBe('slow_down'); // interval now 10
    advanceClock(5500);
    expect((await poll(d.device_code)).body.error).toBe('slow_down'); // 5.5 s < 10 s; interval now 15
    advanceClock(5000);
    expect((await poll(d.device_code)).body.error).toBe('slow_down'); // 5 s < 15 s; interval now 20
    const row = await s.app.lw.db.selectFrom('oauth_device_grants').select('interval').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(row.interval).toBe(20);
    advanceClock(21_000);
    const patient = await poll(d.device_code);
    expect(patient.body.error).toBe('authorization_pending');
    expect(patient.headers.get('cache-control')).toContain('no-store');
    expect(await countRows(s, 'oauth_access_tokens')).toBe(0);
  });
});

describe('E24 user-code brute force', () => {
  it('variants of one code match; more than 5 wrong codes a minute gives 429 for every code', async () => {
    const d = await authorizeDevice();
    const lower = d.user_code.toLowerCase();
    for (const variant of [`${lower.slice(0, 4)}-${lower.slice(4)}`, `${d.user_code.slice(0, 4)} ${d.user_code.slice(4)}`, lower]) {
      const r = await enterCode(alice, variant);
      expect(r.status, variant).toBe(200);
      expect(r.text).toContain('Authorize a device?');
    }
    const attacker = await signIn(s, 'alice');
    for (let i = 0; i < 5; i++) {
      const r = await enterCode(attacker, `ZZZZ${String(i).padStart(4, '0')}`);
      expect(r.status).toBe(422);
    }
    const blocked = await enterCode(attacker, 'ZZZZ9999');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    const right = await enterCode(attacker, d.user_code);
    expect(right.status).toBe(429);
    expect((await poll(d.device_code)).body.error).toBe('authorization_pending');
    advanceClock(61_000);
    const after = await decide(attacker, d.user_code, 'approve');
    expect(after.status).toBe(200);
    advanceClock(6000);
    expect((await poll(d.device_code)).status).toBe(200);
  });
});

describe('E25 deny, approve, re-poll', () => {
  it('deny gives access_denied and never a token', async () => {
    const d = await authorizeDevice();
    const r = await decide(alice, d.user_code, 'deny');
    expect(r.status).toBe(200);
    expect(r.text).toContain('Device denied');
    const before = await countRows(s, 'oauth_access_tokens');
    expect((await poll(d.device_code)).body.error).toBe('access_denied');
    advanceClock(6000);
    expect((await poll(d.device_code)).body.error).toBe('access_denied');
    advanceClock(300_000);
    expect((await poll(d.device_code)).body.error).toBe('expired_token');
    expect(await countRows(s, 'oauth_access_tokens')).toBe(before);
  });
  it('approve gives exactly one token pair, then invalid_grant', async () => {
    const d = await authorizeDevice(app, 'api read_user');
    expect((await decide(alice, d.user_code, 'approve')).text).toContain('Device connected');
    const before = await countRows(s, 'oauth_access_tokens');
    const t = await poll(d.device_code);
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'api read_user' });
    expect(t.body.refresh_token).toBeTruthy();
    expect(await apiUser(s, t.body.access_token)).toBe(200);
    advanceClock(6000);
    const again = await poll(d.device_code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect(await countRows(s, 'oauth_access_tokens')).toBe(before + 1);
  });
  it('ten polls at once after approval: one token pair, the others invalid_grant', async () => {
    const d = await authorizeDevice();
    expect((await decide(alice, d.user_code, 'approve')).text).toContain('Device connected');
    const before = await countRows(s, 'oauth_access_tokens');
    const rs = await Promise.all(Array.from({ length: 10 }, () => poll(d.device_code)));
    expect(rs.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(400)]);
    expect(rs.filter((r) => r.status === 400).map((r) => r.body.error)).toEqual(Array(9).fill('invalid_grant'));
    expect(await countRows(s, 'oauth_access_tokens')).toBe(before + 1);
  });
  it('approve and deny at once: one decision holds, the other answers 422', async () => {
    const d = await authorizeDevice();
    const [a, b] = await Promise.all([enterCode(alice, d.user_code), enterCode(alice, d.user_code)]);
    const send = (page: typeof a, decision: string) => alice.post('/oauth/device/confirm', { authenticity_token: csrfFrom(page.text), user_code: d.user_code, decision });
    const [ra, rb] = await Promise.all([send(a, 'approve'), send(b, 'deny')]);
    expect([ra.status, rb.status].sort()).toEqual([200, 422]);
    const t = await poll(d.device_code);
    if (ra.status === 200) expect(t.status).toBe(200);
    else expect(t.body.error).toBe('access_denied');
  });
});

describe('E26 expiry', () => {
  it('polls after expires_in get expired_token; the page refuses the late code', async () => {
    const d = await authorizeDevice();
    const confirm = await enterCode(alice, d.user_code);
    expect(confirm.status).toBe(200);
    advanceClock(301_000);
    expect((await poll(d.device_code)).body.error).toBe('expired_token');
    const late = await enterCode(alice, d.user_code);
    expect(late.status).toBe(422);
    expect(late.text).toContain('expired');
    // The confirmation form opened before expiry cannot approve either.
    const r = await alice.post('/oauth/device/confirm', { authenticity_token: csrfFrom(confirm.text), user_code: d.user_code, decision: 'approve' });
    expect(r.status).toBe(422);
    expect((await poll(d.device_code)).body.error).toBe('expired_token');
  });
});

describe('E27 device code bound to client; phishing cues', () => {
  it('another client polling gets invalid_grant; the grant stays pending', async () => {
    const d = await authorizeDevice();
    const r = await poll(d.device_code, appB);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
    expect((await poll(d.device_code)).body.error).toBe('authorization_pending');
  });
  it('the approval POST without a CSRF token is 403 and changes nothing', async () => {
    const d = await authorizeDevice();
    const r = await alice.post('/oauth/device/confirm', { user_code: d.user_code, decision: 'approve' });
    expect(r.status).toBe(403);
    expect((await poll(d.device_code)).body.error).toBe('authorization_pending');
  });
  it('the approval page names the application, the scopes and says a device is being authorized', async () => {
    const d = await authorizeDevice(app, 'read_user');
    const page = await enterCode(alice, d.user_code);
    expect(page.text).toContain('Test app');
    expect(page.text).toContain('read_user');
    expect(page.text).toContain('A device is asking to access your account');
    expect(page.text).toContain(`${d.user_code.slice(0, 4)}-${d.user_code.slice(4)}`);
  });
  it('signed-out visitors are sent to sign in, keeping the user code', async () => {
    const r = await new Agent(s.url).get('/oauth/device?user_code=ABCD1234');
    expect(r.status).toBe(302);
    expect(r.location).toBe('/users/sign_in?redirect_to=%2Foauth%2Fdevice%3Fuser_code%3DABCD1234');
  });
});
