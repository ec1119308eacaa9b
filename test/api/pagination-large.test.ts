// Offset pagination above 10,000 records: X-Total, X-Total-Pages and the `last` link are left out,
// and the count stays bounded. Rows are created directly in the database in one INSERT … SELECT.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const EXTRA = 10_050;

beforeAll(async () => {
  s = await startServer();
  const now = new Date().toISOString();
  // One multi-row insert from a recursive sequence (valid on SQLite and PostgreSQL).
  await sql`
    insert into users (username, name, email, state, is_admin, user_type, bio, location, website_url, organization,
      job_title, can_create_group, projects_limit, external, private_profile, failed_attempts, created_at, updated_at)
    with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${sql.lit(EXTRA)})
    select 'bulk' || n, 'Bulk ' || n, 'bulk' || n || '@example.com', 'active', 0, 'human', '', '', '', '', '', 1, 100000, 0, 0, 0,
      ${now}, ${now}
    from seq`.execute(s.app.lw.db);
    await s.settle();
}, 120_000);
afterAll(async () => {
  await s?.close();
});

function rels(link: string | null): string[] {
  return [...(link ?? '').matchAll(/<([^>]+)>; rel="([^"]+)"/g)].map((m) => m[2]);
}

describe('more than 10,000 records', () => {
  it('leaves out X-Total, X-Total-Pages and rel="last", keeps the rest', async () => {
    const r = await s.request('GET', '/users?per_page=100&page=2');
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(100);
    expect(r.headers.get('x-total')).toBeNull();
    expect(r.headers.get('x-total-pages')).toBeNull();
    expect(r.headers.get('x-page')).toBe('2');
    expect(r.headers.get('x-per-page')).toBe('100');
    expect(r.headers.get('x-next-page')).toBe('3');
    expect(r.headers.get('x-prev-page')).toBe('1');
    expect(rels(r.headers.get('link'))).toEqual(['prev', 'next', 'first']);
  });

  it('the last page has no next link and still no totals', async () => {
    const last = Math.ceil((EXTRA + 1) / 100);
    const r = await s.request('GET', `/users?per_page=100&page=${last}`);
    expect(r.body.length).toBe((EXTRA + 1) % 100 || 100);
    expect(r.headers.get('x-next-page')).toBe('');
    expect(r.headers.get('x-total')).toBeNull();
    expect(rels(r.headers.get('link'))).toEqual(['prev', 'first']);
  });

  it('a filter that matches 10,000 or fewer gets its totals back', async () => {
    const r = await s.request('GET', '/users?search=Bulk 1005&per_page=5');
    expect(r.headers.get('x-total')).toBe('2'); // Bulk 1005 and Bulk 10050
    expect(rels(r.headers.get('link'))).toContain('last');
  });

  it('the maximum offset still applies: page 501 of 100 is 405', async () => {
    const r = await s.request('GET', '/users?per_page=100&page=501');
    expect(r.status).toBe(405);
    expect(r.body.error).toMatch(/^Offset pagination has a maximum allowed offset of 50000/);
  });

  it('keyset walks past 10,000 without totals', async () => {
    const r = await s.request('GET', '/users?pagination=keyset&order_by=id&sort=desc&per_page=100');
    expect(r.body).toHaveLength(100);
    expect(r.headers.get('x-total')).toBeNull();
    expect(r.body[0].id).toBe(EXTRA + 1);
  });
});
