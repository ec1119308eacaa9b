import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let g: any;

beforeAll(async () => {
  s = await startServer({ LABWRIGHT_PLAN: 'ultimate', LABWRIGHT_OFFERING: 'hosted' });
  g = (await s.request('POST', '/groups', { json: { name: 'Fuzz', path: 'fuzz' } })).body;
});
afterAll(async () => {
  await s?.close();
});

const BAD_VALUES: unknown[] = [null, '', 'x'.repeat(100_000), -1, 1e300, true, [], ['a', 'b'], { a: 1 }, '__proto__', '\u0000', '%E0%A4%A'];

describe('bad input never gives a 5xx', () => {
  it('on group, namespace, key, token and audit routes', async () => {
    const fields = [
      'name', 'path', 'parent_id', 'visibility', 'description', 'group_id', 'group_access', 'expires_at', 'member_role_id', 'scopes',
      'access_level', 'title', 'key', 'usage_type', 'skip_groups', 'search', 'order_by', 'sort', 'min_access_level', 'custom_attributes',
      'ai_settings_attributes', 'default_branch_protection_defaults', 'unique_project_download_limit_allowlist', 'unique_project_download_limit_alertlist',
      'ip_restriction_ranges', 'avatar', 'value', 'created_after', 'state', 'revoked', 'page', 'per_page', 'cursor', 'marked_for_deletion_on',
    ];
    const routes: Array<[string, string]> = [
      ['POST', '/groups'],
      ['PUT', `/groups/${g.id}`],
      ['GET', '/groups'],
      ['GET', `/groups/${g.id}/subgroups`],
      ['GET', `/groups/${g.id}/projects`],
      ['POST', `/groups/${g.id}/share`],
      ['POST', `/groups/${g.id}/transfer`],
      ['GET', '/namespaces'],
      ['GET', '/namespaces/fuzz/exists'],
      ['POST', '/user/keys'],
      ['POST', `/groups/${g.id}/access_tokens`],
      ['GET', `/groups/${g.id}/manage/personal_access_tokens`],
      ['GET', '/audit_events'],
      ['PUT', `/groups/${g.id}/custom_attributes/k`],
    ];
    for (const [method, path] of routes) {
      for (const field of fields) {
        for (const value of BAD_VALUES) {
          const opts = method === 'GET' ? { query: { [field]: typeof value === 'string' ? value.slice(0, 1000) : JSON.stringify(value) } } : { json: { [field]: value } };
          const r = await s.request(method, path, opts as never);
          expect(r.status, `${method} ${path} ${field}=${JSON.stringify(value)?.slice(0, 40)}`).toBeLessThan(500);
        }
      }
    }
    // Still readable and consistent afterwards (some values above are valid names, so it may be renamed).
    expect((await s.request('GET', `/groups/${g.id}`)).status).toBe(200);
    expect(Object.prototype.hasOwnProperty.call({}, 'a')).toBe(false);
  }, 120_000);

  it('odd ids in paths', async () => {
    for (const id of ['0', '-1', '99999999999999999999', 'a%2Fb%2Fc', '%2E%2E', 'fuzz%2F..', 'x'.repeat(3000)]) {
      for (const p of [`/groups/${id}`, `/groups/${id}/projects`, `/namespaces/${id}`, `/groups/${id}/audit_events`, `/groups/${id}/access_tokens/1`, `/user/keys/${id}`]) {
        const r = await s.request('GET', p);
        expect(r.status, p).toBeLessThan(500);
      }
    }
  });
});
