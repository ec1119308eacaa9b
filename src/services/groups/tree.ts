// Deleting and transferring groups: the whole subtree moves (routes, redirects, traversal,
// full names) or goes in one transaction.
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import { apiError } from '../../http/errors.js';
import { recordAudit } from '../audit.js';
import { deleteOwnerVariables } from '../ci-variables/variables.js';
import { deleteOwnerDeployTokens } from '../deploy-tokens.js';
import { deleteProject } from '../projects/update.js';
import { movePrefix, pathTaken } from '../routes.js';
import type { GroupRow } from './lookup.js';
import { moreVisible, VISIBILITIES } from './validate.js';
import { renameDescendants } from './write.js';

/** Deletes a group with its subgroups and projects (GitLab deletes asynchronously; we do it at once). */
export async function deleteGroup(app: AppContext, user: UserRow, group: GroupRow, ip: string | null): Promise<void> {
  const projects = await app.db
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select('projects.id')
    .where('namespaces.traversal', 'like', `${group.traversal}%`)
    .execute();
  for (const p of projects) await deleteProject(app, p.id);
  await app.database.transaction(async (trx) => {
    const ids = (
      await trx.selectFrom('namespaces').select('id').where('traversal', 'like', `${group.traversal}%`).execute()
    ).map((r) => r.id);
    if (ids.length === 0) return;
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      // Group access tokens die with their group.
      const bots = await trx.selectFrom('resource_access_bots').select('user_id').where('source_type', '=', 'Namespace').where('source_id', 'in', chunk).execute();
      if (bots.length) {
        await trx.updateTable('personal_access_tokens').set({ revoked: 1, updated_at: nowIso() }).where('user_id', 'in', bots.map((b) => b.user_id)).execute();
      }
      await trx.deleteFrom('members').where('source_type', '=', 'Namespace').where('source_id', 'in', chunk).execute();
      await trx.deleteFrom('routes').where('source_type', '=', 'Namespace').where('source_id', 'in', chunk).execute();
      await trx.deleteFrom('redirect_routes').where('source_type', '=', 'Namespace').where('source_id', 'in', chunk).execute();
      await trx.deleteFrom('group_settings').where('namespace_id', 'in', chunk).execute();
      await trx.deleteFrom('badges').where('group_id', 'in', chunk).execute();
      await trx.deleteFrom('access_requests').where('source_type', '=', 'Namespace').where('source_id', 'in', chunk).execute();
      await trx.deleteFrom('todos').where('group_id', 'in', chunk).execute();
      await deleteOwnerVariables(app, trx, 'Namespace', chunk);
      await deleteOwnerDeployTokens(app, trx, 'group', chunk);
      await trx.deleteFrom('namespace_custom_attributes').where('namespace_id', 'in', chunk).execute();
      await trx
        .deleteFrom('group_group_links')
        .where((eb) => eb.or([eb('shared_group_id', 'in', chunk), eb('shared_with_group_id', 'in', chunk)]))
        .execute();
      // Projects shared with a deleted group lose that link too.
      await trx.deleteFrom('project_group_links').where('group_id', 'in', chunk).execute();
      await trx.deleteFrom('namespaces').where('id', 'in', chunk).execute();
    }
    await recordAudit(trx, {
      author: user,
      entityType: 'Group',
      entityId: group.id,
      entityPath: group.full_path,
      eventName: 'group_destroyed',
      targetType: 'Group',
      targetId: group.id,
      targetDetails: group.full_path,
      ipAddress: ip,
    });
  });
}

const fail = (msg: string) => apiError(400, `Transfer failed: ${msg}`);

/**
 * Moves a group under `target` (null: makes it top-level). The caller has checked Owner on the
 * group and the right to create subgroups in the target. Visibility above the new parent's is
 * lowered, for the group and its descendants, as GitLab's transfer service does.
 */
/** Moves a group; answers the ids of projects of fork networks whose visibility it lowered (they leave their networks). */
export async function transferGroup(app: AppContext, user: UserRow, group: GroupRow, target: GroupRow | null, ip: string | null): Promise<number[]> {
  if (!target && group.parent_id === null) throw fail('Group is already a root group.');
  if (target && target.id === group.parent_id) throw fail('Group is already associated to the parent group.');
  if (target && target.id === group.id) throw fail('Cannot transfer group to itself.');
  if (target && target.traversal.startsWith(group.traversal)) throw fail('Cannot transfer group to one of its subgroup.');
  const lowered: number[] = [];
  await app.database.transaction(async (trx) => {
    const current = await app.database.forUpdate(trx.selectFrom('namespaces').selectAll().where('id', '=', group.id)).executeTakeFirst();
    if (!current) throw apiError(404, '404 Group Not Found');
    const parent = target ? await trx.selectFrom('namespaces').selectAll().where('id', '=', target.id).executeTakeFirst() : null;
    if (target && !parent) throw apiError(404, '404 Group Not Found');
    const newFullPath = parent ? `${parent.full_path}/${current.path}` : current.path;
    const newFullName = parent ? `${parent.full_name} / ${current.name}` : current.name;
    if (await pathTaken(trx, newFullPath)) throw fail('The parent group already has a subgroup or a project with the same path.');
    await movePrefix(trx, current.full_path, newFullPath);
    await renameDescendants(trx, current, newFullName);
    const newTraversal = `${parent?.traversal ?? '/'}${current.id}/`;
    const subtree = await trx.selectFrom('namespaces').select(['id', 'traversal', 'visibility']).where('traversal', 'like', `${current.traversal}%`).execute();
    const now = nowIso();
    for (const n of subtree) {
      const patch: Record<string, unknown> = { traversal: newTraversal + n.traversal.slice(current.traversal.length), updated_at: now };
      if (parent && moreVisible(n.visibility, parent.visibility)) patch.visibility = parent.visibility;
      await trx.updateTable('namespaces').set(patch).where('id', '=', n.id).execute();
    }
    await trx.updateTable('namespaces').set({ parent_id: parent?.id ?? null, full_name: newFullName }).where('id', '=', current.id).execute();
    await trx.updateTable('routes').set({ name: newFullName }).where('source_type', '=', 'Namespace').where('source_id', '=', current.id).execute();
    if (parent && VISIBILITIES.includes(parent.visibility as never)) {
      // Projects more visible than their new ancestors drop to the new parent's level.
      const nsIds = subtree.map((n) => n.id);
      for (let i = 0; i < nsIds.length; i += 500) {
        const chunk = nsIds.slice(i, i + 500);
        const lower = parent.visibility === 'private' ? ['internal', 'public'] : parent.visibility === 'internal' ? ['public'] : [];
        if (lower.length) {
          const forked = await trx.selectFrom('projects').select('id').where('namespace_id', 'in', chunk).where('visibility', 'in', lower).where('fork_network_root_id', 'is not', null).execute();
          lowered.push(...forked.map((p) => p.id));
          await trx.updateTable('projects').set({ visibility: parent.visibility }).where('namespace_id', 'in', chunk).where('visibility', 'in', lower).execute();
        }
      }
    }
    await recordAudit(trx, {
      author: user,
      entityType: 'Group',
      entityId: current.id,
      entityPath: newFullPath,
      eventName: 'group_transferred',
      targetType: 'Group',
      targetId: current.id,
      targetDetails: newFullPath,
      details: { from: current.full_path, to: newFullPath },
      ipAddress: ip,
    });
  });
  return lowered;
}
