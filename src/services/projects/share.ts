// Projects shared with groups (POST /projects/:id/share): a link gives the members of the group,
// inherited members included, the lower of the link's level and their own on the project.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import { prepared } from '../../db/prepared.js';
import type { UserRow } from '../../db/repositories/users.js';
import type { DB } from '../../db/types.js';
import { apiError, conflict, forbidden, notFound } from '../../http/errors.js';
import { AccessLevel, ancestorIds, projectAccess, projectAccessExtensions } from '../access.js';
import { recordAudit } from '../audit.js';
import type { GroupRow } from '../groups/lookup.js';
import { effectiveSettings } from '../groups/settings.js';
import { canReadGroup, groupVisibleTo, lazyGrants, visibleGroupIds } from '../groups/visibility.js';
import { projectDeletionHooks } from './create.js';
import type { FoundProject } from './lookup.js';
import { todayUtc } from '../personal-access-tokens.js';
import { sharedMemberGroups } from '../members.js';
import { onUniqueViolation } from './unique.js';

export interface ProjectGroupLink {
  id: number;
  project_id: number;
  group_id: number;
  group_access: number;
  expires_at: string | null;
}

/** As the project entity shows it (GitLab's `shared_with_groups`). */
export interface ProjectSharedWithGroup {
  group_id: number;
  group_name: string;
  group_full_path: string;
  group_access_level: number;
  expires_at: string | null;
}

/** `share_with_group_lock` on the project's group or any ancestor forbids sharing. */
async function sharingLocked(db: Kysely<DB>, found: FoundProject): Promise<boolean> {
  if (found.namespace.kind !== 'group') return false;
  const rows = await db.selectFrom('group_settings').select('settings').where('namespace_id', 'in', ancestorIds(found.namespace)).execute();
  return rows.some((r) => effectiveSettings(r.settings).share_with_group_lock === true);
}

/** `prevent_sharing_groups_outside_hierarchy` on the project's root group. */
async function outsideHierarchyRefused(db: Kysely<DB>, found: FoundProject, group: GroupRow): Promise<boolean> {
  if (found.namespace.kind !== 'group') return false;
  const rootId = ancestorIds(found.namespace)[0];
  const root = await db.selectFrom('group_settings').select('settings').where('namespace_id', '=', rootId).executeTakeFirst();
  return effectiveSettings(root?.settings).prevent_sharing_groups_outside_hierarchy === true && !group.traversal.startsWith(`/${rootId}/`);
}

/**
 * Creates the link. The caller is Maintainer or more on the project (checked by the route);
 * errors are GitLab's: 400 when sharing is locked, 404 `Not Found` for an invisible group, 403 when
 * a Maintainer grants Owner, 409 when the group already has a link.
 */
export async function shareProject(
  app: AppContext,
  user: UserRow,
  found: FoundProject,
  group: GroupRow | undefined,
  access: number,
  expiresAt: string | null,
  ip: string | null,
): Promise<ProjectGroupLink> {
  if (await sharingLocked(app.db, found)) throw apiError(400, 'The project sharing with group is disabled');
  if (!group || !(await canReadGroup(app.db, user, group))) throw apiError(404, 'Not Found');
  if (await outsideHierarchyRefused(app.db, found, group)) throw apiError(404, 'Not Found');
  // Only Owners may hand out Owner (GitLab's manage_owners rule).
  if (access === AccessLevel.OWNER && found.access < AccessLevel.OWNER) throw forbidden();
  // Two shares with the same group at once: the second meets the unique index, and is the same conflict.
  return onUniqueViolation(
    () =>
      app.database.transaction(async (trx) => {
        const existing = await trx
          .selectFrom('project_group_links')
          .select('id')
          .where('project_id', '=', found.project.id)
          .where('group_id', '=', group.id)
          .executeTakeFirst();
        if (existing) throw conflict('Group already shared with this group');
        const row = await trx
          .insertInto('project_group_links')
          .values({ project_id: found.project.id, group_id: group.id, group_access: access, expires_at: expiresAt, created_at: nowIso() })
          .returning(['id', 'project_id', 'group_id', 'group_access', 'expires_at'])
          .executeTakeFirstOrThrow();
        await recordAudit(trx, {
          author: user,
          entityType: 'Project',
          entityId: found.project.id,
          entityPath: `${found.namespace.full_path}/${found.project.path}`,
          eventName: 'project_group_link_created',
          targetType: 'Group',
          targetId: group.id,
          targetDetails: group.full_path,
          details: { group_access: access, expires_at: expiresAt },
          ipAddress: ip,
        });
        return row;
      }),
    () => conflict('Group already shared with this group'),
  );
}

/** Removes the link; 404 `Group Link Not Found` when there is none. */
export async function unshareProject(app: AppContext, user: UserRow, found: FoundProject, groupId: number, ip: string | null): Promise<void> {
  await app.database.transaction(async (trx) => {
    const link = await trx
      .selectFrom('project_group_links')
      .select('id')
      .where('project_id', '=', found.project.id)
      .where('group_id', '=', groupId)
      .executeTakeFirst();
    if (!link) throw notFound('Group Link');
    await trx.deleteFrom('project_group_links').where('id', '=', link.id).execute();
    await recordAudit(trx, {
      author: user,
      entityType: 'Project',
      entityId: found.project.id,
      entityPath: `${found.namespace.full_path}/${found.project.path}`,
      eventName: 'project_group_link_deleted',
      targetType: 'Group',
      targetId: groupId,
      ipAddress: ip,
    });
  });
}

