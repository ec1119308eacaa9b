// Audit events for membership changes, project shares and sign-ins (Premium), read back through
// GET /projects/:id/audit_events, /groups/:id/audit_events and /audit_events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, csrfFrom, PASSWORD } from '../oauth/helpers.js';

type U = { id: number; username: string; token: string };
let s: TestServer;
let alice: U;
let bob: U;
let carol: U;
let g: any;
let p: any;

async function ok(method: string, path: string, token: string, json?: Record<string, unknown>) {
  const r = await s.request(method, path, { token, json });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
}

async function attempt(login: string, password: string) {
  const agent = new Agent(s.url);
  const page = await agent.get('/users/sign_in');
  return agent.post('/users/sign_in', { authenticity_token: csrfFrom(page.text), login, password, redirect_to: '/' });
}

beforeAll(async () => {
  s = await startServer({ LABWRIGHT_PLAN: 'premium' });
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  carol = await s.createUser('carol');
  g = await ok('POST', '/groups', alice.token, { name: 'Audited', path: 'audited', visibility: 'private' });
  p = await ok('POST', '/projects', alice.token, { name: 'Audited P', path: 'audited-p', visibility: 'private' });
});
afterAll(async () => {
  await s?.close();
});

describe('membership changes', () => {
  it('project members: added, access changed, removed', async () => {
    await ok('POST', `/projects/${p.id}/members`, alice.token, { user_id: bob.id, access_level: 30 });
    await ok('PUT', `/projects/${p.id}/members/${bob.id}`, alice.token, { access_level: 40, expires_at: '2099-01-01' });
    await ok('DELETE', `/projects/${p.id}/members/${bob.id}`, alice.token);
    const r = await s.request('GET', `/projects/${p.id}/audit_events`, { token: alice.token });
    expect(r.status).toBe(200);
    const events = r.body.filter((e: any) => e.event_name.startsWith('member_'));
    expect(events.map((e: any) => e.event_name)).toEqual(['member_destroyed', 'member_updated', 'member_created']);
    for (const e of events) {
      expect(e).toMatchObject({ author_id: alice.id, entity_id: p.id, entity_type: 'Project' });
      expect(e.details).toMatchObject({ author_name: 'alice', target_id: bob.id, target_type: 'User', target_details: 'bob', entity_path: 'alice/audited-p' });
      expect(e.details.ip_address).toBeTruthy();
    }
    expect(events[2].details).toMatchObject({ add: 'user_access', as: 'Developer' });
    expect(events[1].details).toMatchObject({ change: 'access_level', from: 'Developer', to: 'Maintainer', expiry_from: null, expiry_to: '2099-01-01' });
    expect(events[0].details).toMatchObject({ remove: 'user_access', as: 'Maintainer' });
  });

  it('group members, and a member leaving on their own', async () => {
    await ok('POST', `/groups/${g.id}/members`, alice.token, { user_id: carol.id, access_level: 20 });
    await ok('PUT', `/groups/${g.id}/members/${carol.id}`, alice.token, { access_level: 10 });
    await ok('DELETE', `/groups/${g.id}/members/${carol.id}`, carol.token);
    const r = await s.request('GET', `/groups/${g.id}/audit_events`, { token: alice.token });
    expect(r.status).toBe(200);
    const events = r.body.filter((e: any) => e.event_name.startsWith('member_'));
    expect(events.map((e: any) => [e.event_name, e.author_id])).toEqual([
      ['member_destroyed', carol.id],
      ['member_updated', alice.id],
      ['member_created', alice.id],
    ]);
    expect(events[1].details).toMatchObject({ from: 'Reporter', to: 'Guest', target_details: 'carol', entity_path: 'audited' });
    const instance = await s.request('GET', `/audit_events?entity_type=Group&entity_id=${g.id}`);
    expect(instance.body.filter((e: any) => e.event_name.startsWith('member_')).length).toBe(3);
  });

  it('records nothing when a change is refused', async () => {
    const before = (await s.request('GET', `/projects/${p.id}/audit_events`, { token: alice.token })).body.length;
    expect((await s.request('POST', `/projects/${p.id}/members`, { token: alice.token, json: { user_id: 999999, access_level: 30 } })).status).toBe(404);
    expect((await s.request('PUT', `/projects/${p.id}/members/${carol.id}`, { token: alice.token, json: { access_level: 30 } })).status).toBe(404);
    expect((await s.request('DELETE', `/projects/${p.id}/members/${carol.id}`, { token: bob.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${p.id}/audit_events`, { token: alice.token })).body.length).toBe(before);
  });

  it('member events are not shown to non-members', async () => {
    expect((await s.request('GET', `/projects/${p.id}/audit_events`, { token: carol.token })).status).toBe(404);
    expect((await s.request('GET', `/groups/${g.id}/audit_events`, { token: bob.token })).status).toBe(404);
    expect((await s.request('GET', '/audit_events', { token: bob.token })).status).toBe(403);
  });
});

describe('project shares', () => {
  it('records link creation and removal on the project', async () => {
    const team = await ok('POST', '/groups', bob.token, { name: 'Team', path: 'team', visibility: 'public' });
    await ok('POST', `/projects/${p.id}/share`, alice.token, { group_id: team.id, group_access: 20 });
    await ok('DELETE', `/projects/${p.id}/share/${team.id}`, alice.token);
    const r = await s.request('GET', `/projects/${p.id}/audit_events`, { token: alice.token });
    const events = r.body.filter((e: any) => e.event_name.startsWith('project_group_link_'));
    expect(events.map((e: any) => e.event_name)).toEqual(['project_group_link_deleted', 'project_group_link_created']);
    expect(events[1].details).toMatchObject({ target_id: team.id, target_type: 'Group', target_details: 'team', group_access: 20 });
  });
});

describe('sign-ins', () => {
  it('records successful and failed sign-ins on the instance list', async () => {
    expect((await attempt('bob', PASSWORD)).status).toBe(303);
    expect((await attempt('bob', 'wrong-password')).status).toBe(401);
    expect((await attempt('nobody-here', 'wrong-password')).status).toBe(401);
    const mine = await s.request('GET', `/audit_events?entity_type=User&entity_id=${bob.id}`);
    expect(mine.status).toBe(200);
    const signIns = mine.body.filter((e: any) => ['user_authenticated', 'login_failed_with_standard_authentication'].includes(e.event_name));
    expect(signIns.map((e: any) => [e.event_name, e.author_id])).toEqual([
      ['login_failed_with_standard_authentication', -1],
      ['user_authenticated', bob.id],
    ]);
    expect(signIns[0].details).toMatchObject({ failed_login: 'STANDARD', target_details: 'bob', author_name: 'An unauthenticated user' });
    expect(signIns[1].details).toMatchObject({ with: 'standard', custom_message: 'Signed in with STANDARD authentication', target_id: bob.id });
    const unknown = await s.request('GET', '/audit_events?entity_type=User&entity_id=-1');
    expect(unknown.body.map((e: any) => e.details.target_details)).toContain('nobody-here');
    // The password is never recorded.
    const all = await s.request('GET', '/audit_events', { query: { per_page: '100' } });
    expect(JSON.stringify(all.body)).not.toContain('wrong-password');
    expect(JSON.stringify(all.body)).not.toContain(PASSWORD);
  });
});
