// Snapshots the oracles compare: row counts of every table, git refs of every repository,
// Object.prototype, and the heap after a full GC.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import type { AppContext } from '../../src/context.js';

/** Tables whose row count may change on a request that fails (none so far; each entry needs a reason). */
export const COUNT_EXEMPT_TABLES = new Set<string>([
  'kysely_migration', // the migrator's own bookkeeping
  'kysely_migration_lock',
]);

export async function listTables(ctx: AppContext): Promise<string[]> {
  const rows =
    ctx.database.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(ctx.db)
      : await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()`.execute(ctx.db);
  return rows.rows.map((r) => r.name).filter((n) => !COUNT_EXEMPT_TABLES.has(n)).sort();
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Row counts of the given tables in one round trip (`select (select count(*) from a) as "a", …`). */
export async function countRows(ctx: AppContext, tables: string[]): Promise<Record<string, number>> {
  if (tables.length === 0) return {};
  const cols = tables.map((t, i) => `(select count(*) from ${quoteIdent(t)}) as c${i}`).join(', ');
  const res = await sql<Record<string, number | string>>`${sql.raw(`select ${cols}`)}`.execute(ctx.db);
  const row = res.rows[0];
  const out: Record<string, number> = {};
  tables.forEach((t, i) => (out[t] = Number(row[`c${i}`])));
  return out;
}

export function diffCounts(before: Record<string, number>, after: Record<string, number>): string[] {
  const out: string[] = [];
  for (const t of Object.keys(after)) if (before[t] !== after[t]) out.push(`${t}: ${before[t]} -> ${after[t]}`);
  return out;
}

// Project deletion removes repositories after answering (its 202), so a file or directory can
// vanish between listing and reading it: such entries are skipped, not errors.
function vanished<T>(read: () => T): T | null {
  try {
    return read();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw err;
  }
}

function collectRefs(dir: string, prefix: string, out: string[]): void {
  for (const name of vanished(() => readdirSync(dir)) ?? []) {
    const p = join(dir, name);
    const st = vanished(() => statSync(p));
    if (!st) continue;
    if (st.isDirectory()) collectRefs(p, `${prefix}${name}/`, out);
    else {
      const text = vanished(() => readFileSync(p, 'utf8'));
      if (text !== null) out.push(`${prefix}${name}=${text.trim()}`);
    }
  }
}

function findRepos(dir: string, out: string[], depth = 0): string[] {
  if (depth > 6) return out;
  for (const name of vanished(() => readdirSync(dir)) ?? []) {
    const p = join(dir, name);
    if (!vanished(() => statSync(p))?.isDirectory()) continue;
    if (existsSync(join(p, 'HEAD')) && existsSync(join(p, 'refs'))) out.push(p);
    else findRepos(p, out, depth + 1);
  }
  return out;
}

/**
 * A digest of the refs of each bare repository under reposDir, read from the files (loose refs,
 * packed-refs, HEAD) rather than by running git, so it is cheap enough to take around each request.
 */
export function refsDigests(reposDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const repo of findRepos(reposDir, [])) {
    const h = createHash('sha256');
    const refs: string[] = [];
    collectRefs(join(repo, 'refs'), 'refs/', refs);
    h.update(refs.sort().join('\n'));
    for (const f of ['packed-refs', 'HEAD']) {
      const bytes = vanished(() => readFileSync(join(repo, f)));
      if (bytes) h.update(bytes);
    }
    out.set(repo, h.digest('hex'));
  }
  return out;
}

/**
 * Repositories present before and after whose refs differ. A repository appearing or disappearing
 * is not counted: project deletion removes repositories after answering (its 202), which can land
 * during a later request.
 */
export function movedRefs(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [repo, digest] of before) {
    const now = after.get(repo);
    if (now !== undefined && now !== digest) out.push(repo.split('/').slice(-1)[0]);
  }
  return out;
}

const BASELINE = {
  object: Object.getOwnPropertyNames(Object.prototype).sort().join(','),
  array: Object.getOwnPropertyNames(Array.prototype).sort().join(','),
  func: Object.getOwnPropertyNames(Function.prototype).sort().join(','),
};

/** Names added to the built-in prototypes since this module loaded (pollution through params). */
export function prototypePollution(): string[] {
  const out: string[] = [];
  const now = {
    object: Object.getOwnPropertyNames(Object.prototype).sort().join(','),
    array: Object.getOwnPropertyNames(Array.prototype).sort().join(','),
    func: Object.getOwnPropertyNames(Function.prototype).sort().join(','),
  };
  for (const k of Object.keys(BASELINE) as Array<keyof typeof BASELINE>) if (now[k] !== BASELINE[k]) out.push(`${k}.prototype changed: ${now[k]}`);
  const probe = {} as Record<string, unknown>;
  for (const key of ['polluted', 'isAdmin', 'is_admin', 'admin', 'x']) if (probe[key] !== undefined) out.push(`({}).${key} is ${String(probe[key])}`);
  return out;
}

let gcFn: (() => void) | null = null;

/** heapUsed in MB after a full collection (gc exposed at run time, no node flag needed). */
export function heapAfterGc(): number {
  if (!gcFn) {
    setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc') as () => void;
  }
  gcFn();
  gcFn();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}
