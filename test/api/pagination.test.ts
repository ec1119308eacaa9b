// Spec document 1 §4.2 through the real app on /users: offset headers and the exact Link format,
// the maximum offset, and keyset pagination for every ordering /users allows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer, type TestResponse } from '../helpers/server.js';

let s: TestServer;
// Names chosen to catch text/number confusion and ties: '007' and '7' must not compare as numbers.
const NAMES = ['zed', '007', '7', 'Anna', 'anna', 'bob', 'bob', 'Carl', '10', '9'];

beforeAll(async () => {
  s = await startServer();
  for (let i = 0; i < NAMES.length; i++) {
    const r = await s.request('POST', '/users', {
      json: { username: `user${i}`, email: `user${i}@example.com`, name: NAMES[i], password: 'password-1234' },
    });
    expect(r.status).toBe(201);
  }
  // Touch a few rows so updated_at differs from created_at order.
  await s.request('PUT', '/users/3', { json: { bio: 'later' } });
  await s.request('PUT', '/users/2', { json: { bio: 'later' } });
});
afterAll(async () => {
  await s?.close();
});

const TOTAL = NAMES.length + 1; // plus root

function links(r: TestResponse): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of (r.headers.get('link') ?? '').matchAll(/<([^>]+)>; rel="([^"]+)"/g)) out[m[2]] = m[1];
  return out;
}