/** The live links of a project: the group it is shared with, and the level granted. */
function liveLinks(db: Kysely<DB>, projectId: number) {
  return db
    .selectFrom('project_group_links')
    .innerJoin('namespaces', 'namespaces.id', 'project_group_links.group_id')
    .select(['namespaces.id', 'namespaces.traversal', 'project_group_links.group_access'])
    .where('project_group_links.project_id', '=', projectId)
    .where((eb) => eb.or([eb('project_group_links.expires_at', 'is', null), eb('project_group_links.expires_at', '>', todayUtc())]))
    .execute();
}

/** The access a user gets on a project through its group links (two queries at most). */
async function sharedProjectAccess(db: Kysely<DB>, userId: number, project: { id: number }): Promise<number> {
  const links = await liveLinks(db, project.id);
  if (links.length === 0) return 0;
  const ids = [...new Set(links.flatMap((l) => ancestorIds(l)))];
  const rows = await db
    .selectFrom('members')
    .select(['source_id', 'access_level'])
    .where('source_type', '=', 'Namespace')
    .where('source_id', 'in', ids)
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', todayUtc())]))
    .execute();
  let level = 0;
  for (const l of links) {
    const ancestors = ancestorIds(l);
    const member = Math.max(0, ...rows.filter((r) => ancestors.includes(r.source_id)).map((r) => r.access_level));
    if (member > 0) level = Math.max(level, Math.min(member, l.group_access));
  }
  return level;
}

let registered = false;

/** Registers the links with the access rules and removes them with their project. */
export function registerProjectShareAccess(): void {
  if (registered) return;
  registered = true;
  projectAccessExtensions.push(sharedProjectAccess);
  // /members/all of a project lists the members of the groups it is shared with (and of their
  // ancestors), as sharedProjectAccess grants them access; as in GitLab, a viewer who is not a
  // member of the project sees only the groups they can see.
  sharedMemberGroups.push(async function projectShareMembers(db, source, viewer) {
    if (source.type !== 'Project') return [];
    const links = await liveLinks(db, source.id);
    if (links.length === 0) return [];
    const all = links.flatMap((l) => ancestorIds(l));
    const member = viewer !== null && (await projectAccess(db, viewer, source.project, source.namespace)) >= AccessLevel.GUEST;
    const visible = member ? new Set(all) : await visibleGroupIds(db, viewer, all);
    return links.map((l) => ({ groupIds: ancestorIds(l).filter((id) => visible.has(id)), cap: l.group_access }));
  });
  projectDeletionHooks.push(async function deleteProjectGroupLinks(_app, trx, projectId) {
    await trx.deleteFrom('project_group_links').where('project_id', '=', projectId).execute();
  });
}

/**
 * `shared_with_groups` for a page of projects in one query (plus one for the caller's grants when
 * a link points at a group that is neither public nor internal): only groups the caller can see.
 */
/** The groups projects are shared with, in link order (`link_id`). */
export const sharedGroupsOf = prepared((db, projectIds: readonly number[]) =>
  db
    .selectFrom('project_group_links')
    .innerJoin('namespaces', 'namespaces.id', 'project_group_links.group_id')
    .select([
      'project_group_links.id as link_id',
      'project_group_links.project_id',
      'project_group_links.group_access',
      'project_group_links.expires_at',
      'namespaces.id',
      'namespaces.name',
      'namespaces.full_path',
      'namespaces.visibility',
      'namespaces.traversal',
    ])
    .where('project_group_links.project_id', 'in', projectIds)
    .orderBy('project_group_links.id'),
);

export type SharedGroupRow = Awaited<ReturnType<typeof sharedGroupsOf>>[number];

/** `fetched`: the rows of `sharedGroupsOf` for all of `projectIds`, when the caller read them already. */
export async function loadSharedWithGroups(
  db: Kysely<DB>,
  user: UserRow | null | undefined,
  projectIds: number[],
  fetched?: SharedGroupRow[],
): Promise<Map<number, ProjectSharedWithGroup[]>> {
  const out = new Map<number, ProjectSharedWithGroup[]>();
  const grantsOf = lazyGrants(db, user);
  let rows = fetched ? [...fetched].sort((a, b) => a.link_id - b.link_id) : [];
  for (let i = 0; !fetched && i < projectIds.length; i += 500) rows = rows.concat(await sharedGroupsOf(db, projectIds.slice(i, i + 500)));
  for (const r of rows) {
    if (!(await groupVisibleTo(user, r, grantsOf))) continue;
    const list = out.get(r.project_id) ?? [];
    list.push({ group_id: r.id, group_name: r.name, group_full_path: r.full_path, group_access_level: r.group_access, expires_at: r.expires_at });
    out.set(r.project_id, list);
  }
  return out;
}
