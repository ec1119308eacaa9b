// Statements of a fixed shape, built and compiled by the query builder once per dialect (and per
// length of their list arguments) instead of on every call (issue 7). Building and compiling a
// small SELECT costs 10–35 µs here, as much as or more than running it on SQLite; the hot reads
// (a project, a merge request by iid, the caller's memberships) run this way.
import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import type { DB } from './types.js';
import { isPostgres } from './batch.js';
import { readDirect } from './database.js';

type Scalar = string | number | null;
type Arg = Scalar | readonly number[] | readonly string[];

interface Template {
  compiled: CompiledQuery;
  /** Per parameter: [argument, element] it takes (element -1 for a scalar), or null for a constant of the build. */
  slots: Array<[number, number] | null>;
}

const MARK = '\u0000labwright-arg:';
/** Templates kept per statement (one per dialect and list length); beyond, calls build anew. */
const MAX_TEMPLATES = 64;

function slotOf(p: unknown, sql: string): [number, number] | null {
  if (typeof p !== 'string' || !p.includes(MARK)) return null;
  const m = p.startsWith(MARK) ? /^(\d+)(?:\.(\d+))?$/.exec(p.slice(MARK.length)) : null;
  if (!m) throw new Error(`prepared: an argument is used inside a computed value in ${sql}`);
  return [Number(m[1]), m[2] === undefined ? -1 : Number(m[2])];
}

/**
 * Wraps a query whose shape depends on its arguments only through the lengths of its list
 * arguments (used as `in` lists). `build` must use its arguments only as values: no conditions
 * chosen by them, nothing computed from them (such as today's date: pass that as an argument),
 * because it runs once per shape, with placeholders. Lists must not be empty. Returns a function
 * that runs the statement on a Kysely instance or a transaction and gives its rows.
 */
export interface Prepared<A extends Arg[], R> {
  (db: Kysely<DB>, ...args: A): Promise<R[]>;
  /** The statement with its arguments, for `selectBatch` (compiled once on SQLite, batched on PostgreSQL). */
  with: (...args: A) => BoundStatement<R>;
}

/** A prepared statement and its arguments. */
export interface BoundStatement<R> {
  run: (db: Kysely<DB>) => Promise<R[]>;
  /** Its SQL (from the template: no building) and parameter values, for composing a batch. */
  compiled: (db: Kysely<DB>) => { sql: string; parameters: unknown[] };
}

export function prepared<A extends Arg[], R>(build: (db: Kysely<DB>, ...args: A) => Compilable<R>): Prepared<A, R> {
  const templates = new Map<string, Template>();
  function template(db: Kysely<DB>, args: A): Template {
    let key = isPostgres(db) ? 'p' : 's';
    for (const a of args) key += Array.isArray(a) ? `,${a.length}` : ',';
    let t = templates.get(key);
    if (!t) {
      const marks = args.map((a, i) => (Array.isArray(a) ? a.map((_, j) => `${MARK}${i}.${j}`) : `${MARK}${i}`)) as unknown as A;
      const compiled = build(db, ...marks).compile();
      t = { compiled, slots: compiled.parameters.map((p) => slotOf(p, compiled.sql)) };
      if (templates.size < MAX_TEMPLATES) templates.set(key, t);
    }
    return t;
  }
  function bind(db: Kysely<DB>, args: A): CompiledQuery<R> {
    const { compiled, slots } = template(db, args);
    const parameters = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i];
      if (slot === null) parameters[i] = compiled.parameters[i];
      else if (slot[1] === -1) parameters[i] = args[slot[0]];
      else parameters[i] = (args[slot[0]] as readonly Scalar[])[slot[1]];
    }
    return { query: compiled.query, queryId: compiled.queryId, sql: compiled.sql, parameters } as CompiledQuery<R>;
  }
  const run = async (db: Kysely<DB>, ...args: A): Promise<R[]> => {
    const q = bind(db, args);
    // A SELECT with a WITH may hold a data-modifying statement: never a read.
    const direct = q.query.kind === 'SelectQueryNode' && !(q.query as { with?: unknown }).with ? readDirect(db, q.sql, q.parameters as unknown[]) : undefined;
    if (direct) return direct as R[];
    return (await db.executeQuery(q)).rows;
  };
  return Object.assign(run, {
    with: (...args: A): BoundStatement<R> => ({
      run: (db) => run(db, ...args),
      compiled: (db) => {
        const q = bind(db, args);
        return { sql: q.sql, parameters: q.parameters as unknown[] };
      },
    }),
  });
}
