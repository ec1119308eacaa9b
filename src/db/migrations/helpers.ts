// Column helpers so one migration serves SQLite and PostgreSQL.
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { Dialect } from '../database.js';

export interface MigrationContext {
  db: Kysely<any>;
  dialect: Dialect;
}

export interface LabwrightMigration {
  name: string;
  up(ctx: MigrationContext): Promise<void>;
}

/** Creates a table with an auto-increment integer `id` primary key. */
export function createTable(ctx: MigrationContext, name: string): CreateTableBuilder<string, 'id'> {
  const t = ctx.db.schema.createTable(name);
  return ctx.dialect === 'postgres'
    ? t.addColumn('id', 'serial', (c) => c.primaryKey())
    : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** A unique index over an expression (for example lower(path)); Kysely's builder has no expressions. */
export async function uniqueIndex(ctx: MigrationContext, name: string, table: string, expr: string): Promise<void> {
  await sql.raw(`create unique index ${name} on ${table} (${expr})`).execute(ctx.db);
}

export async function index(ctx: MigrationContext, name: string, table: string, expr: string): Promise<void> {
  await sql.raw(`create index ${name} on ${table} (${expr})`).execute(ctx.db);
}
