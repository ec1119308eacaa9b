// Offset and keyset pagination (spec document 1 §4.2) as helpers every list uses.
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/database.js';
import { EpochCache } from '../db/epoch-cache.js';
import { walkPageIds } from './ordered-walk.js';
import { paramError } from './errors.js';
import { MAX_DB_INT, type ParamHash, type ParamValue } from './params.js';
import type { Ctx } from './route.js';

export const MAX_COUNT = 10_000;
export const MAX_PER_PAGE = 100;

/** Rack's to_query: keys sorted, nested forms `a[]=1`, `h[k]=v`; commas and spaces escaped. */
export function toQuery(params: ParamHash): string {
  const parts: string[] = [];
  const enc = (s: string) => encodeURIComponent(s);
  function add(prefix: string, v: ParamValue): void {
    if (v === undefined) return;
    if (Array.isArray(v)) {
      if (v.length === 0) return;
      for (const item of v) add(`${prefix}[]`, item);
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v).sort()) add(`${prefix}[${k}]`, v[k]);
    } else {
      parts.push(`${enc(prefix).replace(/%5B/g, '%5B').replace(/%5D/g, '%5D')}=${enc(v === null ? '' : String(v))}`);
    }
  }
  for (const k of Object.keys(params).sort()) add(k, params[k]);
  return parts.join('&');
}

function pathOf(c: Ctx): string {
  const url = c.req.url;
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** The query parameters of the request (not the path ones), for building links. */
function queryParams(c: Ctx): ParamHash {
  const q = c.req.query;
  const out: ParamHash = Object.create(null);
  if (q && typeof q === 'object') for (const [k, v] of Object.entries(q)) out[k] = v as ParamValue;
  return out;
}

function pageUrl(c: Ctx, overrides: ParamHash): string {
  const params = Object.assign({}, queryParams(c), { ...overrides });
  return `${c.base}${pathOf(c)}?${toQuery(params)}`;
}

export interface PageParams {
  page: number;
  perPage: number;
}

/** Reads page/per_page: per_page defaults to 20 and is clamped to 100 as Kaminari does. */
export function readPage(c: Ctx): PageParams {
  const page = c.params.int('page') ?? 1;
  let perPage = c.params.int('per_page') ?? 20;
  if (perPage > MAX_PER_PAGE) perPage = MAX_PER_PAGE;
  if (perPage < 1) perPage = 20;
  return { page: page < 1 ? 1 : page, perPage };
}

export interface OffsetOptions {
  /**
   * When the record type also has keyset pagination, GitLab caps the offset and points at keyset:
   * the type name for the 405 message (for example 'Project', 'Group', 'User').
   */
  keysetType?: string;
  /**
   * The table whose rows the query selects (`table.*`, no joins): the page's ids are found first
   * with the filters and the order (a narrow sort), then only those rows are read. Lists whose
   * filters cannot use the order's index (OR'ed subtrees, visibility) otherwise sort every
   * matching full row to return 20.
   */
  deferredJoin?: string;
}

/**
 * Offset pagination. `query` must already be filtered and ordered (with an id tie-breaker). The
 * count stops at 10,001 rows; above 10,000 the totals and the `last` link are left out.
 */
export async function paginateOffset<DB, TB extends keyof DB, O>(
  c: Ctx,
  query: SelectQueryBuilder<DB, TB, O>,
  opts: OffsetOptions = {},
): Promise<O[]> {
  // A list that reaches the offset helper has no keyset ordering for this request (spec §4.2).
  if (wantsKeyset(c)) keysetNotAvailable();
  const { page, perPage } = readPage(c);
  const max = c.app.config.maxOffset;
  if (opts.keysetType && max > 0 && page * perPage > max) {
    throw paramError(
      `Offset pagination has a maximum allowed offset of ${max} for requests that return objects of type ${opts.keysetType}. Remaining records can be retrieved using keyset pagination.`,
      405,
    );
  }
  const offset = (page - 1) * perPage;
  let rows: O[];
  if (opts.deferredJoin) {
    const qb = query as unknown as SelectQueryBuilder<any, any, any>;
    const id = `${opts.deferredJoin}.id`;
    const pageIds = pageWindow(qb.clearSelect().select(id), perPage + 1, offset);
    const walked = await walkPageIds(c.app.database, pageIds, { perPage, offset }, () => boundedCount(c.app.database, query));
    rows = (await qb.clearWhere().where(id, 'in', walked ?? pageIds).execute()) as O[];
  } else {
    rows = (await pageWindow(query, perPage + 1, offset).execute()) as O[];
  }
  const hasNext = rows.length > perPage;
  if (hasNext) rows.pop();
  let total: number | null;
  if (!hasNext && (rows.length > 0 || page === 1)) {
    // Known without counting; still left out above 10,000 (spec §4.2 rule 1), as on every other page.
    total = offset + rows.length > MAX_COUNT ? null : offset + rows.length;
  } else {
    total = await boundedCount(c.app.database, query);
  }
  setOffsetHeaders(c, page, perPage, total, hasNext);
  return rows;
}

/**
 * LIMIT and OFFSET of a page; a first page has no OFFSET. On PostgreSQL a statement with `OFFSET $n`
 * is planned again on every execution (see LiteralLimitCompiler in db/database.ts); without it the
 * first page, by far the most asked for, keeps one generic plan.
 */
export function pageWindow<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, limit: number, offset: number): SelectQueryBuilder<DB, TB, O> {
  const limited = query.limit(limit);
  return offset > 0 ? limited.offset(offset) : limited;
}

