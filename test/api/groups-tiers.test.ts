import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };
let top: any;
let sub: any;

beforeAll(async () => {
  s = await startServer({ LABWRIGHT_PLAN: 'ultimate' });
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  top = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Top', path: 'top', visibility: 'public' } })).body;
  sub = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Sub', path: 'sub', parent_id: top.id, visibility: 'public' } })).body;
});
afterAll(async () => {
  await s?.close();
});

describe('Ultimate settings and §8 limits', () => {
  it('accepts the limits at their maximum and shows them to Owners', async () => {
    const r = await s.request('PUT', `/groups/${top.id}`, {
      token: alice.token,
      json: {
        unique_project_download_limit: 10000,
        unique_project_download_limit_interval_in_seconds: 864000,
        unique_project_download_limit_allowlist: Array.from({ length: 100 }, (_, i) => `user${i}`),
        unique_project_download_limit_alertlist: Array.from({ length: 100 }, (_, i) => i + 1),
        auto_ban_user_on_excessive_projects_download: true,
        membership_lock: true,
        wiki_access_level: 'private',
        ip_restriction_ranges: '10.0.0.0/8,192.168.1.1',
        allowed_email_domains_list: 'example.com,example.org',
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.unique_project_download_limit).toBe(10000);
    expect(r.body.unique_project_download_limit_interval_in_seconds).toBe(864000);
    expect(r.body.unique_project_download_limit_allowlist.length).toBe(100);
    expect(r.body.unique_project_download_limit_alertlist.length).toBe(100);
    expect(r.body.auto_ban_user_on_excessive_projects_download).toBe(true);
    expect(r.body.membership_lock).toBe(true);
    expect(r.body.wiki_access_level).toBe('private');
    expect(r.body.ip_restriction_ranges).toBe('10.0.0.0/8,192.168.1.1');
    expect(r.body.marked_for_deletion_on).toBe(null);
    const outsider = await s.request('GET', `/groups/${top.id}`, { token: bob.token });
    expect(outsider.body.unique_project_download_limit).toBeUndefined();
    expect(outsider.body.runners_token).toBeUndefined();
    expect(outsider.body.membership_lock).toBe(true);
  });

  it('refuses values past the limits with model errors and changes nothing', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ unique_project_download_limit: 10001 }, 'unique_project_download_limit', 'must be less than or equal to 10000'],
      [{ unique_project_download_limit: -1 }, 'unique_project_download_limit', 'must be greater than or equal to 0'],
      [{ unique_project_download_limit_interval_in_seconds: 864001 }, 'unique_project_download_limit_interval_in_seconds', 'must be less than or equal to 864000'],
      [{ unique_project_download_limit_allowlist: Array.from({ length: 101 }, (_, i) => `u${i}`) }, 'unique_project_download_limit_allowlist', 'exceeds maximum length (100 usernames)'],
      [{ unique_project_download_limit_alertlist: Array.from({ length: 101 }, (_, i) => i + 1) }, 'unique_project_download_limit_alertlist', 'exceeds maximum length (100 user ids)'],
    ];
    for (const [body, attr, msg] of cases) {
      const r = await s.request('PUT', `/groups/${top.id}`, { token: alice.token, json: body });
      expect(r.status, attr).toBe(400);
      expect(r.body.message[attr]).toEqual([msg]);
    }
    const bad = await s.request('PUT', `/groups/${top.id}`, { token: alice.token, json: { ip_restriction_ranges: '300.1.1.1' } });
    expect(bad.status).toBe(400);
    const badWiki = await s.request('PUT', `/groups/${top.id}`, { token: alice.token, json: { wiki_access_level: 'public' } });
    expect(badWiki.status).toBe(400);
    const after = await s.request('GET', `/groups/${top.id}`, { token: alice.token });
    expect(after.body.unique_project_download_limit).toBe(10000);
  });

  it('refuses top-level-only settings on a subgroup', async () => {
    for (const body of [{ unique_project_download_limit: 1 }, { prevent_sharing_groups_outside_hierarchy: true }, { ai_settings_attributes: { web_search_enabled: false } }]) {
      const r = await s.request('PUT', `/groups/${sub.id}`, { token: alice.token, json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(r.body.message)).toMatch(/can only be changed for a top-level group/);
    }
    const r = await s.request('GET', `/groups/${sub.id}`, { token: alice.token });
    expect(r.body.prevent_sharing_groups_outside_hierarchy).toBeUndefined();
    expect(r.body.unique_project_download_limit).toBeUndefined();
  });

  it('shared_runners_minutes_limit is admin-only', async () => {
    const owner = await s.request('PUT', `/groups/${top.id}`, { token: alice.token, json: { shared_runners_minutes_limit: 100 } });
    expect(owner.body.shared_runners_minutes_limit).toBe(null);
    const admin = await s.request('PUT', `/groups/${top.id}`, { json: { shared_runners_minutes_limit: 100, extra_shared_runners_minutes_limit: 5 } });
    expect(admin.body.shared_runners_minutes_limit).toBe(100);
    expect(admin.body.extra_shared_runners_minutes_limit).toBe(5);
    expect(admin.body.repository_storage).toBe('default');
  });

  it('ai_settings_attributes maps integer levels to names and validates them', async () => {
    const r = await s.request('PUT', `/groups/${top.id}`, {
      token: alice.token,
      json: { ai_settings_attributes: { minimum_access_level_execute: 15, minimum_access_level_manage: 50, prompt_injection_protection_level: 'interrupt', web_search_enabled: false } },
    });
    expect(r.status).toBe(200);
    expect(r.body.ai_settings.minimum_access_level_execute).toBe('planner');
    expect(r.body.ai_settings.minimum_access_level_manage).toBe('owner');
    expect(r.body.ai_settings.prompt_injection_protection_level).toBe('interrupt');
    expect(r.body.ai_settings.web_search_enabled).toBe(false);
    expect(r.body.ai_settings.ai_usage_data_collection_enabled).toBeUndefined();
    for (const bad of [{ minimum_access_level_manage: 20 }, { minimum_access_level_execute: 25 }, { minimum_access_level_execute: 'guest' }, { prompt_injection_protection_level: 'paranoid' }]) {
      const b = await s.request('PUT', `/groups/${top.id}`, { token: alice.token, json: { ai_settings_attributes: bad } });
      expect(b.status, JSON.stringify(bad)).toBe(400);
    }
    // Rack-style form keys as python-gitlab sends them.
    const form = await s.request('PUT', `/groups/${top.id}`, { token: alice.token, form: { 'ai_settings_attributes[minimum_access_level_execute]': '40' } });
    expect(form.body.ai_settings.minimum_access_level_execute).toBe('maintainer');
  });

  it('lists with marked_for_deletion_on, repository_storage (admin), statistics (admin), custom attributes', async () => {
    const put = await s.request('PUT', `/groups/${top.id}/custom_attributes/tier`, { json: { value: 'gold' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ key: 'tier', value: 'gold' });
    expect((await s.request('PUT', `/groups/${top.id}/custom_attributes/tier`, { token: alice.token, json: { value: 'x' } })).status).toBe(403);
    const filtered = await s.request('GET', '/groups?custom_attributes[tier]=gold&with_custom_attributes=true');
    expect(filtered.body.map((g: any) => g.id)).toEqual([top.id]);
    expect(filtered.body[0].custom_attributes).toEqual([{ key: 'tier', value: 'gold' }]);
    const none = await s.request('GET', '/groups?custom_attributes[tier]=silver');
    expect(none.body).toEqual([]);
    const one = await s.request('GET', `/groups/${top.id}/custom_attributes/tier`);
    expect(one.body.value).toBe('gold');
    const stats = await s.request('GET', '/groups?statistics=true&top_level_only=true');
    expect(stats.body[0].statistics.repository_size).toBe(0);
    expect(Object.keys(stats.body[0].root_storage_statistics)).toContain('container_registry_size_is_estimated');
    const userStats = await s.request('GET', '/groups?statistics=true', { token: alice.token });
    expect(userStats.body[0].statistics).toBeUndefined();
    const storage = await s.request('GET', '/groups?repository_storage=other');
    expect(storage.body).toEqual([]);
    const marked = await s.request('GET', '/groups?marked_for_deletion_on=2024-01-01');
    expect(marked.body).toEqual([]);
    const active = await s.request('GET', '/groups?active=true&per_page=100');
    expect(active.body.length).toBe(2);
    const del = await s.request('DELETE', `/groups/${top.id}/custom_attributes/tier`);
    expect(del.status).toBe(204);
    expect((await s.request('GET', `/groups/${top.id}/custom_attributes/tier`)).status).toBe(404);
  });
});

