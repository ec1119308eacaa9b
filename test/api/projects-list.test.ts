// GET /projects: visibility per caller, filters, ordering, offset and keyset pagination.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

type U = { id: number; username: string; token: string };
let s: TestServer;
let alice: U, bob: U;
const ids: Record<string, number> = {};

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  const specs: Array<[U, string, Record<string, unknown>]> = [
    [alice, 'alpha', { visibility: 'public', description: 'first one' }],
    [alice, 'beta', { visibility: 'internal' }],
    [alice, 'gamma', { visibility: 'private', merge_requests_enabled: false }],
    [bob, 'delta', { visibility: 'private' }],
    [bob, 'epsilon', { visibility: 'public' }],
  ];
  for (const [u, name, extra] of specs) {
    const r = await s.request('POST', '/projects', { token: u.token, json: { name, ...extra } });
    if (r.status !== 201) throw new Error(r.text);
    ids[name] = r.body.id;
  }
  await s.request('POST', `/projects/${ids.delta}/members`, { token: bob.token, json: { user_id: alice.id, access_level: 20 } });
  await s.request('POST', `/projects/${ids.epsilon}/archive`, { token: bob.token });
});
afterAll(async () => {
  await s?.close();
});

async function names(token: string | null, query: Record<string, string | number | boolean> = {}) {
  const r = await s.request('GET', '/projects', { token, query: { per_page: 100, ...query } });
  expect(r.status).toBe(200);
  return (r.body as any[]).map((p) => p.name);
}