describe('offset pagination', () => {
  it('sends every X-* header and the Link header in the exact format and order', async () => {
    const r = await s.request('GET', '/users?per_page=3&page=2&order_by=id&sort=asc&foo=a,b');
    expect(r.status).toBe(200);
    expect(r.body.map((u: { id: number }) => u.id)).toEqual([4, 5, 6]);
    expect(r.headers.get('x-page')).toBe('2');
    expect(r.headers.get('x-per-page')).toBe('3');
    expect(r.headers.get('x-next-page')).toBe('3');
    expect(r.headers.get('x-prev-page')).toBe('1');
    expect(r.headers.get('x-total')).toBe(String(TOTAL));
    expect(r.headers.get('x-total-pages')).toBe(String(Math.ceil(TOTAL / 3)));
    const url = (page: number) => `${s.api}/users?foo=a%2Cb&order_by=id&page=${page}&per_page=3&sort=asc`;
    expect(r.headers.get('link')).toBe(
      `<${url(1)}>; rel="prev", <${url(3)}>; rel="next", <${url(1)}>; rel="first", <${url(Math.ceil(TOTAL / 3))}>; rel="last"`,
    );
  });

  it('first page: no prev, X-Prev-Page present and empty; last page: no next, X-Next-Page empty', async () => {
    const first = await s.request('GET', '/users?per_page=5');
    expect(first.headers.get('x-prev-page')).toBe('');
    expect(Object.keys(links(first))).toEqual(['next', 'first', 'last']);
    const last = await s.request('GET', '/users?per_page=5&page=3');
    expect(last.headers.get('x-next-page')).toBe('');
    expect(Object.keys(links(last))).toEqual(['prev', 'first', 'last']);
    expect(last.body).toHaveLength(TOTAL - 10);
  });

  it('a page past the end is empty with the totals still right', async () => {
    const r = await s.request('GET', '/users?per_page=5&page=9');
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    expect(r.headers.get('x-total')).toBe(String(TOTAL));
    expect(r.headers.get('x-total-pages')).toBe('3');
    expect(r.headers.get('x-next-page')).toBe('');
  });

  it('an empty list has X-Total 0, X-Total-Pages 1, first and last links', async () => {
    const r = await s.request('GET', '/users?username=nobody');
    expect(r.body).toEqual([]);
    expect(r.headers.get('x-total')).toBe('0');
    expect(r.headers.get('x-total-pages')).toBe('1');
    expect(Object.keys(links(r))).toEqual(['first', 'last']);
  });

  it('per_page defaults to 20 and is clamped to 100', async () => {
    expect((await s.request('GET', '/users')).headers.get('x-per-page')).toBe('20');
    expect((await s.request('GET', '/users?per_page=500')).headers.get('x-per-page')).toBe('100');
  });

  it('refuses non-integer page and per_page with 400', async () => {
    for (const q of ['page=abc', 'per_page=1.5', 'page[]=1']) {
      const r = await s.request('GET', `/users?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error).toMatch(/^(page|per_page) is invalid$/);
    }
  });

  it('links use the configured external URL when set', async () => {
    const ext = await startServer({ LABWRIGHT_EXTERNAL_URL: 'https://forge.example.com/' });
    try {
      const r = await ext.request('GET', '/users?per_page=1');
      expect(links(r).first).toBe('https://forge.example.com/api/v4/users?page=1&per_page=1');
    } finally {
      await ext.close();
    }
  });

  it('the maximum offset on /users answers 405 pointing at keyset', async () => {
    const r = await s.request('GET', '/users?page=501&per_page=100');
    expect(r.status).toBe(405);
    expect(r.body).toEqual({
      error: 'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type User. Remaining records can be retrieved using keyset pagination.',
    });
    expect((await s.request('GET', '/users?page=500&per_page=100')).status).toBe(200);
  });

  it('lists without keyset refuse pagination=keyset with 405', async () => {
    const r = await s.request('GET', '/personal_access_tokens?pagination=keyset&order_by=id&sort=asc');
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ error: 'Keyset pagination is not yet available for this type of request' });
  });
});

/** Follows Link rel="next" from the first URL to the end; returns the ids in order and the responses. */
async function walk(first: string): Promise<{ ids: number[]; pages: TestResponse[] }> {
  const ids: number[] = [];
  const pages: TestResponse[] = [];
  let next: string | undefined = first;
  for (let guard = 0; next && guard < 50; guard++) {
    const r = await s.request('GET', next);
    expect(r.status, next).toBe(200);
    pages.push(r);
    ids.push(...r.body.map((u: { id: number }) => u.id));
    next = links(r).next;
  }
  return { ids, pages };
}

/** The expected order, computed from the full list the same way the database should. */
async function expectedOrder(orderBy: string, sort: 'asc' | 'desc'): Promise<number[]> {
  const rows = await s.app.lw.db.selectFrom('users').select(['id', 'name', 'username', 'created_at', 'updated_at']).execute();
  const cmp = (a: Record<string, unknown>, b: Record<string, unknown>) => {
    const x = a[orderBy] as string | number;
    const y = b[orderBy] as string | number;
    const primary = typeof x === 'number' ? x - (y as number) : x < y ? -1 : x > y ? 1 : 0;
    return primary !== 0 ? primary : (a.id as number) - (b.id as number);
  };
  const sorted = rows.sort(cmp).map((r) => r.id);
  return sort === 'asc' ? sorted : sorted.reverse();
}

describe('keyset pagination on /users', () => {
  for (const orderBy of ['id', 'name', 'username', 'created_at', 'updated_at']) {
    for (const sort of ['asc', 'desc'] as const) {
      it(`order_by=${orderBy} sort=${sort} walks every user once, in order`, async () => {
        const { ids, pages } = await walk(`/users?pagination=keyset&per_page=3&order_by=${orderBy}&sort=${sort}`);
        const want = await expectedOrder(orderBy, sort);
        // Byte order for text columns: the database must compare names as text, never as numbers.
        if (orderBy !== 'name') expect(ids).toEqual(want);
        else expect([...ids].sort()).toEqual([...want].sort());
        expect(new Set(ids).size).toBe(TOTAL);
        for (const p of pages) {
          expect(p.headers.get('x-total')).toBeNull();
          expect(p.headers.get('x-total-pages')).toBeNull();
          expect(p.headers.get('x-page')).toBeNull();
        }
        const withLink = pages.filter((p) => p.headers.get('link'));
        for (const p of withLink) {
          const next = links(p).next;
          expect(p.headers.get('link')).toBe(`<${next}>; rel="next"`);
          expect(p.headers.get('x-next-cursor')).toBeTruthy();
          expect(next.startsWith(`${s.api}/users?`)).toBe(true);
          const q = new URL(next).searchParams;
          expect(q.get('order_by')).toBe(orderBy);
          expect(q.get('sort')).toBe(sort);
          expect(q.get('pagination')).toBe('keyset');
          expect(q.get('per_page')).toBe('3');
          if (orderBy === 'id') expect(q.get(sort === 'asc' ? 'id_after' : 'id_before')).toBe(p.headers.get('x-next-cursor'));
          else expect(q.get('cursor')).toBe(p.headers.get('x-next-cursor'));
        }
        const last = pages[pages.length - 1];
        expect(last.headers.get('link')).toBeNull();
      });
    }
  }

  it('names are ordered as text by the database (ties broken by id)', async () => {
    const { ids } = await walk('/users?pagination=keyset&per_page=2&order_by=name&sort=asc');
    const { body } = await s.request('GET', '/users?order_by=name&sort=asc&per_page=100');
    expect(ids).toEqual(body.map((u: { id: number }) => u.id));
  });

  it('the end of the collection is an empty array without a Link', async () => {
    // 11 users, per_page 11: the first page is full, so it links to a page that is empty.
    const first = await s.request('GET', `/users?pagination=keyset&per_page=${TOTAL}&order_by=id&sort=asc`);
    expect(first.body).toHaveLength(TOTAL);
    const next = links(first).next;
    expect(next).toBeTruthy();
    const end = await s.request('GET', next);
    expect(end.status).toBe(200);
    expect(end.body).toEqual([]);
    expect(end.headers.get('link')).toBeNull();
    const cursorFirst = await s.request('GET', `/users?pagination=keyset&per_page=${TOTAL}&order_by=name&sort=desc`);
    const cursorEnd = await s.request('GET', links(cursorFirst).next);
    expect(cursorEnd.body).toEqual([]);
    expect(cursorEnd.headers.get('link')).toBeNull();
  });

  it('the cursor is urlsafe base64 of JSON with string values and _kd', async () => {
    const r = await s.request('GET', '/users?pagination=keyset&per_page=2&order_by=username&sort=asc');
    const cursor = r.headers.get('x-next-cursor')!;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+=*$/);
    const data = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    expect(data).toEqual({ username: r.body[1].username, id: String(r.body[1].id), _kd: 'n' });
  });

  it('keyset is not capped by the maximum offset', async () => {
    const r = await s.request('GET', '/users?pagination=keyset&per_page=100&page=9999&order_by=id&sort=asc');
    expect(r.status).toBe(200);
  });

  it('refuses a malformed cursor with 400, not 500', async () => {
    for (const cursor of ['not-base64!', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"id":"1"}').toString('base64url'), Buffer.from('{"name":{"a":1},"id":"1"}').toString('base64url'), Buffer.from('{"name":"a\\u0000","id":"1"}').toString('base64url')]) {
      const r = await s.request('GET', `/users?pagination=keyset&order_by=name&sort=asc&cursor=${encodeURIComponent(cursor)}`);
      expect(r.status, cursor).toBe(400);
      expect(r.body).toEqual({ error: 'cursor is invalid' });
    }
  });

  it('refuses a bad order_by or sort with 400', async () => {
    expect((await s.request('GET', '/users?pagination=keyset&order_by=email&sort=asc')).body).toEqual({ error: 'order_by does not have a valid value' });
    expect((await s.request('GET', '/users?pagination=keyset&order_by=id&sort=up')).body).toEqual({ error: 'sort does not have a valid value' });
  });

  it('works for anonymous callers too', async () => {
    const r = await s.request('GET', '/users?pagination=keyset&per_page=2&order_by=id&sort=asc', { token: null });
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(2);
    expect(links(r).next).toContain('id_after=');
  });
});
