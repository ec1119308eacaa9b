// Wrong input on every OAuth endpoint and page: always a 4xx (or a page), never a 5xx.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, countRows, createApp, signIn } from '../oauth/helpers.js';

let s: TestServer;
let alice: Agent;

const POST_PATHS = ['/oauth/token', '/oauth/revoke', '/oauth/authorize_device', '/oauth/userinfo', '/oauth/authorize', '/oauth/device', '/oauth/device/confirm', '/users/sign_in', '/users/sign_out', '/user_settings/applications', '/user_settings/applications/1/delete', '/user_settings/applications/x/renew_secret'];
const GET_PATHS = ['/oauth/authorize', '/oauth/device', '/oauth/token/info', '/oauth/userinfo', '/users/sign_in', '/user_settings/applications', '/.well-known/openid-configuration'];
const KEYS = ['client_id', 'client_secret', 'redirect_uri', 'grant_type', 'code', 'code_verifier', 'code_challenge', 'code_challenge_method', 'scope', 'state', 'response_type', 'refresh_token', 'device_code', 'token', 'user_code', 'authenticity_token', 'login', 'password', 'redirect_to', 'name', 'scopes[]', 'decision', 'access_token', '__proto__', 'constructor', 'client_id[]', 'scope[a]'];

beforeAll(async () => {
  s = await startServer();
  await s.createUser('alice');
  alice = await signIn(s, 'alice');
  await createApp(s);
});
afterAll(() => s.close());

const value = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '%', '%ZZ', '\u0000', 'authorization_code', 'refresh_token', 'approve', 'S256', 'plain', 'x'.repeat(5000)));
const pairs = fc.array(fc.tuple(fc.constantFrom(...KEYS), value), { maxLength: 8 });

function encode(p: Array<[string, string]>): string {
  return p.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

describe('no input produces a 5xx', () => {
  // Found by the random run on PostgreSQL: a NUL reached a text column and the driver failed (500).
  it('a null byte in any parameter of any page or OAuth endpoint is a 400', async () => {
    for (const path of GET_PATHS) {
      const r = await s.request('GET', `${path}?client_id=%00&redirect_uri=x`, { token: null });
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
    }
    for (const path of POST_PATHS) {
      const r = await s.request('POST', path, { token: null, form: { client_id: '\u0000', user_code: 'a\u0000' } });
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
    }
    const api = await s.request('GET', '/groups/%00');
    expect(api.status).toBe(400);
    // Found by the random run: the parsed hash keeps only `client_id[]`, the OAuth code reads the raw text.
    for (const path of GET_PATHS) {
      const r = await s.request('GET', `${path}?client_id=%00&client_id%5B%5D=&%ZZ=%00`, { token: null });
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
    }
    for (const path of POST_PATHS) {
      const r = await alice.request('POST', path, { body: 'client_id=%00&client_id%5B%5D=' });
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
    }
    // Found by review: HTTP Basic client credentials are decoded from the header, past the parameter check.
    for (const creds of ['%00:x', '\u0000:x', 'abc:%00']) {
      for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/authorize_device']) {
        const authorization = `Basic ${Buffer.from(creds).toString('base64')}`;
        const r = await new Agent(s.url).request('POST', path, { body: 'grant_type=client_credentials&token=x', headers: { authorization } });
        expect({ path, creds, status: r.status }).toEqual({ path, creds, status: 401 });
      }
    }
  });

  it('random forms and queries', async () => {
    const appsBefore = await s.app.lw.db.selectFrom('oauth_applications').select('id').execute();
    const tokensBefore = await countRows(s, 'oauth_access_tokens');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...POST_PATHS), fc.constantFrom(...GET_PATHS), pairs, fc.boolean(), fc.constantFrom('', 'Basic !!', 'Basic ' + Buffer.from('a:b').toString('base64'), 'Bearer x', 'bearer'), async (post, get, p, signedIn, authz) => {
        const agent = signedIn ? alice : new Agent(s.url);
        const headers = authz ? { authorization: authz } : undefined;
        const r1 = await agent.request('POST', post, { body: encode(p), headers });
        expect(r1.status, `${post} ${encode(p)}`).toBeLessThan(500);
        const r2 = await agent.request('GET', `${get}?${encode(p)}`, { headers });
        expect(r2.status, `${get} ${encode(p)}`).toBeLessThan(500);
      }),
      { numRuns: Number(process.env.ROBUSTNESS_RUNS ?? 150) },
    );
    // Nothing valid was ever sent, so nothing was created.
    expect((await s.app.lw.db.selectFrom('oauth_applications').select('id').execute()).length).toBe(appsBefore.length);
    expect(await countRows(s, 'oauth_access_tokens')).toBe(tokensBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }, Number(process.env.ROBUSTNESS_RUNS ?? 150) * 400);

  it('JSON bodies at the token endpoint', async () => {
    for (const body of ['{"grant_type":["a"]}', '{"grant_type":null}', '[]', '"x"', '{bad json', '{"__proto__":{"x":1}}']) {
      const r = await fetch(`${s.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(r.status, body).toBeGreaterThanOrEqual(400);
      expect(r.status, body).toBeLessThan(500);
    }
  });
});
