// Admin GET /users shows the enterprise fields (identities, provisioned_by_group_id,
// scim_identities) exactly as GET /users/:id does; other callers never see them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

describe('admin GET /users with enterprise fields', () => {
  let s: TestServer;
  let owner: { id: number; username: string; token: string };
  let g: any;
  let emp: any;
  let saml: any;

  beforeAll(async () => {
    s = await startServer({ LABWRIGHT_PLAN: 'premium', LABWRIGHT_OFFERING: 'hosted' });
    owner = await s.createUser('owner');
    g = (await s.request('POST', '/groups', { token: owner.token, json: { name: 'Corp', path: 'corp' } })).body;
    const base = { password: 'password-1234', provider: 'group_saml', group_id_for_saml: g.id };
    emp = (await s.request('POST', '/users', { json: { ...base, username: 'emp', email: 'emp@corp.example', name: 'Emp', extern_uid: 'emp-1', provisioned_by_group_id: g.id } })).body;
    saml = (await s.request('POST', '/users', { json: { ...base, username: 'samlonly', email: 's@corp.example', name: 'Saml', extern_uid: 's-1' } })).body;
    expect(emp.id).toBeGreaterThan(0);
    expect(saml.id).toBeGreaterThan(0);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('every user of the page carries the same fields as its single-user response', async () => {
    const list = await s.request('GET', '/users', { query: { per_page: '100' } });
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThanOrEqual(4);
    for (const u of list.body) {
      const one = await s.request('GET', `/users/${u.id}`);
      expect(u, u.username).toEqual(one.body);
    }
    const byName = new Map(list.body.map((u: any) => [u.username, u]));
    expect(byName.get('emp')).toMatchObject({
      identities: [{ provider: 'group_saml', extern_uid: 'emp-1', saml_provider_id: g.id }],
      provisioned_by_group_id: g.id,
    });
    expect(byName.get('samlonly')).toMatchObject({
      identities: [{ provider: 'group_saml', extern_uid: 's-1', saml_provider_id: g.id }],
      provisioned_by_group_id: null,
      scim_identities: [],
    });
    expect(byName.get('owner')).toMatchObject({ identities: [], provisioned_by_group_id: null, scim_identities: [] });
  });

  it('works with filters, keyset pagination and empty pages', async () => {
    const search = await s.request('GET', '/users', { query: { search: 'emp' } });
    expect(search.body.map((u: any) => u.username)).toEqual(['emp']);
    expect(search.body[0].identities).toHaveLength(1);
    const keyset = await s.request('GET', '/users', { query: { pagination: 'keyset', order_by: 'id', sort: 'asc', per_page: '2' } });
    expect(keyset.status).toBe(200);
    expect(keyset.body.every((u: any) => Array.isArray(u.identities))).toBe(true);
    const none = await s.request('GET', '/users', { query: { username: 'no-such-user' } });
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);
  });

  it('non-admins never see the fields', async () => {
    const r = await s.request('GET', '/users', { token: owner.token, query: { per_page: '100' } });
    expect(r.status).toBe(200);
    for (const u of r.body) {
      expect(u.identities).toBeUndefined();
      expect(u.provisioned_by_group_id).toBeUndefined();
      expect(u.scim_identities).toBeUndefined();
    }
    const anon = await s.request('GET', '/users', { token: null, query: { username: 'emp' } });
    expect(anon.body[0]?.identities).toBeUndefined();
  });
});
