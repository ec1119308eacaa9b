import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

describe('audit events on Premium', () => {
  let s: TestServer;
  let alice: { id: number; username: string; token: string };
  let bob: { id: number; username: string; token: string };
  let g: any;
  beforeAll(async () => {
    s = await startServer({ LABWRIGHT_PLAN: 'premium' });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    g = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Audited', path: 'audited', visibility: 'public' } })).body;
    await s.request('PUT', `/groups/${g.id}`, { token: alice.token, json: { description: 'changed' } });
    const other = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Other', path: 'other' } })).body;
    await s.request('POST', `/groups/${g.id}/share`, { token: alice.token, json: { group_id: other.id, group_access: 20 } });
    await s.request('POST', `/groups/${other.id}/transfer`, { token: alice.token, json: { group_id: g.id } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('records group creation, settings changes, shares and transfers', async () => {
    const r = await s.request('GET', `/groups/${g.id}/audit_events`, { token: alice.token });
    expect(r.status).toBe(200);
    const names = r.body.map((e: any) => e.event_name);
    expect(names).toEqual(['group_share_with_group_link_created', 'group_updated', 'group_created']);
    expect(Object.keys(r.body[0])).toEqual(['id', 'author_id', 'entity_id', 'entity_type', 'event_name', 'details', 'created_at']);
    expect(r.body[1].details.changes).toEqual(['description']);
    const all = await s.request('GET', '/audit_events?entity_type=Group');
    expect(all.body.map((e: any) => e.event_name)).toContain('group_transferred');
  });

  it('records token creation, rotation and revocation', async () => {
    const created = await s.request('POST', '/user/personal_access_tokens', { token: bob.token, json: { name: 'rot', scopes: ['self_rotate'] } });
    expect(created.status).toBe(201);
    const rotated = await s.request('POST', `/personal_access_tokens/${created.body.id}/rotate`, { token: bob.token });
    expect(rotated.status).toBe(200);
    await s.request('DELETE', `/personal_access_tokens/${rotated.body.id}`, { token: bob.token });
    const r = await s.request('GET', `/audit_events?entity_type=User&entity_id=${bob.id}`);
    const names = r.body.map((e: any) => e.event_name);
    expect(names.slice(0, 3)).toEqual(['personal_access_token_revoked', 'personal_access_token_rotated', 'personal_access_token_created']);
    expect(JSON.stringify(r.body)).not.toContain(rotated.body.token);
  });

  it('pages by keyset with order_by=id sort=desc only, and by offset', async () => {
    const first = await s.request('GET', '/audit_events?pagination=keyset&per_page=2&order_by=id&sort=desc');
    expect(first.status).toBe(200);
    expect(first.body.length).toBe(2);
    expect(first.body[0].id).toBeGreaterThan(first.body[1].id);
    const link = first.headers.get('link')!;
    expect(link).toMatch(/id_before=/);
    const next = await s.request('GET', link.slice(1, link.indexOf('>')));
    expect(next.body[0].id).toBeLessThan(first.body[1].id);
    const asc = await s.request('GET', '/audit_events?pagination=keyset&sort=asc');
    expect(asc.status).toBe(405);
    const offset = await s.request('GET', '/audit_events?per_page=1&page=2');
    expect(offset.headers.get('x-page')).toBe('2');
    const after = await s.request('GET', '/audit_events?created_after=2999-01-01T00:00:00Z');
    expect(after.body).toEqual([]);
  });

  it('records project access tokens under the project; Maintainers read them', async () => {
    const p = await s.request('POST', '/projects', { token: alice.token, json: { name: 'Tracked', path: 'tracked', namespace_id: g.id } });
    expect(p.status).toBe(201);
    const t = await s.request('POST', `/projects/${p.body.id}/access_tokens`, { token: alice.token, json: { name: 'ci', scopes: ['api'] } });
    expect(t.status).toBe(201);
    const r = await s.request('GET', `/projects/${p.body.id}/audit_events`, { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body.map((e: any) => e.event_name)).toEqual(['project_access_token_created']);
    expect(r.body[0].entity_type).toBe('Project');
    expect((await s.request('GET', `/projects/${p.body.id}/audit_events`, { token: bob.token })).status).toBe(404);
  });

  it('needs admin for the instance list, Owner for the group list', async () => {
    expect((await s.request('GET', '/audit_events', { token: alice.token })).status).toBe(403);
    expect((await s.request('GET', `/groups/${g.id}/audit_events`, { token: bob.token })).status).toBe(403);
    expect((await s.request('GET', `/groups/${g.id}/audit_events`, { token: null })).status).toBe(401);
    const one = (await s.request('GET', `/groups/${g.id}/audit_events`, { token: alice.token })).body[0];
    const single = await s.request('GET', `/groups/${g.id}/audit_events/${one.id}`, { token: alice.token });
    expect(single.body.id).toBe(one.id);
    expect((await s.request('GET', `/audit_events/${one.id}`)).body.id).toBe(one.id);
    expect((await s.request('GET', '/audit_events/999999')).status).toBe(404);
  });
});

describe('audit events on Free', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => {
    await s?.close();
  });
  it('the API does not exist (404), as on GitLab Free', async () => {
    const r = await s.request('GET', '/audit_events');
    expect(r.status).toBe(404);
  });
});
