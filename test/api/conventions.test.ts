// Spec document 1 §4.1 conventions through the real app: parameter sources, nested forms, booleans,
// timestamps, 404/410/414, default status codes, exact Content-Type, GET /version.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
});
afterAll(async () => {
  await s?.close();
});

/** Sends a multipart body built by fetch's FormData. */
async function multipart(method: string, path: string, fields: Record<string, string | string[]>) {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) fd.append(k, item);
  const res = await fetch(`${s.api}${path}`, { method, headers: { 'PRIVATE-TOKEN': s.rootToken }, body: fd });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe('parameter sources', () => {
  it('reads POST/PUT arguments from the query string as python-gitlab sends them', async () => {
    const r = await s.request('PUT', `/users/${alice.id}`, { query: { bio: 'from the query', location: 'Lyon' } });
    expect(r.status).toBe(200);
    expect(r.body.bio).toBe('from the query');
    expect(r.body.location).toBe('Lyon');
  });

  it('reads a JSON body', async () => {
    const r = await s.request('PUT', `/users/${alice.id}`, { json: { bio: 'from json', can_create_group: false } });
    expect(r.status).toBe(200);
    expect(r.body.bio).toBe('from json');
    expect(r.body.can_create_group).toBe(false);
  });

  it('reads a form body', async () => {
    const r = await s.request('PUT', `/users/${alice.id}`, { form: { bio: 'from a form', can_create_group: 'true' } });
    expect(r.status).toBe(200);
    expect(r.body.bio).toBe('from a form');
    expect(r.body.can_create_group).toBe(true);
  });

  it('reads a multipart body, with name[] arrays', async () => {
    const r = await multipart('POST', `/users/${alice.id}/personal_access_tokens`, { name: 'multi', 'scopes[]': ['read_api', 'read_user'] });
    expect(r.status).toBe(201);
    expect(r.body.scopes).toEqual(['read_api', 'read_user']);
  });

  it('reads name[] arrays from a form body and the query string', async () => {
    const form = await s.request('POST', `/users/${alice.id}/personal_access_tokens`, {
      body: 'name=f&scopes[]=api&scopes[]=read_user',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(201);
    expect(form.body.scopes).toEqual(['api', 'read_user']);
    const query = await s.request('POST', `/users/${alice.id}/personal_access_tokens?name=q&scopes%5B%5D=read_api&scopes%5B%5D=sudo`);
    expect(query.status).toBe(201);
    expect(query.body.scopes).toEqual(['read_api', 'sudo']);
  });

  it('the body wins over the query string for the same name', async () => {
    const r = await s.request('PUT', `/users/${alice.id}?bio=query`, { json: { bio: 'body' } });
    expect(r.body.bio).toBe('body');
  });

  it('refuses a hash where a string is expected (name[key])', async () => {
    const r = await s.request('PUT', `/users/${alice.id}?bio[key]=x`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'bio is invalid' });
  });

  it('ignores unknown parameters', async () => {
    const r = await s.request('PUT', `/users/${alice.id}`, { json: { bio: 'known', no_such_param: 'x' } });
    expect(r.status).toBe(200);
    expect(r.body.no_such_param).toBeUndefined();
  });

  it('answers a malformed JSON body with a 400 JSON error, not a 500', async () => {
    const r = await s.request('PUT', `/users/${alice.id}`, { body: '{"bio": ', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(typeof (r.body.error ?? r.body.message)).toBe('string');
  });
});

describe('booleans', () => {
  for (const [value, expected] of [['true', true], ['false', false], ['True', true], ['False', false], ['1', true], ['0', false]] as const) {
    it(`accepts ${value} in a query string`, async () => {
      const r = await s.request('PUT', `/users/${alice.id}?external=${value}`);
      expect(r.status).toBe(200);
      expect(r.body.external).toBe(expected);
    });
  }

  it('accepts JSON true/false and 1/0', async () => {
    for (const [v, expected] of [[true, true], [false, false], [1, true], [0, false]] as const) {
      const r = await s.request('PUT', `/users/${alice.id}`, { json: { private_profile: v } });
      expect(r.status).toBe(200);
      expect(r.body.private_profile).toBe(expected);
    }
  });

  it('refuses JSON null with {"error":"x is invalid"} and changes nothing', async () => {
    await s.request('PUT', `/users/${alice.id}`, { json: { external: false } });
    const r = await s.request('PUT', `/users/${alice.id}`, { json: { external: null, bio: 'must not be written' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'external is invalid' });
    const after = await s.request('GET', `/users/${alice.id}`);
    expect(after.body.external).toBe(false);
    expect(after.body.bio).not.toBe('must not be written');
  });

  for (const bad of ['null', 'maybe', '2', '', 'truthy']) {
    it(`refuses "${bad}"`, async () => {
      const r = await s.request('GET', `/users?active=${bad}`);
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(r.body).toEqual({ error: 'active is invalid' });
    });
  }

  it('refuses arrays and objects as booleans', async () => {
    const arr = await s.request('PUT', `/users/${alice.id}`, { json: { external: [true] } });
    expect(arr.status).toBe(400);
    expect(arr.body).toEqual({ error: 'external is invalid' });
    const obj = await s.request('PUT', `/users/${alice.id}?external[a]=1`);
    expect(obj.status).toBe(400);
    expect(obj.body).toEqual({ error: 'external is invalid' });
  });
});

describe('timestamps', () => {
  it('reads %2B in an offset as +', async () => {
    // Every user was created just now; one hour ahead in +01:00 is "now" in UTC.
    const future = new Date(Date.now() + 3600_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const local = new Date(future.getTime() + 3600_000);
    const stamp = `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:00%2B01:00`;
    const after = await s.request('GET', `/users?created_after=${stamp}`);
    expect(after.status).toBe(200);
    expect(after.body).toEqual([]);
    const before = await s.request('GET', `/users?created_before=${stamp}`);
    expect(before.status).toBe(200);
    expect(before.body.length).toBeGreaterThanOrEqual(2);
  });

  it('reads 2020-01-01T00:00:00%2B01:00 as 2019-12-31T23:00:00Z', async () => {
    const r = await s.request('GET', '/personal_access_tokens?created_after=2020-01-01T00:00:00%2B01:00');
    expect(r.status).toBe(200);
    expect(r.body.length).toBeGreaterThan(0);
  });

  it('refuses a malformed timestamp with 400', async () => {
    const r = await s.request('GET', '/users?created_after=yesterday');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'created_after is invalid' });
  });
});

/** GETs each path and expects that status, exactly `application/json`, and that body. */
async function expectJsonAnswers(paths: string[], status: number, body: unknown): Promise<void> {
  for (const path of paths) {
    const r = await s.request('GET', path);
    expect(r.status, path).toBe(status);
    expect(r.headers.get('content-type'), path).toBe('application/json');
    expect(r.body, path).toEqual(body);
  }
}

describe('routing and status codes', () => {
  it('unknown routes give {"error":"404 Not Found"} with application/json', async () => {
    await expectJsonAnswers(['/api/v4/nothing-here', '/api/v4/users/1/nothing', '/api/v4/', '/api/v4'], 404, { error: '404 Not Found' });
    const post = await s.request('POST', '/nothing-here', { json: {} });
    expect(post.status).toBe(404);
    expect(post.body).toEqual({ error: '404 Not Found' });
  });

  it('an unencoded path in a single-segment parameter matches nothing (404)', async () => {
    const r = await s.request('GET', '/personal_access_tokens/self/extra');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: '404 Not Found' });
  });

  it('/api/v3 answers 410', async () => {
    const r = await s.request('GET', '/api/v3/projects');
    expect(r.status).toBe(410);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body).toEqual({ error: 'API V3 is no longer supported. Use API V4 instead.' });
  });

  it('an oversize query string answers 414 and a long one within the limit works', async () => {
    const long = await s.request('GET', `/users?search=${'a'.repeat(20_000)}`);
    expect(long.status).toBe(414);
    expect(long.headers.get('content-type')).toBe('application/json');
    expect(typeof long.body.message).toBe('string');
    const ok = await s.request('GET', `/users?search=${'a'.repeat(4000)}`);
    expect(ok.status).toBe(200);
  });

  it('default status codes: POST 201, GET 200, PUT 200, DELETE 204 without a body or JSON type', async () => {
    const created = await s.request('POST', '/users', { json: { username: 'status-u', email: 'status-u@example.com', name: 'S', password: 'password-1234' } });
    expect(created.status).toBe(201);
    expect((await s.request('GET', `/users/${created.body.id}`)).status).toBe(200);
    expect((await s.request('PUT', `/users/${created.body.id}`, { json: { bio: 'x' } })).status).toBe(200);
    const del = await s.request('DELETE', `/users/${created.body.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect(del.headers.get('content-type')).toBeNull();
  });

  it('sends the GitLab security headers on API responses', async () => {
    const r = await s.request('GET', '/user');
    expect(r.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('Content-Type is exactly application/json on JSON responses', () => {
  const cases: Array<[string, string, { token?: string | null; json?: unknown; body?: string; headers?: Record<string, string> }, number]> = [
    ['GET', '/user', {}, 200],
    ['GET', '/users', {}, 200],
    ['GET', '/user', { token: null }, 401],
    ['GET', '/user', { token: 'wrong' }, 401],
    ['POST', '/users', { json: {} }, 400],
    ['GET', '/users/999999', {}, 404],
    ['GET', '/users?per_page=20&page=2501', {}, 405],
    ['PUT', '/users/1', { body: 'not json', headers: { 'content-type': 'application/json' } }, 400],
    ['PUT', '/users/1', { body: '<x/>', headers: { 'content-type': 'application/xml' } }, 415],
  ];
  for (const [method, path, opts, status] of cases) {
    it(`${method} ${path} → ${status}`, async () => {
      const r = await s.request(method, path, opts);
      expect(r.status).toBe(status);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(() => JSON.parse(r.text)).not.toThrow();
    });
  }

  it('on the 409 of a taken username', async () => {
    const r = await s.request('POST', '/users', { json: { username: 'alice', email: 'other@example.com', name: 'A', password: 'password-1234' } });
    expect(r.status).toBe(409);
    expect(r.headers.get('content-type')).toBe('application/json');
  });
});

describe('GET /version', () => {
  it('answers in GitLab format with Labwright’s own version in an extra field', async () => {
    const r = await s.request('GET', '/version');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Number(r.body.version.split('.')[0])).toBeGreaterThanOrEqual(17);
    expect(typeof r.body.revision).toBe('string');
    expect(r.body.revision.length).toBeGreaterThan(0);
    expect(typeof r.body.labwright_version).toBe('string');
    expect(Object.keys(r.body).slice(0, 2)).toEqual(['version', 'revision']);
  });

  it('needs authentication, as GitLab', async () => {
    const r = await s.request('GET', '/version', { token: null });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ message: '401 Unauthorized' });
  });

  it('python-gitlab’s auth() sequence: GET /user, then GET /version', async () => {
    const me = await s.request('GET', '/user', { token: alice.token });
    expect(me.status).toBe(200);
    expect(me.body.web_url.startsWith(s.url + '/')).toBe(true);
    expect(me.body.web_url).toBe(`${s.url}/alice`);
    const v = await s.request('GET', '/version', { token: alice.token });
    expect(v.status).toBe(200);
    expect(v.body.version).toBeTruthy();
    expect(v.body.revision).toBeTruthy();
  });
});

describe('health endpoints', () => {
  it('/-/health, /-/liveness and /-/readiness answer', async () => {
    expect((await s.request('GET', '/-/health', { token: null })).status).toBe(200);
    expect((await s.request('GET', '/-/liveness', { token: null })).status).toBe(200);
    const ready = await s.request('GET', '/-/readiness', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ok');
  });
});

describe('robustness: bad input never gives a 500', () => {
  it('an empty JSON body is an empty hash, as in Rack', async () => {
    const bob = await s.createUser('empty-body');
    const r = await s.request('POST', `/users/${bob.id}/block`, { body: '', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(201);
    expect(r.body).toBe(true);
  });

  it('prototype poisoning in a JSON body is refused with 400', async () => {
    const r = await s.request('PUT', `/users/${alice.id}`, { body: '{"__proto__":{"is_admin":true}}', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
  });

  it('a deeply nested parameter name does not exhaust the stack', async () => {
    for (const key of ['a' + '[b]'.repeat(4000), 'a' + '[0]'.repeat(4000), 'a' + '[]'.repeat(6000)]) {
      const r = await s.request('GET', `/user?${key}=1`);
      expect(r.status).toBe(200);
    }
  });

  it('null bytes in any parameter answer 400 and change nothing (PostgreSQL cannot store them)', async () => {
    const cases: Array<[string, string, { json?: unknown }]> = [
      ['GET', '/users?search=%00', {}],
      ['GET', '/users?username=a%00b', {}],
      ['PUT', `/users/${alice.id}`, { json: { bio: 'x\u0000y' } }],
      ['POST', '/users', { json: { username: 'nul', email: 'nul@example.com', name: 'x\u0000', password: 'password-1234' } }],
      ['POST', `/users/${alice.id}/personal_access_tokens`, { json: { name: 'a\u0000', scopes: ['api'] } }],
      ['GET', '/personal_access_tokens?search=%00', {}],
      ['GET', '/user?sudo=%00', {}],
      ['GET', '/users/%00', {}],
    ];
    for (const [method, path, opts] of cases) {
      const r = await s.request(method, path, opts);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.headers.get('content-type')).toBe('application/json');
    }
    expect((await s.request('GET', `/users/${alice.id}`)).body.bio).not.toContain('\u0000');
    expect((await s.request('GET', '/users?username=nul')).body).toEqual([]);
  });

  it('a path that is not valid URL encoding answers a GitLab-shaped 400', async () => {
    await expectJsonAnswers(['/users/%FF', '/projects/1/merge_requests/%FF', '/projects/%zz', '/groups/a%E0%A4'], 400, {
      message: '400 Bad request - the path is not valid URL encoding',
    });
    const headers = (await s.request('GET', '/users/%FF')).headers;
    expect([headers.get('x-frame-options'), headers.get('x-content-type-options'), headers.get('cache-control')]).toEqual(['SAMEORIGIN', 'nosniff', 'max-age=0, private, must-revalidate']);
    // A web address (a project page, git over HTTP) gets GitLab's plain-text answer.
    const page = await s.request('GET', `${s.url}/root/%FF`, { token: null });
    expect(page.status).toBe(400);
    expect(page.text).toBe('Bad Request\n');
  });

  it('a malformed multipart body answers 400', async () => {
    for (const [type, body] of [
      ['multipart/form-data; boundary=xx', 'garbage'],
      ['multipart/form-data', 'garbage'],
      ['multipart/form-data; boundary=xx', '--xx\r\nContent-Disposition: form-data; name="a"\r\n\r\nval'],
    ]) {
      const r = await s.request('POST', '/users', { body, headers: { 'content-type': type } });
      expect(r.status, `${type} ${body}`).toBe(400);
      expect(r.headers.get('content-type')).toBe('application/json');
    }
  });

  it('wrong types for every users parameter answer 400, never 500', async () => {
    const fields = ['username', 'email', 'name', 'password', 'admin', 'bio', 'projects_limit', 'external', 'can_create_group', 'public_email', 'pronouns'];
    for (const f of fields) {
      for (const bad of [{ a: 1 }, [[1]], [{ a: 1 }]]) {
        const r = await s.request('PUT', `/users/${alice.id}`, { json: { [f]: bad } });
        expect(r.status, `${f}=${JSON.stringify(bad)}`).toBe(400);
      }
    }
  });

  it('ids past the 32-bit column range answer 4xx on every route, never a 500', async () => {
    const big = '2147483648';
    const cursor = Buffer.from(JSON.stringify({ name: 'a', id: big })).toString('base64url');
    const cases: Array<[string, string, unknown?]> = [
      ['GET', `/users/${big}`],
      ['PUT', `/users/${big}`, { bio: 'x' }],
      ['DELETE', `/users/${big}`],
      ['POST', `/users/${big}/block`],
      ['POST', `/users/${big}/personal_access_tokens`, { name: 'x', scopes: ['api'] }],
      ['GET', `/personal_access_tokens/${big}`],
      ['POST', `/personal_access_tokens/${big}/rotate`],
      ['GET', `/user?sudo=${big}`],
      ['GET', `/personal_access_tokens?user_id=${big}`],
      ['GET', `/users?pagination=keyset&order_by=id&sort=asc&id_after=${big}`],
      ['GET', `/users?pagination=keyset&order_by=name&sort=asc&cursor=${cursor}`],
    ];
    for (const [method, path, json] of cases) {
      const r = await s.request(method, path, json === undefined ? {} : { json });
      expect([400, 404], `${method} ${path}`).toContain(r.status);
    }
  });

  it('huge page numbers are fine', async () => {
    const r = await s.request('GET', '/personal_access_tokens?page=2147483647&per_page=100');
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    for (const page of ['2147483648', '9007199254740993']) {
      expect((await s.request('GET', `/personal_access_tokens?page=${page}`)).status, page).toBe(400);
    }
  });
});