/** Recent counts by SQL and parameters. */
const counts = new EpochCache<number | null>(1000);

/**
 * Counts the rows of a query, stopping past MAX_COUNT; null when there are more. A count is reused
 * for up to a second while this process has written nothing to the database and the read cache
 * has not started over (EpochCache): X-Total of a busy list then costs one count per second
 * instead of one per request. Writes through this process are seen at once; writes by another
 * process as soon as the read cache sees them (with it off, within that second at most).
 */
export async function boundedCount<DB, TB extends keyof DB, O>(
  database: Database,
  query: SelectQueryBuilder<DB, TB, O>,
): Promise<number | null> {
  const inner = (query as unknown as SelectQueryBuilder<any, any, any>)
    .clearSelect()
    .clearOrderBy()
    .select(sql<number>`1`.as('one'))
    .limit(MAX_COUNT + 1);
  const counting = database.db.selectFrom(inner.as('bounded')).select((eb) => eb.fn.countAll<number>().as('n'));
  const compiled = counting.compile();
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  const hit = counts.get(database, key);
  if (hit !== undefined) return hit;
  const mark = EpochCache.mark(database);
  const row = (await database.db.executeQuery(compiled)).rows[0] as { n?: number | string } | undefined;
  const raw = Number(row?.n ?? 0);
  const n = raw > MAX_COUNT ? null : raw;
  counts.set(database, key, n, mark);
  return n;
}

/** Writes X-* headers and the Link header for an offset page. */
export function setOffsetHeaders(c: Ctx, page: number, perPage: number, total: number | null, hasNext: boolean): void {
  const totalPages = total === null ? null : Math.max(1, Math.ceil(total / perPage));
  const next = total === null ? hasNext : page < (totalPages ?? 0);
  c.header('X-Page', String(page));
  c.header('X-Per-Page', String(perPage));
  c.header('X-Next-Page', next ? String(page + 1) : '');
  c.header('X-Prev-Page', page > 1 ? String(page - 1) : '');
  if (total !== null) {
    c.header('X-Total', String(total));
    c.header('X-Total-Pages', String(totalPages));
  }
  const links: string[] = [];
  const pp = String(perPage);
  if (page > 1) links.push(`<${pageUrl(c, { page: String(page - 1), per_page: pp })}>; rel="prev"`);
  if (next) links.push(`<${pageUrl(c, { page: String(page + 1), per_page: pp })}>; rel="next"`);
  links.push(`<${pageUrl(c, { page: '1', per_page: pp })}>; rel="first"`);
  if (totalPages !== null) links.push(`<${pageUrl(c, { page: String(totalPages), per_page: pp })}>; rel="last"`);
  c.header('Link', links.join(', '));
}

/** Paginates an in-memory list (small, bounded collections such as branches). */
export function paginateArray<T>(c: Ctx, items: T[]): T[] {
  const { page, perPage } = readPage(c);
  const offset = (page - 1) * perPage;
  const slice = items.slice(offset, offset + perPage);
  const total = items.length;
  setOffsetHeaders(c, page, perPage, total > MAX_COUNT ? null : total, offset + perPage < total);
  return slice;
}

// ---------------------------------------------------------------------------------------------
// Keyset

export function wantsKeyset(c: Ctx): boolean {
  return c.params.raw.pagination === 'keyset';
}

export function keysetNotAvailable(): never {
  throw paramError('Keyset pagination is not yet available for this type of request', 405);
}

export interface KeysetColumn {
  /** Column reference as used in the query, e.g. 'users.name'. */
  column: string;
  /** Key in the cursor JSON and in the result row. */
  key: string;
}

