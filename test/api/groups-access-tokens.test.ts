import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };
let g: any;

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  g = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Bots', path: 'bots' } })).body;
});
afterAll(async () => {
  await s?.close();
});

describe('group access tokens', () => {
  let created: any;
  it('creates a token for a bot member; it authenticates with PRIVATE-TOKEN', async () => {
    const r = await s.request('POST', `/groups/${g.id}/access_tokens`, {
      token: alice.token,
      json: { name: 'ci', scopes: ['api'], access_level: 30, expires_at: '2999-01-01'.replace('2999', String(new Date().getUTCFullYear() + 1)) },
    });
    expect(r.status).toBe(201);
    created = r.body;
    expect(Object.keys(r.body)).toEqual([
      'id', 'name', 'revoked', 'created_at', 'description', 'scopes', 'user_id', 'last_used_at', 'active', 'expires_at', 'access_level', 'resource_type', 'resource_id', 'token',
    ]);
    expect(r.body.resource_type).toBe('group');
    expect(r.body.resource_id).toBe(g.id);
    expect(r.body.access_level).toBe(30);
    const me = await s.request('GET', '/user', { token: r.body.token });
    expect(me.status).toBe(200);
    expect(me.body.bot).toBe(true);
    const grp = await s.request('GET', `/groups/${g.id}`, { token: r.body.token });
    expect(grp.status).toBe(200);
    const list = await s.request('GET', `/groups/${g.id}/access_tokens`, { token: alice.token });
    expect(list.body.map((t: any) => t.id)).toEqual([created.id]);
    expect(list.body[0].token).toBeUndefined();
    const one = await s.request('GET', `/groups/${g.id}/access_tokens/${created.id}`, { token: alice.token });
    expect(one.body.name).toBe('ci');
  });

  it('validates input and needs Owner', async () => {
    for (const body of [{ scopes: ['api'] }, { name: 'x' }, { name: 'x', scopes: ['sudo'] }, { name: 'x', scopes: ['api'], access_level: 35 }, { name: 'x', scopes: ['api'], expires_at: '2001-01-01' }]) {
      const r = await s.request('POST', `/groups/${g.id}/access_tokens`, { token: alice.token, json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    const other = await s.request('POST', `/groups/${g.id}/access_tokens`, { token: bob.token, json: { name: 'x', scopes: ['api'] } });
    expect(other.status).toBe(404);
    const list = await s.request('GET', `/groups/${g.id}/access_tokens`, { token: bob.token });
    expect(list.status).toBe(404);
  });

  it('rotates (old revoked, new works) and revokes', async () => {
    const r = await s.request('POST', `/groups/${g.id}/access_tokens/${created.id}/rotate`, { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body.token).toBeTruthy();
    expect((await s.request('GET', '/user', { token: created.token })).status).toBe(401);
    expect((await s.request('GET', '/user', { token: r.body.token })).status).toBe(200);
    const del = await s.request('DELETE', `/groups/${g.id}/access_tokens/${r.body.id}`, { token: alice.token });
    expect(del.status).toBe(204);
    expect((await s.request('GET', '/user', { token: r.body.token })).status).toBe(401);
    const missing = await s.request('DELETE', `/groups/${g.id}/access_tokens/999999`, { token: alice.token });
    expect(missing.status).toBe(404);
  });
});

describe('project access tokens', () => {
  it('creates a project token (Maintainer needed) that reads the private project', async () => {
    const p = await s.request('POST', '/projects', { token: alice.token, json: { name: 'Tool', path: 'tool', namespace_id: g.id } });
    expect(p.status).toBe(201);
    const r = await s.request('POST', `/projects/${p.body.id}/access_tokens`, { token: alice.token, json: { name: 'deploy', scopes: ['read_api'], access_level: 20 } });
    expect(r.status).toBe(201);
    expect(r.body.resource_type).toBe('project');
    expect((await s.request('GET', `/projects/${p.body.id}`, { token: r.body.token })).status).toBe(200);
    const denied = await s.request('POST', `/projects/${p.body.id}/access_tokens`, { token: bob.token, json: { name: 'x', scopes: ['api'] } });
    expect(denied.status).toBe(404);
    const list = await s.request('GET', `/projects/${p.body.id}/access_tokens`, { token: alice.token });
    expect(list.body.length).toBe(1);
  });
});
