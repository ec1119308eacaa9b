// Kysely set-up for both dialects: one query code path, two drivers.
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, type LogEvent, PostgresDialect, SqliteAdapter, SqliteDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { join } from 'node:path';
import type { DB } from './types.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /**
   * Runs fn in a write transaction: BEGIN IMMEDIATE on SQLite (the write lock is taken before the
   * first read, so read-then-write never fails half way), an ordinary transaction on PostgreSQL
   * (callers lock the rows they read with `forUpdate`).
   */
  transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T>;
  /** Adds FOR UPDATE on PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises writers. */
  forUpdate<QB extends { forUpdate(): QB }>(qb: QB): QB;
  close(): Promise<void>;
}

// pg returns int8 (count(*), sum) as strings; our values fit in a double.
pg.types.setTypeParser(20, (v: string) => Number(v));
pg.types.setTypeParser(1700, (v: string) => Number(v));

/** SQLite runs DDL inside transactions; saying so makes Kysely's migrator wrap each run in one. */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/**
 * SQLite dialect whose transactions start with BEGIN IMMEDIATE. Migrations therefore run under
 * the write lock, so several processes starting at once on one file migrate one after the other.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createAdapter() {
    return new TransactionalDdlSqliteAdapter();
  }

  override createDriver() {
    const driver = super.createDriver();
    driver.beginTransaction = async function beginImmediate(connection) {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

export function openSqlite(file: string): BetterSqlite3.Database {
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.pragma('busy_timeout = 10000');
  raw.pragma('foreign_keys = ON');
  raw.pragma('cache_size = -32000');
  // LIKE compares case-sensitively, as on PostgreSQL: one behaviour on both dialects, and SQLite can
  // then answer `traversal LIKE '/1/5/%'` (the subtree of a group, used by most group and project
  // lists) from the index instead of scanning every namespace. Case-insensitive searches lower()
  // both sides (containsCi).
  raw.pragma('case_sensitive_like = ON');
  // Kysely prepares every query anew; reuse statements by SQL text (they run to completion
  // synchronously, so one statement is never used by two queries at once).
  const prepare = raw.prepare.bind(raw);
  const cache = new Map<string, BetterSqlite3.Statement>();
  (raw as { prepare: (sql: string) => BetterSqlite3.Statement }).prepare = function cachedPrepare(text: string) {
    let stmt = cache.get(text);
    if (!stmt) {
      stmt = prepare(text);
      if (cache.size >= 1000) cache.delete(cache.keys().next().value as string);
      cache.set(text, stmt);
    }
    return stmt;
  };
  return raw;
}

/**
 * LABWRIGHT_QUERY_STATS=1 (bench/profile.ts sets it): total time and count per SQL text, written
 * to stderr when the process exits. Off by default: no cost on the request path.
 */
function queryStatsLogger(): ((event: LogEvent) => void) | undefined {
  if (!process.env.LABWRIGHT_QUERY_STATS) return undefined;
  const stats = new Map<string, { n: number; ms: number }>();
  process.once('exit', () => {
    const rows = [...stats.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25);
    for (const [text, s] of rows) process.stderr.write(`[sql] ${s.ms.toFixed(0).padStart(7)} ms ${String(s.n).padStart(7)}× ${(s.ms / s.n).toFixed(3)} ms  ${text.slice(0, 400)}\n`);
  });
  return (event) => {
    const s = stats.get(event.query.sql) ?? { n: 0, ms: 0 };
    s.n++;
    s.ms += event.queryDurationMillis;
    stats.set(event.query.sql, s);
  };
}

export function createDatabase(opts: { databaseUrl: string | null; dataDir: string; sqliteFile?: string }): Database {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    // An idle client whose server connection ends (restart, drop database) must not crash the process;
    // the pool replaces it on the next query.
    pool.on('error', () => undefined);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: queryStatsLogger() });
    return {
      db,
      dialect: 'postgres',
      transaction: (fn) => db.transaction().execute(fn),
      forUpdate: (qb) => qb.forUpdate(),
      close: () => db.destroy(),
    };
  }
  const raw = openSqlite(opts.sqliteFile ?? join(opts.dataDir, 'labwright.sqlite3'));
  const db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: raw }), log: queryStatsLogger() });
  return {
    db,
    dialect: 'sqlite',
    transaction: (fn) => db.transaction().execute(fn),
    forUpdate: (qb) => qb,
    close: () => db.destroy(),
  };
}

/** True when the database answers; used by /-/readiness. */
export async function ping(database: Database): Promise<boolean> {
  try {
    await sql`select 1`.execute(database.db);
    return true;
  } catch {
    return false;
  }
}

/** Current time as stored: ISO 8601 UTC with milliseconds (sorts as text on both dialects). */
export function nowIso(): string {
  return new Date().toISOString();
}

/** SQL booleans are stored as 0/1 integers on both dialects. */
export function toBool(v: number | boolean | null | undefined): boolean {
  return v === 1 || v === true;
}
