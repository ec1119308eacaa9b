// Group-to-group sharing (spec document 3 §4.3): a link gives the members of the invited group
// the lower of their own level and the link's level on the shared group and its subgroups.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import type { DB } from '../../db/types.js';
import { apiError, conflict, notFound } from '../../http/errors.js';
import { recordAudit } from '../audit.js';
import { onUniqueViolation } from '../projects/unique.js';
import type { GroupRow } from './lookup.js';
import { effectiveSettings } from './settings.js';
import { groupVisibleTo, lazyGrants } from './visibility.js';
import type { SharedWithGroup } from '../../api/v4/entities/group.js';

export async function shareGroup(
  app: AppContext,
  user: UserRow,
  group: GroupRow,
  withGroup: GroupRow,
  access: number,
  expiresAt: string | null,
  memberRoleId: number | null,
  ip: string | null,
): Promise<void> {
  if (withGroup.id === group.id) throw apiError(400, 'Invalid shared group');
  const rootId = Number(group.traversal.split('/').filter(Boolean)[0]);
  const root = await app.db.selectFrom('group_settings').select('settings').where('namespace_id', '=', rootId).executeTakeFirst();
  if (effectiveSettings(root?.settings).prevent_sharing_groups_outside_hierarchy && !withGroup.traversal.startsWith(`/${rootId}/`)) {
    throw notFound('Group');
  }
  // Two shares with the same group at once: the second meets the unique index, and is the same conflict.
  await onUniqueViolation(
    () =>
      app.database.transaction(async (trx) => {
        const existing = await trx
          .selectFrom('group_group_links')
          .select('id')
          .where('shared_group_id', '=', group.id)
          .where('shared_with_group_id', '=', withGroup.id)
          .executeTakeFirst();
        if (existing) throw conflict('Group already shared with this group');
        const now = nowIso();
        await trx
          .insertInto('group_group_links')
          .values({
            shared_group_id: group.id,
            shared_with_group_id: withGroup.id,
            group_access: access,
            expires_at: expiresAt,
            member_role_id: memberRoleId,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await recordAudit(trx, {
          author: user,
          entityType: 'Group',
          entityId: group.id,
          entityPath: group.full_path,
          eventName: 'group_share_with_group_link_created',
          targetType: 'Group',
          targetId: withGroup.id,
          targetDetails: withGroup.full_path,
          details: { group_access: access, expires_at: expiresAt },
          ipAddress: ip,
        });
      }),
    () => conflict('Group already shared with this group'),
  );
}

export async function unshareGroup(app: AppContext, user: UserRow, group: GroupRow, withGroupId: number, ip: string | null): Promise<void> {
  await app.database.transaction(async (trx) => {
    const link = await trx
      .selectFrom('group_group_links')
      .select('id')
      .where('shared_group_id', '=', group.id)
      .where('shared_with_group_id', '=', withGroupId)
      .executeTakeFirst();
    if (!link) throw notFound('Group Link');
    await trx.deleteFrom('group_group_links').where('id', '=', link.id).execute();
    await recordAudit(trx, {
      author: user,
      entityType: 'Group',
      entityId: group.id,
      entityPath: group.full_path,
      eventName: 'group_share_with_group_link_removed',
      targetType: 'Group',
      targetId: withGroupId,
      ipAddress: ip,
    });
  });
}

/**
 * The groups a group is shared with, as GroupDetail's `shared_with_groups` (at most 100 links):
 * only those the viewer can see, as GitLab's `shared_with_group_links_visible_to_user` (a private
 * group's name and path are not shown to someone who cannot see it, the group's Owners included).
 */
export async function sharedWithGroups(db: Kysely<DB>, groupId: number, viewer: UserRow | null): Promise<SharedWithGroup[]> {
  const rows = await db
    .selectFrom('group_group_links')
    .innerJoin('namespaces', 'namespaces.id', 'group_group_links.shared_with_group_id')
    .select(['namespaces.id', 'namespaces.name', 'namespaces.full_path', 'namespaces.visibility', 'namespaces.traversal', 'group_group_links.group_access', 'group_group_links.expires_at'])
    .where('group_group_links.shared_group_id', '=', groupId)
    .orderBy('group_group_links.id')
    .limit(1000)
    .execute();
  // The caller's grants are read only when a link points at a group its visibility does not open.
  const grants = lazyGrants(db, viewer);
  const out: SharedWithGroup[] = [];
  for (const r of rows) {
    if (out.length === 100) break;
    if (!(await groupVisibleTo(viewer, r, grants))) continue;
    out.push({ group_id: r.id, group_name: r.name, group_full_path: r.full_path, group_access_level: r.group_access, expires_at: r.expires_at });
  }
  return out;
}
