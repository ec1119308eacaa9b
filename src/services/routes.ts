// Full paths of namespaces and projects: claiming, moving (with redirects for old paths), releasing.
import type { Transaction } from 'kysely';
import type { DB } from '../db/types.js';
import type { SourceType } from '../http/ids.js';
import { nowIso } from '../db/database.js';
import { escapeLike, like } from '../db/sql-helpers.js';

export async function pathTaken(trx: Transaction<DB> | import('kysely').Kysely<DB>, path: string): Promise<boolean> {
  const row = await trx.selectFrom('routes').select('id').where('path_lower', '=', path.toLowerCase()).executeTakeFirst();
  return row !== undefined;
}

export async function claimRoute(trx: Transaction<DB>, type: SourceType, id: number, path: string, name: string): Promise<void> {
  // A new owner of a path supersedes any redirect that pointed elsewhere.
  await trx.deleteFrom('redirect_routes').where('path_lower', '=', path.toLowerCase()).execute();
  await trx
    .insertInto('routes')
    .values({ source_type: type, source_id: id, path, path_lower: path.toLowerCase(), name, created_at: nowIso() })
    .execute();
}

/**
 * Moves every route under `oldPrefix` (the route itself and its descendants) to `newPrefix`,
 * leaving redirects at the old paths, and keeps namespaces.full_path in step.
 */
export async function movePrefix(trx: Transaction<DB>, oldPrefix: string, newPrefix: string): Promise<void> {
  if (oldPrefix.toLowerCase() === newPrefix.toLowerCase() && oldPrefix === newPrefix) return;
  const lowerOld = oldPrefix.toLowerCase();
  const rows = await trx
    .selectFrom('routes')
    .select(['id', 'source_type', 'source_id', 'path'])
    .where((eb) => eb.or([eb('path_lower', '=', lowerOld), like('path_lower', escapeLike(lowerOld) + '/%')]))
    .execute();
  const now = nowIso();
  for (const r of rows) {
    const moved = newPrefix + r.path.slice(oldPrefix.length);
    await trx.deleteFrom('redirect_routes').where('path_lower', '=', moved.toLowerCase()).execute();
    if (r.path.toLowerCase() !== moved.toLowerCase()) {
      await trx
        .insertInto('redirect_routes')
        .values({ source_type: r.source_type, source_id: r.source_id, path: r.path, path_lower: r.path.toLowerCase(), created_at: now })
        .execute();
    }
    await trx.updateTable('routes').set({ path: moved, path_lower: moved.toLowerCase() }).where('id', '=', r.id).execute();
    if (r.source_type === 'Namespace') {
      await trx.updateTable('namespaces').set({ full_path: moved, updated_at: now }).where('id', '=', r.source_id).execute();
    }
  }
}

export async function releaseRoute(trx: Transaction<DB>, type: SourceType, id: number): Promise<void> {
  await trx.deleteFrom('routes').where('source_type', '=', type).where('source_id', '=', id).execute();
  await trx.deleteFrom('redirect_routes').where('source_type', '=', type).where('source_id', '=', id).execute();
}
