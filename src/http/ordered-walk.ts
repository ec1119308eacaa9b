// The ids of a list page ordered newest first, found by walking the order's index over the newest
// rows instead of sorting every match. Used where the database's own plan would sort: SQLite
// without statistics, and PostgreSQL when its estimate of a filter's matches is far off (the
// projects of a group's subtree, estimated from a `traversal like` prefix: one row for 2,503).
import { CompiledQuery, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/database.js';
import { declareRead } from '../db/postgres-driver.js';

/** Indexes on (column, id), by table and column: a list ordered by `column desc, id desc` can walk them. */
const ORDER_INDEXES: Record<string, Record<string, string>> = {
  projects: { created_at: 'projects_created_at', updated_at: 'projects_updated_at', last_activity_at: 'projects_last_activity_at' },
  merge_requests: { created_at: 'merge_requests_created' },
};

/** Whether the database's own plan for a statement sorts every match, by statement text, and since when. */
const sorting = new Map<string, { sorts: boolean; at: number }>();

/** PostgreSQL's answer is asked again after this long (its statistics move; SQLite has none). */
const PLAN_RECHECK_MS = 10 * 60_000;

export interface PgPlanNode {
  'Node Type': string;
  Plans?: PgPlanNode[];
}

/** Whether a PostgreSQL plan sorts every match below its Limit (through a Gather Merge or Result). */
export function pgPlanSorts(top: PgPlanNode | undefined): boolean {
  if (top?.['Node Type'] !== 'Limit') return false;
  let node = top.Plans?.[0];
  while (node && (node['Node Type'] === 'Gather Merge' || node['Node Type'] === 'Result')) node = node.Plans?.[0];
  return node?.['Node Type'] === 'Sort';
}

/**
 * Whether the database's plan sorts every match, asked once per statement text (on PostgreSQL
 * again after PLAN_RECHECK_MS): on SQLite `USE TEMP B-TREE FOR ORDER BY`; on PostgreSQL a Sort
 * (top-N or whole) under the statement's Limit, for the parameters of the execution that asked. A
 * list whose filter has an index that also gives the order (a project's MRs: project_id,
 * created_at, id) already reads only its page, and keeps its plan. A plan that cannot be had
 * counts as not sorting (the list then runs as it is).
 */
async function planSorts(database: Database, compiled: CompiledQuery): Promise<boolean> {
  const known = sorting.get(compiled.sql);
  if (known && (database.dialect === 'sqlite' || performance.now() - known.at < PLAN_RECHECK_MS)) return known.sorts;
  let sorts = false;
  try {
    if (database.dialect === 'sqlite') {
      const plan = await database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
      sorts = plan.rows.some((r) => r.detail === 'USE TEMP B-TREE FOR ORDER BY');
    } else {
      const plan = await database.db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PgPlanNode }> }>(declareRead(CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters])));
      sorts = pgPlanSorts(plan.rows[0]?.['QUERY PLAN']?.[0]?.Plan);
    }
  } catch {
    /* not sorting: the list runs its own statement, whose error (if any) the caller then sees */
  }
  if (sorting.size >= 1000) sorting.clear();
  sorting.set(compiled.sql, { sorts, at: performance.now() });
  return sorts;
}

/** Pages further than this from the start are always sorted. */
const MAX_WALKED_PAGE_END = 2000;

/**
 * The ids of one page of `pageIds` (a `select "t"."id" from "t" where … order by "t"."c" desc,
 * "t"."id" desc limit ? [offset ?]` over one table), or null when the caller should run it as it is.
 *
 * Without statistics SQLite answers a filter it has an index for (the namespaces of a group's
 * subtree) by reading every match and sorting: 2,500 projects of a large group cost 0.9 ms for a
 * page of 20. Walking the order's index and filtering as it goes costs 0.09 ms when the matches
 * are a large part of the table, but walks the whole table for a small group. So the walk is
 * chosen by its expected length, `rows wanted × table size ÷ matches` (the matches are the list's
 * total, counted for X-Total anyway and reused for a second), and bounded: it only looks at the
 * newest `4 ×` that many rows (at least 200, rounded up to a power of two; when the count stopped at
 * its bound, first four times the page's own rows, then eight times more at each try): on SQLite through a
 * lower bound on the order column, on PostgreSQL as a derived table of those rows under the
 * table's own name (a LIMIT keeps the filter out of it, so the planner cannot turn it back into a
 * loop over the filter's matches). A walk that finds a full page there has the right page (every
 * row it skipped is older than every row it read); otherwise the caller sorts as before. Only
 * statements whose plan sorts are walked.
 *
 * On PostgreSQL, a 20-item page of the merge requests of a group of 2,503 projects holding 505,000
 * of them took 635 ms (every match read, then sorted), and 3.4 ms walked.
 */
