// Several independent SELECTs in one round trip on PostgreSQL (issue 7). On this kind of machine
// every statement sent to PostgreSQL costs a socket write and a wake-up that outweigh the query
// itself, so a request that loads six small things pays six times. On SQLite statements are
// function calls, and the queries simply run one after the other.
import { CompiledQuery, PostgresAdapter, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { BoundStatement } from './prepared.js';
import { declareRead } from './postgres-driver.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySelect = SelectQueryBuilder<any, any, any> | BoundStatement<any>;
type RowsOf<Q> = Q extends SelectQueryBuilder<any, any, infer O> ? O[] : Q extends BoundStatement<infer R> ? R[] : never; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Whether a Kysely instance (or transaction) talks to PostgreSQL. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Runs the queries (query builders, or prepared statements with their arguments: `p.with(...)`)
 * and returns their rows by key. On PostgreSQL they go as one statement, each
 * query a `json_agg` subquery: rows come back as JSON objects, which for our columns (integer and
 * text only, see migrations/helpers.ts) hold the same values the driver would give. ORDER BY
 * inside a query is not guaranteed to survive the aggregate: callers that need an order sort the
 * rows themselves.
 */
export async function selectBatch<Q extends Record<string, AnySelect>>(
  db: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  queries: Q,
): Promise<{ [K in keyof Q]: RowsOf<Q[K]> }> {
  const keys = Object.keys(queries);
  const out: Record<string, unknown[]> = {};
  if (keys.length < 2 || !isPostgres(db)) {
    for (const k of keys) {
      const q = queries[k];
      out[k] = 'run' in q ? await q.run(db) : await q.execute();
    }
    return out as { [K in keyof Q]: RowsOf<Q[K]> };
  }
  // Composed from each query's compiled SQL: prepared statements give theirs from their template,
  // so a batch of them costs no query building (10–35 µs per query otherwise).
  let text = 'select ';
  const parameters: unknown[] = [];
  for (let i = 0; i < keys.length; i++) {
    const q = queries[keys[i]];
    const c = 'run' in q ? q.compiled(db) : q.compile();
    if (i > 0) text += ', ';
    text += `(select coalesce(json_agg(t), '[]'::json) from (${renumbered(c.sql, parameters.length, c.parameters.length)}) as t) as "${keys[i].replace(/"/g, '""')}"`;
    for (const p of c.parameters) parameters.push(p);
  }
  const row = (await db.executeQuery(declareRead(CompiledQuery.raw(text, parameters)))).rows[0] as Record<string, unknown[]>;
  for (const k of keys) out[k] = row[k];
  return out as { [K in keyof Q]: RowsOf<Q[K]> };
}

/** SQL texts with their placeholders shifted, by offset and text (at most MAX_SHIFTED in all). */
const shifted = new Map<number, Map<string, string>>();
let shiftedCount = 0;
const MAX_SHIFTED = 5000;

/**
 * A PostgreSQL statement's `$n` placeholders moved up by `offset`. Batched queries write every value
 * as a placeholder (their only literals are numbers); each text is checked once, when first shifted,
 * to number exactly its parameters, so a `$` followed by digits anywhere else fails loudly instead
 * of shifting silently.
 */
function renumbered(text: string, offset: number, count: number): string {
  if (offset === 0) return text;
  let byText = shifted.get(offset);
  const known = byText?.get(text);
  if (known !== undefined) return known;
  let highest = 0;
  let seen = 0;
  const out = text.replace(/\$(\d+)/g, (_, n: string) => {
    highest = Math.max(highest, Number(n));
    seen++;
    return `$${Number(n) + offset}`;
  });
  if (highest !== count || seen !== count) throw new Error(`selectBatch: a query's text does not number its ${count} parameters as $1..$${count}`);
  if (shiftedCount >= MAX_SHIFTED) {
    shifted.clear();
    shiftedCount = 0;
    byText = undefined;
  }
  if (!byText) shifted.set(offset, (byText = new Map()));
  byText.set(text, out);
  shiftedCount++;
  return out;
}
