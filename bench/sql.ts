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

/** Refreshes planner statistics after bulk loads (otherwise PostgreSQL may pick sequential scans). */
export async function analyze(s: SeedDb): Promise<void> {
  await exec(s, 'analyze');
}
