// Group project lists ordered newest first: on SQLite a page of a large group is found by walking the
// created_at index (http/ordered-walk.ts), a small group's by sorting its matches. Either way every
// page must be the slice of the full order (created_at desc, id desc), ties included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let big: any;
let sub: any;
let other: any;
let tiny: any;
/** Project ids of each group's subtree in the list's order. */
const expected = new Map<number, number[]>();

beforeAll(async () => {
  s = await startServer();
  const group = async (path: string, parent_id?: number) => (await s.request('POST', '/groups', { json: { name: path, path, parent_id } })).body;
  big = await group('walk-big');
  sub = await group('walk-sub', big.id);
  other = await group('walk-other');
  tiny = await group('walk-tiny');
  const template = (await s.request('POST', '/projects', { json: { name: 'template', path: 'template', namespace_id: big.id } })).body;
  const db = s.app.lw.db as any;
  const row = await db.selectFrom('projects').selectAll().where('id', '=', template.id).executeTakeFirstOrThrow();
  const base = Date.parse('2020-01-01T00:00:00Z');
  // 420 more projects: the newest 40 and the oldest 40 in `walk-other`, 4 in `walk-tiny`, the rest
  // alternating between `walk-big` and its subgroup; created_at repeats in threes (ties on id).
  const rows = [];
  for (let i = 0; i < 420; i++) {
    const namespace_id = i < 40 || i >= 380 ? other.id : i % 100 === 50 ? tiny.id : i % 2 ? big.id : sub.id;
    const { id: _id, ...rest } = row;
    rows.push({ ...rest, namespace_id, name: `p${i}`, path: `p${i}`, created_at: new Date(base - Math.floor(i / 3) * 1000).toISOString() });
  }
  for (let i = 0; i < rows.length; i += 100) await db.insertInto('projects').values(rows.slice(i, i + 100)).execute();
  await s.settle();
  const all = await db.selectFrom('projects').select(['id', 'namespace_id', 'created_at']).execute();
  const order = (ids: Set<number>) =>
    all
      .filter((p: any) => ids.has(p.namespace_id))
      .sort((a: any, b: any) => (a.created_at === b.created_at ? b.id - a.id : a.created_at < b.created_at ? 1 : -1))
      .map((p: any) => p.id);
  expected.set(big.id, order(new Set([big.id, sub.id])));
  expected.set(sub.id, order(new Set([sub.id])));
  expected.set(other.id, order(new Set([other.id])));
  expected.set(tiny.id, order(new Set([tiny.id])));
});
afterAll(async () => {
  await s?.close();
});

async function page(groupId: number, perPage: number, n: number) {
  const r = await s.request('GET', `/groups/${groupId}/projects?include_subgroups=true&with_shared=false&per_page=${perPage}&page=${n}`);
  expect(r.status).toBe(200);
  return { ids: r.body.map((p: any) => p.id), total: Number(r.headers.get('x-total')) };
}

describe('group project pages, newest first', () => {
  it('are slices of the full order for a group holding most projects, on every page', async () => {
    const want = expected.get(big.id)!;
    expect(want.length).toBe(337);
    for (const [perPage, n] of [[20, 1], [20, 2], [20, 17], [100, 1], [100, 3], [100, 4], [7, 9]]) {
      const got = await page(big.id, perPage, n);
      expect(got.ids, `per_page ${perPage} page ${n}`).toEqual(want.slice((n - 1) * perPage, n * perPage));
      expect(got.total).toBe(want.length);
    }
  });

  it('are slices of the full order for groups whose projects are spread out or few', async () => {
    for (const g of [sub, other, tiny]) {
      const want = expected.get(g.id)!;
      for (const n of [1, 2]) {
        const got = await page(g.id, 20, n);
        expect(got.ids, `${g.path} page ${n}`).toEqual(want.slice((n - 1) * 20, n * 20));
      }
    }
    expect(expected.get(tiny.id)!.length).toBe(4);
    expect(expected.get(other.id)!.length).toBe(80);
  });

  it('are kept like any other response: the walk reads, it does not count as a write', async () => {
    const hits = () => s.app.lw.responses!.stats().hits;
    const first = await page(big.id, 20, 3);
    const before = hits();
    expect(await page(big.id, 20, 3)).toEqual(first);
    expect(hits()).toBe(before + 1);
  });

  it('show a project created since the last page first', async () => {
    const created = (await s.request('POST', '/projects', { json: { name: 'newest', path: 'newest', namespace_id: sub.id } })).body;
    const first = await page(big.id, 20, 1);
    expect(first.ids[0]).toBe(created.id);
    expect(first.ids.slice(1)).toEqual(expected.get(big.id)!.slice(0, 19));
    expect(first.total).toBe(338);
  });
});
