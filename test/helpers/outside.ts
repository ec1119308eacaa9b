// What another process does to a server's database: a statement through a connection of the
// test's own, and waiting for something to become true. For the tests of the caches.
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Runs one statement (written with `?` placeholders) on the database of a data directory (SQLite)
 * or at a URL (PostgreSQL). `noTriggers` (PostgreSQL): in replica mode, so no trigger fires.
 */
export async function runOutside(
  where: { dataDir: string; databaseUrl: string | null },
  statement: string,
  params: unknown[] = [],
  opts: { noTriggers?: boolean } = {},
): Promise<void> {
  if (!where.databaseUrl) {
    const db = new BetterSqlite3(join(where.dataDir, 'labwright.sqlite3'));
    try {
      db.prepare(statement).run(...params);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: where.databaseUrl });
  await client.connect();
  try {
    if (opts.noTriggers) await client.query('set session_replication_role = replica');
    let n = 0;
    await client.query(statement.replace(/\?/g, () => `$${++n}`), params);
  } finally {
    await client.end();
  }
}

/** The rows of one query (written with `?` placeholders) run as runOutside runs a statement. */
export async function queryOutside(where: { dataDir: string; databaseUrl: string | null }, query: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  if (!where.databaseUrl) {
    const db = new BetterSqlite3(join(where.dataDir, 'labwright.sqlite3'), { readonly: true });
    try {
      return db.prepare(query).all(...params) as Array<Record<string, unknown>>;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: where.databaseUrl });
  await client.connect();
  try {
    let n = 0;
    return (await client.query(query.replace(/\?/g, () => `$${++n}`), params)).rows;
  } finally {
    await client.end();
  }
}

/** Polls `check` (which may be asynchronous) every 20 ms; false if it is still false after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
