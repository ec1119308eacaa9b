// Regression tests for what the fuzzer found in the foundation, pinned as plain requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { prototypePollution } from './state.js';

let s: TestServer;

beforeAll(async () => {
  s = await startServer();
});

afterAll(async () => {
  await s?.close();
});

function cursor(data: unknown): string {
  return Buffer.from(JSON.stringify(data)).toString('base64url');
}

describe('ids past the 32-bit integer columns (PostgreSQL answered 500: "value out of range for type integer")', () => {
  const BIG = '2147483648';

  it('GET /users/:id answers 404', async () => {
    const r = await s.request('GET', `/users/${BIG}`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ message: '404 User Not Found' });
  });

  it('GET /projects/:id answers 404', async () => {
    expect((await s.request('GET', `/projects/${BIG}`)).status).toBe(404);
  });

  it('GET and HEAD /uploads/-/system/group/avatar/:id/:file answer 404', async () => {
    for (const method of ['GET', 'HEAD']) expect((await s.request(method, `${s.url}/uploads/-/system/group/avatar/${BIG}/a.png`)).status).toBe(404);
  });

  it('the credential inventory (hosted Premium+) answers 404 for a token id past the range', async () => {
    const hosted = await startServer({ LABWRIGHT_PLAN: 'ultimate', LABWRIGHT_OFFERING: 'hosted' });
    try {
      const g = await hosted.request('POST', '/groups', { json: { name: 'inventory', path: 'inventory' } });
      expect(g.status).toBe(201);
      for (const [method, path] of [
        ['DELETE', `/groups/${g.body.id}/manage/personal_access_tokens/${BIG}`],
        ['POST', `/groups/${g.body.id}/manage/personal_access_tokens/${BIG}/rotate`],
        ['DELETE', `/groups/${g.body.id}/manage/resource_access_tokens/${BIG}`],
        ['POST', `/groups/${g.body.id}/manage/resource_access_tokens/${BIG}/rotate`],
      ]) expect([method, path, (await hosted.request(method, path)).status]).toEqual([method, path, 404]);
    } finally {
      await hosted.close();
    }
  });

  it('GET /users/:id/keys and GET /namespaces/:id answer 404', async () => {
    expect((await s.request('GET', `/users/${BIG}/keys`)).status).toBe(404);
    expect((await s.request('GET', `/namespaces/${BIG}`)).status).toBe(404);
  });

  it('personal access token routes answer 4xx', async () => {
    expect((await s.request('GET', `/personal_access_tokens/${BIG}`)).status).toBe(400);
    expect((await s.request('POST', `/personal_access_tokens/${BIG}/rotate`)).status).toBe(400);
    const created = await s.request('POST', `/users/${BIG}/personal_access_tokens`, { json: { name: 'x', scopes: ['api'] } });
    expect(created.status).toBe(404);
    const listed = await s.request('GET', '/personal_access_tokens', { query: { user_id: BIG } });
    expect(listed.status).toBe(400);
    expect(listed.body).toEqual({ error: 'user_id does not have a valid value' });
  });

  it('sudo to a huge id is an unknown user', async () => {
    const r = await s.request('GET', '/user', { query: { sudo: BIG } });
    expect(r.status).toBe(404);
  });

  it('keyset cursors with ids that are not integers or are out of range are refused', async () => {
    for (const id of ['abc', '99999999999', '1.5', '']) {
      const r = await s.request('GET', '/users', { query: { pagination: 'keyset', order_by: 'id', sort: 'asc', cursor: cursor({ id }) } });
      expect(r.status, `cursor id ${JSON.stringify(id)}: ${r.text}`).toBeLessThan(500);
    }
  });

  it('id_after past the range is refused', async () => {
    const r = await s.request('GET', '/users', { query: { pagination: 'keyset', order_by: 'id', id_after: BIG } });
    expect(r.status).toBeLessThan(500);
  });
});

describe('sudo given as a hash or array (String() of a prototype-less hash threw: a 500)', () => {
  it('answers 400 sudo is invalid, for admins and others alike', async () => {
    const alice = await s.createUser('sudohash');
    for (const token of [alice.token, s.rootToken]) {
      const r = await s.request('GET', '/projects?sudo[a]=x&sudo[key]=y', { token });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'sudo is invalid' });
    }
    const arr = await s.request('GET', '/user?sudo[]=1');
    expect(arr.status).toBe(400);
    const json = await s.request('POST', '/user/personal_access_tokens', { json: { sudo: { a: 1 }, name: 'x', scopes: ['k8s_proxy'] }, token: alice.token });
    expect(json.status).toBe(400);
    expect((await s.request('GET', '/personal_access_tokens', { token: alice.token })).body).toHaveLength(1);
  });
});

describe('hash-valued parameters where a string is expected', () => {
  it('blocking_project_id as a hash is a 400, not a 500', async () => {
    const p = await s.request('POST', '/projects', { json: { name: 'blocks-fuzz', initialize_with_readme: true } });
    expect(p.status).toBe(201);
    const r = await s.request('POST', `/projects/${p.body.id}/merge_requests/1/blocks?blocking_merge_request_iid=1&blocking_project_id[a]=1`);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
  });
});

describe('prototype keys in bodies', () => {
  it('__proto__ and constructor keys neither pollute the process nor grant anything', async () => {
    const body = '{"username":"protouser","email":"protouser@example.com","name":"p","password":"password-1234",' +
      '"__proto__":{"is_admin":true,"admin":true},"constructor":{"prototype":{"polluted":"yes"}}}';
    const r = await s.request('POST', '/users', { body, headers: { 'content-type': 'application/json' } });
    // Fastify's JSON parser refuses __proto__ keys outright (400); either way nothing is granted.
    expect([201, 400]).toContain(r.status);
    if (r.status === 201) expect(r.body.is_admin).toBe(false);
    else expect((await s.request('GET', '/users', { query: { username: 'protouser' } })).body).toEqual([]);
    const form = await s.request('POST', '/users', {
      body: 'username=protoform&email=protoform%40example.com&name=p&password=password-1234&__proto__[admin]=true&constructor[prototype][polluted]=yes',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(201);
    expect(form.body.is_admin).toBe(false);
    expect(prototypePollution()).toEqual([]);
  });
});
