// Statements of a fixed shape, built and compiled by the query builder once per dialect instead of
// on every call (issue 7). Building and compiling a small SELECT costs 10–20 µs here, as much as
// running it on SQLite; the hot single-row reads (a project, a merge request by iid) run this way.
import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import type { DB } from './types.js';
import { isPostgres } from './batch.js';

type Arg = string | number | null;

interface Template {
  compiled: CompiledQuery;
  /** Per parameter: the index of the argument it takes, or -1 for a constant kept from the build. */
  slots: number[];
}

const MARK = '\u0000labwright-arg:';

/**
 * Wraps a query whose shape does not depend on its arguments. `build` must use its arguments only
 * as values (no IN lists, no conditions that depend on them, nothing computed from them, such as
 * today's date: pass that as an argument) because it runs once, with placeholders. Returns a
 * function that runs the statement on a Kysely instance or a transaction and gives its rows.
 */
export function prepared<A extends Arg[], R>(build: (db: Kysely<DB>, ...args: A) => Compilable<R>): (db: Kysely<DB>, ...args: A) => Promise<R[]> {
  const templates = new Map<string, Template>();
  function template(db: Kysely<DB>, arity: number): Template {
    const key = isPostgres(db) ? 'postgres' : 'sqlite';
    let t = templates.get(key);
    if (!t) {
      const marks = Array.from({ length: arity }, (_, i) => `${MARK}${i}`) as unknown as A;
      const compiled = build(db, ...marks).compile();
      const slots = compiled.parameters.map((p) => {
        if (typeof p !== 'string' || !p.includes(MARK)) return -1;
        const index = p.startsWith(MARK) ? p.slice(MARK.length) : '';
        if (!/^\d+$/.test(index)) throw new Error(`prepared: an argument is used inside a computed value in ${compiled.sql}`);
        return Number(index);
      });
      t = { compiled, slots };
      templates.set(key, t);
    }
    return t;
  }
  return async (db, ...args) => {
    const { compiled, slots } = template(db, args.length);
    const parameters = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) parameters[i] = slots[i] === -1 ? compiled.parameters[i] : args[slots[i]];
    const query: CompiledQuery<R> = { query: compiled.query, queryId: compiled.queryId, sql: compiled.sql, parameters };
    return (await db.executeQuery(query)).rows;
  };
}
