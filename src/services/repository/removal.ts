// Removing repositories whose rows a transaction deletes: a deletion hook runs inside that
// transaction and cannot see its commit, so it polls (on SQLite the check waits behind the single
// connection, on PostgreSQL it sees the row until the commit); a rollback leaves the row and the
// repository in place. Used for personal projects of a deleted user, snippets, wikis and upload files.
import type { AppContext } from '../../context.js';
import { removeRepository } from '../../git/repository.js';

const REMOVAL_CHECKS = 20;

export function removeReposWhenGone(app: AppContext, table: 'projects' | 'snippets' | 'uploads', ids: number[], pathOf: (id: number) => string, remove: (path: string) => Promise<void> = removeRepository, attempt = 0): void {
  setTimeout(async () => {
    try {
      const left = await app.db.selectFrom(table).select('id').where('id', 'in', ids).execute();
      const remaining = new Set(left.map((r) => r.id));
      for (const id of ids) if (!remaining.has(id)) await remove(pathOf(id)).catch(() => undefined);
      const still = ids.filter((id) => remaining.has(id));
      if (still.length && attempt < REMOVAL_CHECKS) removeReposWhenGone(app, table, still, pathOf, remove, attempt + 1);
    } catch {
      // The app may be closing; leftover directories are harmless (named by id, never reused).
    }
  }, attempt === 0 ? 0 : 250);
}
