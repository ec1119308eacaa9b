// SQLite: the ids of a list page ordered newest first, found by walking the order's index instead of
// sorting every match. PostgreSQL chooses between the two itself, from its statistics.
import { CompiledQuery, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/database.js';

/** Indexes on (column, id), by table and column: a list ordered by `column desc, id desc` can walk them. */
const ORDER_INDEXES: Record<string, Record<string, string>> = {
  projects: { created_at: 'projects_created_at', updated_at: 'projects_updated_at', last_activity_at: 'projects_last_activity_at' },
  merge_requests: { created_at: 'merge_requests_created' },
};

/** Whether SQLite's own plan for a statement sorts its rows, by statement text. */
const sorting = new Map<string, boolean>();

/**
 * Whether SQLite's plan sorts every match (`USE TEMP B-TREE FOR ORDER BY`), asked once per statement
 * text. A list whose filter has an index that also gives the order (a project's MRs: project_id,
 * created_at, id) already reads only its page, and keeps its plan.
 */
async function planSorts(database: Database, compiled: CompiledQuery): Promise<boolean> {
  let sorts = sorting.get(compiled.sql);
  if (sorts === undefined) {
    const plan = await database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
    sorts = plan.rows.some((r) => r.detail === 'USE TEMP B-TREE FOR ORDER BY');
    if (sorting.size >= 1000) sorting.clear();
    sorting.set(compiled.sql, sorts);
  }
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
 * newest `4 ×` that many rows (at least 200, rounded up to a power of two), through a lower bound on the order column. A walk
 * that finds a full page there has the right page (every row it skipped is older than every row it
 * read); otherwise the caller sorts as before. Only statements that SQLite would sort are walked.
 */
export async function walkPageIds(
  database: Database,
  pageIds: SelectQueryBuilder<any, any, any>,
  page: { perPage: number; offset: number },
  countMatches: () => Promise<number | null>,
): Promise<unknown[] | null> {
  if (database.dialect !== 'sqlite' || page.offset + page.perPage >= MAX_WALKED_PAGE_END) return null;
  const compiled = pageIds.compile();
  const shape = /^select "(\w+)"\."id" from "(\w+)" where (.*) order by "(\w+)"\."(\w+)" desc, "(\w+)"\."id" desc limit \?( offset \?)?$/s.exec(compiled.sql);
  if (!shape) return null;
  const [, selected, table, where, orderTable, column, tieTable] = shape;
  if (selected !== table || orderTable !== table || tieTable !== table) return null;
  const index = ORDER_INDEXES[table]?.[column];
  if (!index || !(await planSorts(database, compiled))) return null;

  const matches = (await countMatches()) ?? 10_001;
  if (matches === 0) return null;
  const [{ n: maxId }] = (await database.db.executeQuery<{ n: number | null }>(CompiledQuery.raw(`select max(id) as n from "${table}"`))).rows;
  const wanted = page.offset + page.perPage + 1;
  // max(id) is at least the table's size: an overestimate only makes the walk look longer.
  const expected = (wanted * (maxId ?? 0)) / matches;
  if (expected >= matches) return null;
  // A power of two: few distinct statement texts to prepare.
  const bound = 2 ** Math.ceil(Math.log2(Math.max(4 * expected, 200)));
  const text =
    `select "${table}"."id" from "${table}" indexed by "${index}" where "${table}"."${column}" >= ` +
    `coalesce((select "${column}" from "${table}" indexed by "${index}" order by "${column}" desc, "id" desc limit 1 offset ${bound}), '') ` +
    `and (${where}) order by "${table}"."${column}" desc, "${table}"."id" desc limit ?${shape[7] ?? ''}`;
  const rows = (await database.db.executeQuery<{ id: unknown }>(CompiledQuery.raw(text, [...compiled.parameters]))).rows;
  return rows.length === page.perPage + 1 ? rows.map((r) => r.id) : null;
}
