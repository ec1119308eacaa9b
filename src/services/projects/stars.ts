// Stars (GitLab's users_star_projects and projects.star_count): starring and unstarring, kept
// consistent with the count in one transaction; stars go with their project or their user.
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { DB } from '../../db/types.js';
import { notFound } from '../../http/errors.js';
import { userDeletionHooks } from '../users.js';
import { projectDeletionHooks } from './create.js';

/** Stars a project for a user; false when it already was (GitLab's 304). */
export async function starProject(app: AppContext, userId: number, projectId: number): Promise<boolean> {
  return app.database.transaction(async (trx) => {
    // Both rows locked (PostgreSQL; SQLite runs one writer at a time): a star racing the deletion
    // of its user or project waits for it and then finds nothing to star.
    const user = await app.database.forUpdate(trx.selectFrom('users').select('id').where('id', '=', userId)).executeTakeFirst();
    const project = await app.database.forUpdate(trx.selectFrom('projects').select('id').where('id', '=', projectId)).executeTakeFirst();
    if (!user || !project) throw notFound('Project');
    const now = nowIso();
    const added = await trx
      .insertInto('users_star_projects')
      .values({ user_id: userId, project_id: projectId, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['user_id', 'project_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!added) return false;
    await trx.updateTable('projects').set((eb) => ({ star_count: eb('star_count', '+', 1) })).where('id', '=', projectId).execute();
    return true;
  });
}

/** Takes a user's star back; false when there was none (GitLab's 304). */
export async function unstarProject(app: AppContext, userId: number, projectId: number): Promise<boolean> {
  return app.database.transaction(async (trx) => {
    const removed = await trx.deleteFrom('users_star_projects').where('user_id', '=', userId).where('project_id', '=', projectId).returning('id').executeTakeFirst();
    if (!removed) return false;
    await lowerCounts(trx, [projectId]);
    return true;
  });
}

async function lowerCounts(trx: Transaction<DB> | Kysely<DB>, projectIds: number[]): Promise<void> {
  for (let i = 0; i < projectIds.length; i += 500) {
    await trx
      .updateTable('projects')
      .set((eb) => ({ star_count: eb.case().when('star_count', '>', 0).then(eb('star_count', '-', 1)).else(0).end() }))
      .where('id', 'in', projectIds.slice(i, i + 500))
      .execute();
  }
}

/** The projects a user starred, as a subquery (`starred=true`, `/users/:id/starred_projects`). */
export function starredBy(db: Kysely<DB>, userId: number) {
  return db.selectFrom('users_star_projects').select('users_star_projects.project_id').where('users_star_projects.user_id', '=', userId);
}

let registered = false;

export function registerStarHooks(): void {
  if (registered) return;
  registered = true;
  projectDeletionHooks.push(async function deleteStars(_app, trx, projectId) {
    await trx.deleteFrom('users_star_projects').where('project_id', '=', projectId).execute();
  });
  userDeletionHooks.push(async function takeStarsBack(_app, trx, user) {
    const rows = await trx.deleteFrom('users_star_projects').where('user_id', '=', user.id).returning('project_id').execute();
    await lowerCounts(trx, rows.map((r) => r.project_id));
  });
}