export async function walkPageIds(
  database: Database,
  pageIds: SelectQueryBuilder<any, any, any>,
  page: { perPage: number; offset: number },
  countMatches: () => Promise<number | null>,
): Promise<unknown[] | null> {
  if (page.offset + page.perPage >= MAX_WALKED_PAGE_END) return null;
  const compiled = pageIds.compile();
  // The tail: SQLite `limit ? [offset ?]`; PostgreSQL `limit 21 [offset $n]` (LiteralLimitCompiler).
  const shape = /^select "(\w+)"\."id" from "(\w+)" where (.*) order by "(\w+)"\."(\w+)" desc, "(\w+)"\."id" desc (limit (?:\?|\d+)(?: offset (?:\?|\$\d+))?)$/s.exec(compiled.sql);
  if (!shape) return null;
  const [, selected, table, where, orderTable, column, tieTable, tail] = shape;
  if (selected !== table || orderTable !== table || tieTable !== table) return null;
  const index = ORDER_INDEXES[table]?.[column];
  if (!index || !(await planSorts(database, compiled))) return null;

  try {
    return await walk(database, compiled, { table, where, column, index, tail }, page, await countMatches());
  } catch {
    // The walk is only a faster way to the same ids: if it fails, the list runs its own statement.
    return null;
  }
}

async function walk(
  database: Database,
  compiled: CompiledQuery,
  { table, where, column, index, tail }: { table: string; where: string; column: string; index: string; tail: string },
  page: { perPage: number; offset: number },
  counted: number | null,
): Promise<unknown[] | null> {
  const matches = counted ?? 10_001;
  if (matches === 0) return null;
  const [{ n: maxId }] = (await database.db.executeQuery<{ n: number | null }>(declareRead(CompiledQuery.raw(`select max(id) as n from "${table}"`)))).rows;
  const wanted = page.offset + page.perPage + 1;
  // max(id) is at least the table's size: an overestimate only makes the walk look longer.
  const expected = (wanted * (maxId ?? 0)) / matches;
  if (expected >= matches) return null;
  // Powers of two: few distinct statement texts to prepare.
  const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(n));
  const last = pow2(Math.max(4 * expected, 200));
  // Past 10,000 matches the count says only that there are more (a group holding nearly all of
  // 505,000 merge requests looks like 2 % of them): start from the page's own size and widen.
  let bound = counted === null ? Math.min(last, pow2(Math.max(4 * wanted, 200))) : last;
  const order = `order by "${table}"."${column}" desc, "${table}"."id" desc`;
  for (;;) {
    const text =
      database.dialect === 'sqlite'
        ? `select "${table}"."id" from "${table}" indexed by "${index}" where "${table}"."${column}" >= ` +
          `coalesce((select "${column}" from "${table}" indexed by "${index}" order by "${column}" desc, "id" desc limit 1 offset ${bound}), '') ` +
          `and (${where}) ${order} ${tail}`
        : `select "${table}"."id" from (select * from "${table}" order by "${column}" desc, "id" desc limit ${bound}) as "${table}" ` +
          `where ${where} ${order} ${tail}`;
    const rows = (await database.db.executeQuery<{ id: unknown }>(declareRead(CompiledQuery.raw(text, [...compiled.parameters])))).rows;
    if (rows.length === page.perPage + 1) return rows.map((r) => r.id);
    if (bound >= last) return null;
    bound = Math.min(last, bound * 8);
  }
}
