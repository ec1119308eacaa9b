// Deleting a user deletes the projects of their personal namespace. The rows go inside the user
// deletion transaction; the repositories are removed once that transaction has committed.
import { removeReposWhenGone } from '../repository/removal.js';
import { userDeletionHooks } from '../users.js';
import { deleteProjectRows } from './create.js';
import { repoPathFor } from './lookup.js';

let registered = false;

export function registerProjectUserHooks(): void {
  if (registered) return;
  registered = true;
  userDeletionHooks.push(async function deletePersonalProjects(app, trx, _user, namespaceId) {
    if (namespaceId === null) return;
    const rows = await trx.selectFrom('projects').select('id').where('namespace_id', '=', namespaceId).execute();
    for (const r of rows) await deleteProjectRows(app, r.id, trx);
    if (rows.length) removeReposWhenGone(app, 'projects', rows.map((r) => r.id), (id) => repoPathFor(app, id));
  });
}
