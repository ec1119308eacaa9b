// A newest-first page of a group with more matches than the count goes to (10,000): the count then
// says only "more", and the walk (http/ordered-walk.ts) starts from a window of the newest rows
// sized for the page and widens it until the page is full. Here the newest 2,000 projects belong
// to another group, so the first window of a deep enough page holds too few of this group's and
// must widen; every page must still be the slice of the full order (created_at desc, id desc, ties
// on id).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let wide: any;
let fresh: any;
const WIDE = 10_050;

beforeAll(async () => {
  s = await startServer();
  const group = async (path: string) => (await s.request('POST', '/groups', { json: { name: path, path } })).body;
  wide = await group('walk-wide');
  fresh = await group('walk-fresh');
  const template = (await s.request('POST', '/projects', { json: { name: 'template', path: 'template', namespace_id: wide.id } })).body;
  const db = s.app.lw.db as any;
  const row = await db.selectFrom('projects').selectAll().where('id', '=', template.id).executeTakeFirstOrThrow();
  const copied = Object.keys(row).filter((c) => !['id', 'name', 'path', 'namespace_id', 'created_at'].includes(c));
  const cols = copied.map((c) => `"${c}"`).join(', ');
  // Two creation times in turn (ties broken by id), then 2,000 newer projects in the other group.
  const insert = (count: number, prefix: string, namespaceId: number, createdAt: string) =>
    sql
      .raw(
        `with recursive s(i) as (select 1 union all select i + 1 from s where i < ${count}) ` +
          `insert into projects (name, path, namespace_id, created_at, ${cols}) ` +
          `select '${prefix}' || i, '${prefix}' || i, ${namespaceId}, ${createdAt}, ${copied.map((c) => `t."${c}"`).join(', ')} ` +
          `from s, projects t where t.id = ${template.id}`,
      )
      .execute(db);
  await insert(WIDE, 'w', wide.id, `case when i % 2 = 0 then '2019-01-01T00:00:00.000Z' else '2019-06-01T00:00:00.000Z' end`);
  await insert(2000, 'f', fresh.id, `'2021-01-01T00:00:00.000Z'`);
  await s.settle();
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe('newest-first pages of a group past the count bound', () => {
  it('are slices of the full order when the newest rows are another group’s', async () => {
    const db = s.app.lw.db as any;
    const want = (await db.selectFrom('projects').select('id').where('namespace_id', '=', wide.id).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(600).execute()).map((p: any) => p.id);
    // 100 × 5: 501 rows wanted, none among the newest 2,000 but 48 of 2,048, so the walk widens.
    for (const [perPage, n] of [[20, 1], [20, 3], [7, 5], [100, 5]]) {
      const r = await s.request('GET', `/groups/${wide.id}/projects?include_subgroups=true&with_shared=false&per_page=${perPage}&page=${n}`);
      expect(r.status).toBe(200);
      expect(r.body.map((p: any) => p.id), `per_page ${perPage} page ${n}`).toEqual(want.slice((n - 1) * perPage, n * perPage));
      // Over 10,000: no total (spec §4.2), but a next page.
      expect(r.headers.get('x-total')).toBeNull();
      expect(r.headers.get('x-next-page')).toBe(String(n + 1));
    }
  });
});
