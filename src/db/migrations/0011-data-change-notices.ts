// Change notices for the PostgreSQL read cache (issue 7; src/db/postgres-driver.ts): every table
// that migration 0010 does not cover tells the listening processes of a change.
import { sql } from 'kysely';
import { DATA_CHANGES_CHANNEL } from '../change-notices.js';
import { AUTH_TABLES } from './0010-auth-change-notices.js';
import type { LabwrightMigration, MigrationContext } from './helpers.js';

export const dataChangeNotices: LabwrightMigration = {
  name: '0011-data-change-notices',
  async up(ctx) {
    // SQLite needs nothing: every process sees another's commit through PRAGMA data_version.
    if (ctx.dialect !== 'postgres') return;
    await sql
      .raw(
        `create function labwright_data_changed() returns trigger language plpgsql as $$ ` +
          `begin perform pg_notify('${DATA_CHANGES_CHANNEL}', ''); return null; end $$`,
      )
      .execute(ctx.db);
    // Every table of ours at this point; a later migration that creates a table adds its trigger
    // with notifyChanges (test/unit/read-cache.test.ts checks that every table has one).
    const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema() and tablename not like 'kysely_%' order by tablename`.execute(ctx.db);
    for (const { name } of rows) {
      if (!AUTH_TABLES.includes(name)) await notifyChanges(ctx, name);
    }
  },
};

/** PostgreSQL: after any statement that changes `table`, listening processes are told once the transaction commits. */
export async function notifyChanges(ctx: MigrationContext, table: string): Promise<void> {
  if (ctx.dialect !== 'postgres') return;
  await sql
    .raw(`create trigger ${table}_data_changed after insert or update or delete or truncate on ${table} for each statement execute function labwright_data_changed()`)
    .execute(ctx.db);
}
