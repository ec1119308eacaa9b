// Migration tests: the schema as it was before one migration, to put old rows in and migrate them.
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';

/** Runs every migration before `name` (and not it); throws if one fails. */
export async function migrateBefore(database: Database, name: string): Promise<void> {
  const before = migrations.slice(0, migrations.findIndex((m) => m.name === name));
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const m of before) out[m.name] = { up: (db) => m.up({ db, dialect: database.dialect }) };
      return out;
    },
  };
  const { error } = await new Migrator({ db: database.db, provider }).migrateToLatest();
  if (error) throw error;
}
