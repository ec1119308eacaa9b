// Dialect helpers for the seeder: set-based INSERT … SELECT over a generated series, so data sets of
// hundreds of thousands of rows are written by the database itself in a few statements.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../src/db/database.js';

export interface SeedDb {
  db: Kysely<any>;
  dialect: Dialect;
}

/** A subquery yielding one column `i` from `from` to `to` inclusive. */
export function series(d: Dialect, from: number, to: number): string {
  if (d === 'postgres') return `(select generate_series(${from}, ${to}) as i)`;
  return `(with recursive r(i) as (select ${from} union all select i + 1 from r where i < ${to}) select i from r)`;
}

/** ISO text timestamp (our storage format) of 2024-01-01T00:00:00Z plus `secondsExpr` seconds. */
export function isoPlus(d: Dialect, secondsExpr: string): string {
  if (d === 'postgres') return `to_char(timestamp '2024-01-01 00:00:00' + (${secondsExpr}) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  return `strftime('%Y-%m-%dT%H:%M:%fZ', '2024-01-01 00:00:00', '+' || (${secondsExpr}) || ' seconds')`;
}

/** Integer to text, usable inside || on both dialects. */
export function txt(d: Dialect, expr: string): string {
  return d === 'postgres' ? `cast(${expr} as text)` : `cast(${expr} as text)`;
}

export async function exec(s: SeedDb, text: string): Promise<void> {
  await sql.raw(text).execute(s.db);
}

export async function one<T = Record<string, unknown>>(s: SeedDb, text: string): Promise<T> {
  const r = await sql.raw<T>(text).execute(s.db);
  return r.rows[0];
}

/** SQL string literal. */
export function lit(v: string | number | null): string {
  if (v === null) return 'null';
  if (typeof v === 'number') return String(v);
  return `'${v.replace(/'/g, "''")}'`;
}

/**
 * Brings PostgreSQL to the state autovacuum keeps a production database in after bulk loads: planner
 * statistics (otherwise it may pick sequential scans) and the visibility map (VACUUM; since
 * PostgreSQL 13 autovacuum also runs after many inserts). Without the map every index-only scan
 * visits the heap: the bounded count of the 500,000-MR list took 4.3 ms instead of 0.9–1.2 ms.
 * SQLite is left as a Labwright database is in
 * production, where nothing runs ANALYZE: with sqlite_stat4 present, every statement whose plan
 * reads a bound value is planned again on each execution (20–40 µs each here), and skewed
 * averages (the admin who created everything is in 251 groups, a user in 3 on average) chose the
 * user_id index for membership checks, scanning all of that admin's rows.
 */
export async function analyze(s: SeedDb): Promise<void> {
  if (s.dialect === 'postgres') await exec(s, 'vacuum analyze');
}
