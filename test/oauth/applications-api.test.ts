// The admin API /api/v4/applications: create, list, delete, renew the secret; access and bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { codeFlowTokens, apiUser, signIn, tokenRequest } from './helpers.js';

let s: TestServer;
let alice: { id: number; token: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
});
afterAll(() => s.close());

const body = { name: 'CI', redirect_uri: 'https://ci.example/cb', scopes: 'api read_user' };

describe('POST /applications', () => {
  it('creates an application and shows the secret once', async () => {
    const r = await s.request('POST', '/applications', { json: body });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ application_name: 'CI', callback_url: 'https://ci.example/cb', confidential: true });
    expect(r.body.application_id).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.secret).toMatch(/^gloas-[0-9a-f]{64}$/);
    const row = await s.app.lw.db.selectFrom('oauth_applications').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(r.body.secret);
    const list = await s.request('GET', '/applications');
    expect(list.body.find((a: any) => a.id === r.body.id).secret).toBeUndefined();
  });
  it('accepts form bodies and confidential=false', async () => {
    const r = await s.request('POST', '/applications', { form: { ...body, confidential: 'false' } });
    expect(r.status).toBe(201);
    expect(r.body.confidential).toBe(false);
  });
  it('refuses bad input with 400 and writes nothing', async () => {
    const before = (await s.request('GET', '/applications')).body.length;
    const missing = await s.request('POST', '/applications', { json: { name: 'x' } });
    expect(missing.status).toBe(400);
    for (const bad of [{ ...body, redirect_uri: 'not a uri' }, { ...body, redirect_uri: 'javascript:alert(1)' }, { ...body, scopes: 'api nonsense' }, { ...body, redirect_uri: 'https://x.example/cb#frag' }]) {
      const r = await s.request('POST', '/applications', { json: bad });
      expect(r.status).toBe(400);
      expect(typeof r.body.message).toBe('object');
    }
    expect((await s.request('GET', '/applications')).body.length).toBe(before);
  });
  it('is for administrators only', async () => {
    expect((await s.request('POST', '/applications', { json: body, token: alice.token })).status).toBe(403);
    expect((await s.request('GET', '/applications', { token: alice.token })).status).toBe(403);
    expect((await s.request('GET', '/applications', { token: null })).status).toBe(401);
  });
});

describe('renew-secret and DELETE', () => {
  it('renewing the secret makes the old one fail', async () => {
    const created = (await s.request('POST', '/applications', { json: body })).body;
    const renewed = await s.request('POST', `/applications/${created.id}/renew-secret`);
    expect(renewed.status).toBe(201);
    expect(renewed.body.secret).not.toBe(created.secret);
    const old = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: 'x', client_id: created.application_id, client_secret: created.secret });
    expect(old.body.error).toBe('invalid_client');
    const fresh = await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: 'x', client_id: created.application_id, client_secret: renewed.body.secret });
    expect(fresh.body.error).toBe('invalid_grant');
    expect((await s.request('POST', '/applications/999999/renew-secret')).status).toBe(404);
    expect((await s.request('POST', `/applications/${created.id}/renew-secret`, { token: alice.token })).status).toBe(403);
  });
  it('deleting revokes the application\'s tokens', async () => {
    const created = (await s.request('POST', '/applications', { json: body })).body;
    const agent = await signIn(s, 'alice');
    const t = await codeFlowTokens(s, agent, { id: created.id, uid: created.application_id, secret: created.secret, redirectUri: 'https://ci.example/cb' });
    expect(await apiUser(s, t.access_token)).toBe(200);
    expect((await s.request('DELETE', `/applications/${created.id}`, { token: alice.token })).status).toBe(403);
    expect((await s.request('DELETE', `/applications/${created.id}`)).status).toBe(204);
    expect(await apiUser(s, t.access_token)).toBe(401);
    const again = await s.request('DELETE', `/applications/${created.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Application Not Found' });
    expect((await s.request('DELETE', '/applications/abc')).status).toBe(400);
  });
});