export interface KeysetOptions<O> {
  /** Order columns, the last one unique (normally id). */
  order: KeysetColumn[];
  direction: 'asc' | 'desc';
  /** 'id' uses id_after/id_before links (single id column); 'cursor' uses an opaque cursor. */
  mode: 'id' | 'cursor';
  value(row: O, key: string): unknown;
}

function encodeCursor(data: Record<string, string>): string {
  // Ruby's urlsafe_encode64: the URL-safe alphabet, with '=' padding.
  return Buffer.from(JSON.stringify(data)).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

function decodeCursor(cursor: string): Record<string, string> {
  try {
    const data = JSON.parse(Buffer.from(cursor.replace(/=+$/, ''), 'base64url').toString('utf8'));
    if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('not an object');
    return data as Record<string, string>;
  } catch {
    throw paramError('cursor is invalid');
  }
}

/**
 * Keyset pagination: orders by the given columns, applies the position from id_after/id_before or
 * cursor, fetches one page, and sets `Link rel="next"` (only when the page is full, so the end of
 * the collection is an empty page without a Link) and X-NEXT-CURSOR.
 */
export async function paginateKeyset<DB, TB extends keyof DB, O>(
  c: Ctx,
  query: SelectQueryBuilder<DB, TB, O>,
  opts: KeysetOptions<O>,
): Promise<O[]> {
  const { perPage } = readPage(c);
  const cmp = opts.direction === 'asc' ? '>' : '<';
  let q = query as unknown as SelectQueryBuilder<any, any, any>;
  if (opts.mode === 'id') {
    const col = opts.order[0].column;
    const after = c.params.int('id_after');
    const before = c.params.int('id_before');
    if (after !== undefined) q = q.where(col, '>', after);
    if (before !== undefined) q = q.where(col, '<', before);
  } else if (c.params.has('cursor')) {
    const raw = c.params.string('cursor') ?? '';
    const data = decodeCursor(raw);
    const values = opts.order.map((o) => data[o.key]);
    if (values.some((v) => v === undefined)) throw paramError('cursor is invalid');
    // (a, b) > (x, y) expanded so both dialects use the indexes.
    q = q.where((eb: any) => {
      const ors = opts.order.map((o, i) => {
        const ands = opts.order.slice(0, i).map((p, j) => eb(p.column, '=', coerce(p.key, values[j])));
        ands.push(eb(o.column, cmp, coerce(o.key, values[i])));
        return eb.and(ands);
      });
      return eb.or(ors);
    });
  }
  for (const o of opts.order) q = q.orderBy(o.column, opts.direction);
  const rows = (await q.limit(perPage).execute()) as O[];
  c.header('X-Per-Page', String(perPage));
  if (rows.length === perPage && rows.length > 0) {
    const last = rows[rows.length - 1];
    let link: string;
    if (opts.mode === 'id') {
      const id = String(opts.value(last, opts.order[0].key));
      const key = opts.direction === 'asc' ? 'id_after' : 'id_before';
      const overrides: ParamHash = { [key]: id };
      link = pageUrl(c, Object.assign({}, withoutKeys(queryParams(c), ['id_after', 'id_before']), { ...overrides }));
      c.header('X-NEXT-CURSOR', id);
    } else {
      const data: Record<string, string> = {};
      for (const o of opts.order) data[o.key] = stringify(opts.value(last, o.key));
      data._kd = 'n';
      const cursor = encodeCursor(data);
      link = pageUrl(c, { cursor });
      c.header('X-NEXT-CURSOR', cursor);
    }
    c.header('Link', `<${link}>; rel="next"`);
  }
  return rows;
}

function withoutKeys(h: ParamHash, keys: string[]): ParamHash {
  const out: ParamHash = Object.create(null);
  for (const k of Object.keys(h)) if (!keys.includes(k)) out[k] = h[k];
  return out;
}

function stringify(v: unknown): string {
  return v === null || v === undefined ? '' : String(v);
}

/**
 * Cursor values are strings. Only id columns become numbers: a name such as '007' or '9' must stay
 * text, or SQLite compares it as a number and the walk repeats or skips rows. Both databases
 * convert a string compared with an integer column.
 */
function coerce(key: string, v: unknown): string | number {
  // A NUL cannot be compared with a PostgreSQL text column (a 500); no stored value holds one.
  if (typeof v !== 'string' || v.includes('\u0000')) throw paramError('cursor is invalid');
  const idKey = key === 'id' || key === 'iid' || key.endsWith('_id');
  if (!idKey) return v;
  // PostgreSQL fails (a 500) comparing an integer column with text or with a number past its range.
  if (!/^-?\d+$/.test(v) || v.length > 11 || Math.abs(Number(v)) > MAX_DB_INT) throw paramError('cursor is invalid');
  return Number(v);
}