describe('GET /projects', () => {
  it('shows each caller only what it may read, newest first by default', async () => {
    expect(await names(null)).toEqual(['epsilon', 'alpha']);
    expect(await names(bob.token)).toEqual(['epsilon', 'delta', 'beta', 'alpha']);
    expect(await names(alice.token)).toEqual(['epsilon', 'delta', 'gamma', 'beta', 'alpha']);
    expect(await names(s.rootToken)).toEqual(['epsilon', 'delta', 'gamma', 'beta', 'alpha']);
  });

  it('anonymous callers get the simple entity; signed-in callers the full one unless simple=true', async () => {
    const anon = await s.request('GET', '/projects', { token: null });
    expect(anon.body[0].permissions).toBeUndefined();
    expect(anon.body[0].namespace.kind).toBe('user');
    expect(anon.body[0].http_url_to_repo).toMatch(/\.git$/);
    const full = await s.request('GET', '/projects', { token: alice.token });
    const delta = full.body.find((p: any) => p.name === 'delta');
    expect(delta.permissions).toEqual({ project_access: { access_level: 20, notification_level: 3 }, group_access: null });
    expect(delta.owner.username).toBe('bob');
    const simple = await s.request('GET', '/projects', { token: alice.token, query: { simple: true } });
    expect(simple.body[0].permissions).toBeUndefined();
    expect(Object.keys(simple.body[0])).toContain('path_with_namespace');
  });

  it('filters: owned, membership, min_access_level, visibility, archived, search, starred, with_merge_requests_enabled', async () => {
    expect(await names(alice.token, { owned: true })).toEqual(['gamma', 'beta', 'alpha']);
    expect(await names(alice.token, { membership: true })).toEqual(['delta', 'gamma', 'beta', 'alpha']);
    expect(await names(alice.token, { min_access_level: 30 })).toEqual(['gamma', 'beta', 'alpha']);
    expect(await names(alice.token, { min_access_level: 20 })).toEqual(['delta', 'gamma', 'beta', 'alpha']);
    expect(await names(alice.token, { visibility: 'internal' })).toEqual(['beta']);
    expect(await names(alice.token, { archived: true })).toEqual(['epsilon']);
    expect(await names(alice.token, { archived: false })).toEqual(['delta', 'gamma', 'beta', 'alpha']);
    expect(await names(alice.token, { search: 'ALP' })).toEqual(['alpha']);
    expect(await names(alice.token, { search: 'first' })).toEqual(['alpha']);
    expect(await names(alice.token, { search: '%' })).toEqual([]);
    expect(await names(alice.token, { starred: true })).toEqual([]);
    expect(await names(alice.token, { with_merge_requests_enabled: true })).toEqual(['epsilon', 'delta', 'beta', 'alpha']);
    // Filters never widen what a caller may see.
    expect(await names(bob.token, { visibility: 'private' })).toEqual(['delta']);
  });

  it('orders by name, path, id, updated_at, last_activity_at in both directions', async () => {
    expect(await names(alice.token, { order_by: 'name', sort: 'asc' })).toEqual(['alpha', 'beta', 'delta', 'epsilon', 'gamma']);
    expect(await names(alice.token, { order_by: 'path', sort: 'desc' })).toEqual(['gamma', 'epsilon', 'delta', 'beta', 'alpha']);
    expect(await names(alice.token, { order_by: 'id', sort: 'asc' })).toEqual(['alpha', 'beta', 'gamma', 'delta', 'epsilon']);
    expect(await names(alice.token, { order_by: 'last_activity_at', sort: 'asc' })).toEqual(['alpha', 'beta', 'gamma', 'delta', 'epsilon']);
    expect((await names(alice.token, { order_by: 'updated_at' })).length).toBe(5);
  });

  it('offset pagination sets GitLab headers and links', async () => {
    const r = await s.request('GET', '/projects', { token: alice.token, query: { per_page: 2, page: 2, order_by: 'id', sort: 'asc' } });
    expect(r.body.map((p: any) => p.name)).toEqual(['gamma', 'delta']);
    expect(r.headers.get('x-total')).toBe('5');
    expect(r.headers.get('x-total-pages')).toBe('3');
    expect(r.headers.get('x-page')).toBe('2');
    expect(r.headers.get('x-next-page')).toBe('3');
    expect(r.headers.get('x-prev-page')).toBe('1');
    expect(r.headers.get('link')).toContain(`<${s.url}/api/v4/projects?order_by=id&page=3&per_page=2&sort=asc>; rel="next"`);
  });

  it('keyset pagination with order_by=id follows Link until the end', async () => {
    const seen: string[] = [];
    let url: string | null = `/projects?pagination=keyset&order_by=id&sort=asc&per_page=2`;
    let pages = 0;
    while (url && pages < 10) {
      const r = await s.request('GET', url, { token: alice.token });
      expect(r.status).toBe(200);
      seen.push(...r.body.map((p: any) => p.name));
      const link = r.headers.get('link');
      url = link ? /<([^>]+)>; rel="next"/.exec(link)![1] : null;
      pages++;
    }
    expect(seen).toEqual(['alpha', 'beta', 'gamma', 'delta', 'epsilon']);
    const desc = await s.request('GET', '/projects', { token: alice.token, query: { pagination: 'keyset', order_by: 'id', sort: 'desc', per_page: 2 } });
    expect(desc.body.map((p: any) => p.name)).toEqual(['epsilon', 'delta']);
    expect(desc.headers.get('link')).toContain(`id_before=${ids.delta}`);
    const notAvailable = await s.request('GET', '/projects', { token: alice.token, query: { pagination: 'keyset', order_by: 'name' } });
    expect(notAvailable.status).toBe(405);
    expect(notAvailable.body).toEqual({ error: 'Keyset pagination is not yet available for this type of request' });
  });

  it('refuses bad parameters with 400', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ visibility: 'secret' }, 'visibility does not have a valid value'],
      [{ order_by: 'stars' }, 'order_by does not have a valid value'],
      [{ sort: 'up' }, 'sort does not have a valid value'],
      [{ owned: 'maybe' }, 'owned is invalid'],
      [{ archived: '' }, 'archived is invalid'],
      [{ min_access_level: '35' }, 'min_access_level does not have a valid value'],
      [{ min_access_level: 'x' }, 'min_access_level is invalid'],
      [{ page: 'x' }, 'page is invalid'],
    ];
    for (const [query, error] of cases) {
      const r = await s.request('GET', '/projects', { token: alice.token, query });
      expect({ query, status: r.status, body: r.body }).toEqual({ query, status: 400, body: { error } });
    }
  });
});
