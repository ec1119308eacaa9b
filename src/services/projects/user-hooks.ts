// Deleting a user deletes the projects of their personal namespace. The rows go inside the user
// deletion transaction; the repositories are removed once that transaction has committed.
import type { AppContext } from '../../context.js';
import { removeRepository } from '../../git/repository.js';
import { userDeletionHooks } from '../users.js';
import { deleteProjectRows } from './create.js';
import { repoPathFor } from './lookup.js';

const REMOVAL_CHECKS = 20;

/**
 * Removes repositories whose project rows are gone. The hook cannot see the commit, so it polls:
 * on SQLite the check waits behind the single connection, on PostgreSQL it sees the row until the
 * commit; a rollback leaves the row and the repository in place.
 */
function removeWhenGone(app: AppContext, ids: number[], attempt = 0): void {
  setTimeout(async () => {
    try {
      const left = await app.db.selectFrom('projects').select('id').where('id', 'in', ids).execute();
      const remaining = new Set(left.map((r) => r.id));
      for (const id of ids) if (!remaining.has(id)) await removeRepository(repoPathFor(app, id)).catch(() => undefined);
      const still = ids.filter((id) => remaining.has(id));
      if (still.length && attempt < REMOVAL_CHECKS) removeWhenGone(app, still, attempt + 1);
    } catch {
      // The app may be closing; leftover directories are harmless (named by id, never reused).
    }
  }, attempt === 0 ? 0 : 250);
}

let registered = false;

export function registerProjectUserHooks(): void {
  if (registered) return;
  registered = true;
  userDeletionHooks.push(async function deletePersonalProjects(app, trx, _user, namespaceId) {
    if (namespaceId === null) return;
    const rows = await trx.selectFrom('projects').select('id').where('namespace_id', '=', namespaceId).execute();
    for (const r of rows) await deleteProjectRows(app, r.id, trx);
    if (rows.length) removeWhenGone(app, rows.map((r) => r.id));
  });
}