describe('avatars', () => {
  const png = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082',
    'hex',
  );

  it('uploads through multipart PUT, serves it to anonymous callers of a public group, and removes it with a blank value', async () => {
    const fd = new FormData();
    fd.append('avatar', new Blob([png], { type: 'image/png' }), 'a.png');
    const res = await fetch(`${s.api}/groups/${top.id}`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': alice.token }, body: fd });
    const body: any = await res.json();
    expect(res.status).toBe(200);
    expect(body.avatar_url).toMatch(new RegExp(`/uploads/-/system/group/avatar/${top.id}/avatar.png$`));
    const file = await s.request('GET', `/groups/${top.id}/avatar`, { token: null });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    const direct = await fetch(body.avatar_url);
    expect(direct.status).toBe(200);
    const bad = new FormData();
    bad.append('avatar', new Blob([Buffer.from('not an image at all')], { type: 'image/png' }), 'x.png');
    const refused = await fetch(`${s.api}/groups/${top.id}`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': alice.token }, body: bad });
    expect(refused.status).toBe(400);
    const cleared = await s.request('PUT', `/groups/${top.id}`, { token: alice.token, form: { avatar: '' } });
    expect(cleared.body.avatar_url).toBe(null);
    expect((await s.request('GET', `/groups/${top.id}/avatar`, { token: null })).status).toBe(404);
  });
});

describe('ldap_sync', () => {
  it('answers 404 without an LDAP server', async () => {
    const r = await s.request('POST', `/groups/${top.id}/ldap_sync`, { token: alice.token });
    expect(r.status).toBe(404);
  });
});
