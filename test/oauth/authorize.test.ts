// Security cases A1–A7: the authorization endpoint, redirect URIs, consent CSRF, page headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, authorizeUrl, countRows, createApp, csrfFrom, hiddenFields, signIn, type TestApp } from './helpers.js';

let s: TestServer;
let alice: Agent;
let app: TestApp;
let readOnly: TestApp;

beforeAll(async () => {
  s = await startServer();
  await s.createUser('alice');
  alice = await signIn(s, 'alice');
  app = await createApp(s, { redirectUri: 'https://app.example/cb' });
  readOnly = await createApp(s, { scopes: 'read_user', redirectUri: 'https://ro.example/cb' });
});
afterAll(() => s.close());

function expectPageHeaders(h: Headers) {
  expect(h.get('x-frame-options')).toBe('DENY');
  expect(h.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(h.get('referrer-policy')).toBe('no-referrer');
  expect(h.get('cache-control')).toBe('no-store');
}

describe('A1 redirect URI near-misses', () => {
  const nearMisses = [
    'https://app.example/cb/',
    'https://APP.example/cb',
    'https://app.example/cb?x=1',
    'https://app.example/cb#f',
    'https://evil@app.example/cb',
    'https://app.example.evil.com/cb',
    'https://app.example/cb/../x',
    'http://app.example/cb',
  ];
  for (const uri of nearMisses) {
    it(`refuses ${uri} with an error page and no redirect`, async () => {
      const before = await countRows(s, 'oauth_access_grants');
      const r = await alice.get(authorizeUrl(app, { redirect_uri: uri }));
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toContain('text/html');
      expect(r.location).toBeNull();
      expect(await countRows(s, 'oauth_access_grants')).toBe(before);
    });
  }

  it('accepts any port on a loopback registration but not another path or userinfo', async () => {
    const loop = await createApp(s, { redirectUri: 'http://127.0.0.1/cb' });
    const ok = await alice.get(authorizeUrl(loop, { redirect_uri: 'http://127.0.0.1:53123/cb' }));
    expect(ok.status).toBe(200);
    for (const bad of ['http://127.0.0.1:53123/other', 'http://u@127.0.0.1:53123/cb', 'http://127.0.0.1:53123/cb/', 'https://127.0.0.1:53123/cb', 'http://localhost:53123/cb']) {
      const r = await alice.get(authorizeUrl(loop, { redirect_uri: bad }));
      expect(r.status, bad).toBe(400);
      expect(r.location).toBeNull();
    }
  });
});

describe('A2 unknown or missing client', () => {
  it('shows an error page without redirecting', async () => {
    for (const q of [`client_id=nope&redirect_uri=${encodeURIComponent('https://app.example/cb')}&response_type=code`, `redirect_uri=${encodeURIComponent('https://app.example/cb')}&response_type=code`]) {
      const r = await alice.get(`/oauth/authorize?${q}`);
      expect(r.status).toBe(400);
      expect(r.location).toBeNull();
      expect(r.text).toContain('invalid_client');
      expect(r.headers.getSetCookie().filter((c) => c.startsWith('_labwright_session'))).toEqual([]);
    }
  });
});

describe('A3 unsupported response types', () => {
  const state = 'a%2Bb%2Fc%3D%26x';
  for (const [rt, error] of [['token', 'unsupported_response_type'], ['id_token', 'unsupported_response_type'], [null, 'invalid_request']] as const) {
    it(`response_type=${rt} redirects with ${error} and the exact state`, async () => {
      const before = await countRows(s, 'oauth_access_tokens');
      const q = `client_id=${app.uid}&redirect_uri=${encodeURIComponent(app.redirectUri)}&scope=api&state=${state}${rt ? `&response_type=${rt}` : ''}`;
      const r = await alice.get(`/oauth/authorize?${q}`);
      expect(r.status).toBe(302);
      const loc = new URL(r.location!);
      expect(loc.origin + loc.pathname).toBe('https://app.example/cb');
      expect(loc.searchParams.get('error')).toBe(error);
      expect(loc.searchParams.get('state')).toBe('a+b/c=&x');
      expect(r.location).toContain(`state=${state}`);
      expect(loc.searchParams.has('code')).toBe(false);
      expect(await countRows(s, 'oauth_access_tokens')).toBe(before);
    });
  }
});

describe('A4 scope not registered', () => {
  for (const scope of ['api sudo', 'read_user api', 'unknown_scope']) {
    it(`"${scope}" redirects with invalid_scope`, async () => {
      const before = await countRows(s, 'oauth_access_grants');
      const r = await alice.get(authorizeUrl(readOnly, { scope, state: 's1' }));
      expect(r.status).toBe(302);
      const loc = new URL(r.location!);
      expect(loc.searchParams.get('error')).toBe('invalid_scope');
      expect(loc.searchParams.get('state')).toBe('s1');
      expect(await countRows(s, 'oauth_access_grants')).toBe(before);
    });
  }
  it('a POST approval with an unregistered scope issues no code either', async () => {
    const page = await alice.get(authorizeUrl(readOnly, { scope: 'read_user' }));
    const fields = { ...hiddenFields(page.text), scope: 'api', decision: 'approve' };
    const before = await countRows(s, 'oauth_access_grants');
    const r = await alice.post('/oauth/authorize', fields);
    expect(r.status).toBe(303);
    expect(new URL(r.location!).searchParams.get('error')).toBe('invalid_scope');
    expect(await countRows(s, 'oauth_access_grants')).toBe(before);
  });
});

describe('A5 duplicated parameters', () => {
  const base = () => `response_type=code&scope=api&client_id=${app.uid}&redirect_uri=${encodeURIComponent(app.redirectUri)}`;
  it('client_id twice: error page', async () => {
    const r = await alice.get(`/oauth/authorize?${base()}&client_id=${app.uid}&state=x`);
    expect(r.status).toBe(400);
    expect(r.location).toBeNull();
  });
  it('redirect_uri twice: error page', async () => {
    const r = await alice.get(`/oauth/authorize?${base()}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`);
    expect(r.status).toBe(400);
    expect(r.location).toBeNull();
  });
  it('state twice: invalid_request redirect, no code', async () => {
    const before = await countRows(s, 'oauth_access_grants');
    const r = await alice.get(`/oauth/authorize?${base()}&state=a&state=b`);
    expect(r.status).toBe(302);
    const loc = new URL(r.location!);
    expect(loc.searchParams.get('error')).toBe('invalid_request');
    expect(loc.searchParams.has('code')).toBe(false);
    expect(await countRows(s, 'oauth_access_grants')).toBe(before);
  });
  it('duplicated parameters in the approval POST issue no code', async () => {
    const page = await alice.get(authorizeUrl(app));
    const fields = hiddenFields(page.text);
    const body = new URLSearchParams({ ...fields, decision: 'approve' }).toString() + '&state=other';
    const before = await countRows(s, 'oauth_access_grants');
    const r = await alice.request('POST', '/oauth/authorize', { body });
    expect(r.status).toBe(303);
    expect(new URL(r.location!).searchParams.get('error')).toBe('invalid_request');
    expect(await countRows(s, 'oauth_access_grants')).toBe(before);
  });
});

describe('A6 framing and caching headers', () => {
  it('consent page', async () => {
    const r = await alice.get(authorizeUrl(app));
    expect(r.status).toBe(200);
    expectPageHeaders(r.headers);
  });
  it('device verification page', async () => {
    const r = await alice.get('/oauth/device');
    expect(r.status).toBe(200);
    expectPageHeaders(r.headers);
  });
  it('login page', async () => {
    const r = await new Agent(s.url).get('/users/sign_in');
    expect(r.status).toBe(200);
    expectPageHeaders(r.headers);
  });
  it('error page', async () => {
    const r = await alice.get('/oauth/authorize?client_id=nope');
    expect(r.status).toBe(400);
    expectPageHeaders(r.headers);
  });
  it('anonymous visitors are sent to sign in, coming back afterwards', async () => {
    const r = await new Agent(s.url).get(authorizeUrl(app));
    expect(r.status).toBe(302);
    expect(r.location).toMatch(/^\/users\/sign_in\?redirect_to=%2Foauth%2Fauthorize/);
  });
});

describe('A7 consent CSRF', () => {
  it('refuses a missing, foreign or other-session token, then accepts the right one with 303', async () => {
    const page = await alice.get(authorizeUrl(app, { state: 'st=1&2' }));
    const fields = hiddenFields(page.text);
    const before = await countRows(s, 'oauth_access_grants');

    const missing = await alice.post('/oauth/authorize', { ...fields, authenticity_token: '', decision: 'approve' });
    expect(missing.status).toBe(403);
    expect(missing.location).toBeNull();

    const other = await signIn(s, 'alice');
    const otherPage = await other.get(authorizeUrl(app));
    const foreign = await alice.post('/oauth/authorize', { ...fields, authenticity_token: csrfFrom(otherPage.text), decision: 'approve' });
    expect(foreign.status).toBe(403);
    // Alice's token replayed from a different session.
    const replay = await other.post('/oauth/authorize', { ...fields, decision: 'approve' });
    expect(replay.status).toBe(403);
    expect(await countRows(s, 'oauth_access_grants')).toBe(before);

    const good = await alice.post('/oauth/authorize', { ...fields, decision: 'approve' });
    expect(good.status).toBe(303);
    const loc = new URL(good.location!);
    expect(loc.searchParams.get('code')).toMatch(/^[0-9a-f]{64}$/);
    expect(loc.searchParams.get('state')).toBe('st=1&2');
    expect(await countRows(s, 'oauth_access_grants')).toBe(before + 1);
  });

  it('deny redirects with access_denied and issues no code', async () => {
    const page = await alice.get(authorizeUrl(app, { state: 'd' }));
    const before = await countRows(s, 'oauth_access_grants');
    const r = await alice.post('/oauth/authorize', { ...hiddenFields(page.text), decision: 'deny' });
    expect(r.status).toBe(303);
    const loc = new URL(r.location!);
    expect(loc.searchParams.get('error')).toBe('access_denied');
    expect(loc.searchParams.get('state')).toBe('d');
    expect(await countRows(s, 'oauth_access_grants')).toBe(before);
  });

  it('trusted applications skip the consent page', async () => {
    const trusted = await createApp(s, { trusted: true, redirectUri: 'https://trusted.example/cb' });
    const r = await alice.get(authorizeUrl(trusted, { state: 't' }));
    expect(r.status).toBe(302);
    const loc = new URL(r.location!);
    expect(loc.searchParams.get('code')).toMatch(/^[0-9a-f]{64}$/);
    expect(loc.searchParams.get('state')).toBe('t');
  });

  it('the consent page names the application, the scopes and the account, escaped', async () => {
    const odd = await createApp(s, { name: '<script>alert(1)</script> App', redirectUri: 'https://odd.example/cb' });
    const r = await alice.get(authorizeUrl(odd, { scope: 'api read_user' }));
    expect(r.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt; App');
    expect(r.text).not.toContain('<script>alert(1)');
    expect(r.text).toContain('@alice');
    expect(r.text).toContain('read_user');
  });
});
