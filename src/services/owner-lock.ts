// Writes that add rows belonging to a project or group (variables, deploy tokens, environments,
// deployments) lock the owner's row first, and so does the owner's deletion before it deletes those
// rows: a write racing the deletion either commits first (and its rows are deleted with the owner)
// or finds the owner gone (404), never leaving rows of a deleted owner behind. SQLite runs one
// writer at a time, so there the check for the row is all that is needed.
import type { Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import type { DB } from '../db/types.js';
import { notFound } from '../http/errors.js';

export type OwnerTable = 'projects' | 'namespaces';

/** Locks the owner's row for the rest of the transaction; 404 (`Project` / `Group`) when it is gone. */
export async function lockOwnerRow(app: AppContext, trx: Transaction<DB>, table: OwnerTable, id: number): Promise<void> {
  const row = await app.database.forUpdate(trx.selectFrom(table).select('id').where('id', '=', id)).executeTakeFirst();
  if (!row) throw notFound(table === 'projects' ? 'Project' : 'Group');
}

/** Before deleting owners' rows: locks the owners (PostgreSQL; SQLite's writer already excludes the others). */
export async function lockOwnerRows(app: AppContext, trx: Transaction<DB>, table: OwnerTable, ids: number[]): Promise<void> {
  if (app.database.dialect !== 'postgres' || ids.length === 0) return;
  await app.database.forUpdate(trx.selectFrom(table).select('id').where('id', 'in', ids)).execute();
}
