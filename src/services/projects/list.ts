// GET /projects: which projects a caller may list, and the filters GitLab offers on them. The
// visibility rule is one SQL condition so pagination counts and pages stay exact.
import { sql, type ExpressionBuilder, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { containsCi, escapeLike, like } from '../../db/sql-helpers.js';
import { AccessLevel } from '../access.js';
import { todayUtc } from '../personal-access-tokens.js';

type EB = ExpressionBuilder<DB, 'projects'>;

/**
 * Projects the user reaches through membership at `minLevel` or more: direct project members,
 * members of the project's group or any ancestor, the owner of a personal namespace, and members
 * of a group the project (project_group_links) or its group (group_group_links) is shared with.
 * One query for the user's groups, then everything else is subqueries of the list's own query.
 */
export async function membershipCondition(db: Kysely<DB>, user: UserRow, minLevel: number): Promise<(eb: EB) => Expression<SqlBool>> {
  const groups = await db
    .selectFrom('members')
    .select('source_id')
    .where('source_type', '=', 'Namespace')
    .where('user_id', '=', user.id)
    .where('access_level', '>=', minLevel)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', todayUtc())]))
    .execute();
  const groupIds = groups.map((g) => g.source_id);
  return (eb: EB) => {
    const ors: Expression<SqlBool>[] = [
      eb(
        'projects.id',
        'in',
        eb
          .selectFrom('members')
          .select('members.source_id')
          .where('members.source_type', '=', 'Project')
          .where('members.user_id', '=', user.id)
          .where('members.access_level', '>=', minLevel)
          .where((e) => e.or([e('members.expires_at', 'is', null), e('members.expires_at', '>', todayUtc())])),
      ),
      eb(
        'projects.namespace_id',
        'in',
        eb.selectFrom('namespaces').select('namespaces.id').where('namespaces.kind', '=', 'user').where('namespaces.owner_id', '=', user.id),
      ),
    ];
    if (groupIds.length > 0) {
      // A group and every descendant: their traversal strings contain '/<group id>/'.
      ors.push(
        eb(
          'projects.namespace_id',
          'in',
          eb
            .selectFrom('namespaces')
            .select('namespaces.id')
            .where((e) => e.or(groupIds.map((gid) => like('namespaces.traversal', `%/${gid}/%`)))),
        ),
      );
      // Sharing: the lower of the link's level and the member's must reach minLevel, so both do.
      const inMemberGroups = (column: string) => (e: ExpressionBuilder<any, any>) => e.or(groupIds.map((gid) => like(column, `%/${gid}/%`)));
      // Projects shared with one of the user's groups (project_group_links).
      ors.push(
        eb(
          'projects.id',
          'in',
          eb
            .selectFrom('project_group_links as pgl')
            .innerJoin('namespaces as pgl_group', 'pgl_group.id', 'pgl.group_id')
            .select('pgl.project_id')
            .where('pgl.group_access', '>=', minLevel)
            .where((e) => e.or([e('pgl.expires_at', 'is', null), e('pgl.expires_at', '>', todayUtc())]))
            .where(inMemberGroups('pgl_group.traversal')),
        ),
      );
      // Projects of groups (and their subgroups) shared with one of the user's groups (group_group_links).
      ors.push(
        eb(
          'projects.namespace_id',
          'in',
          eb
            .selectFrom('namespaces as shared_sub')
            .select('shared_sub.id')
            .where((e) =>
              e.exists(
                e
                  .selectFrom('group_group_links as ggl')
                  .innerJoin('namespaces as ggl_shared', 'ggl_shared.id', 'ggl.shared_group_id')
                  .innerJoin('namespaces as ggl_with', 'ggl_with.id', 'ggl.shared_with_group_id')
                  .select('ggl.id')
                  .where(sql<SqlBool>`${sql.ref('shared_sub.traversal')} like ${sql.ref('ggl_shared.traversal')} || '%'`)
                  .where('ggl.group_access', '>=', minLevel)
                  .where((x) => x.or([x('ggl.expires_at', 'is', null), x('ggl.expires_at', '>', todayUtc())]))
                  .where(inMemberGroups('ggl_with.traversal')),
              ),
            ),
        ),
      );
    }
    return eb.or(ors);
  };
}

/**
 * Projects whose `feature` (issues, merge requests) the user may read, as a subquery of project
 * ids: admins all; public projects (internal ones for users who are not external) with the feature
 * enabled; and projects the user reaches through membership at `minLevel` or above
 * (membershipCondition: direct, an ancestor group, a personal namespace, a share; unexpired), the
 * feature not disabled. `membersOnly`: the membership part alone; `groupTraversal`: only projects
 * in that group and its subgroups; `nonArchived`: not archived ones.
 */
export async function featureProjectIds(
  db: Kysely<DB>,
  user: UserRow | null,
  feature: 'issues_access_level' | 'merge_requests_access_level',
  opts: { minLevel?: number; membersOnly?: boolean; groupTraversal?: string; nonArchived?: boolean } = {},
) {
  let q = db.selectFrom('projects').select('projects.id').where(`projects.${feature}`, '!=', 'disabled');
  if (opts.groupTraversal !== undefined) {
    q = q.where('projects.namespace_id', 'in', db.selectFrom('namespaces').select('namespaces.id').where(like('namespaces.traversal', `${escapeLike(opts.groupTraversal)}%`)));
  }
  if (opts.nonArchived) q = q.where('projects.archived', '=', 0);
  if (user?.is_admin) return q;
  const member = user ? await membershipCondition(db, user, opts.minLevel ?? AccessLevel.GUEST) : null;
  return q.where((eb) => {
    const ors: Expression<SqlBool>[] = [];
    if (member) ors.push(member(eb));
    if (!opts.membersOnly) {
      const open = [eb('projects.visibility', '=', 'public')];
      if (user && !user.external) open.push(eb('projects.visibility', '=', 'internal'));
      ors.push(eb.and([eb.or(open), eb(`projects.${feature}`, '=', 'enabled')]));
    }
    return ors.length ? eb.or(ors) : sql<SqlBool>`1 = 0`;
  });
}

/** Read rule of canReadProject as SQL: public, internal for non-external users, members; admins all. */
export async function visibleCondition(db: Kysely<DB>, user: UserRow | null): Promise<((eb: EB) => Expression<SqlBool>) | null> {
  if (!user) return (eb) => eb('projects.visibility', '=', 'public');
  if (user.is_admin) return null;
  const member = await membershipCondition(db, user, AccessLevel.GUEST);
  const open = user.external ? ['public'] : ['public', 'internal'];
  return (eb) => eb.or([eb('projects.visibility', 'in', open), member(eb)]);
}

export const ORDER_COLUMNS = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at', 'similarity', 'star_count'] as const;
export type OrderBy = (typeof ORDER_COLUMNS)[number];

/** The column an order_by sorts on; similarity needs search ranking. */
export function orderColumn(orderBy: OrderBy): 'id' | 'name' | 'path' | 'created_at' | 'updated_at' | 'last_activity_at' | 'star_count' {
  if (orderBy === 'similarity') return 'name';
  return orderBy;
}

export interface ListFilters {
  search?: string;
  visibility?: string;
  archived?: boolean;
  withMergeRequestsEnabled?: boolean;
  withIssuesEnabled?: boolean;
  namespaceIds?: number[];
  lastActivityAfter?: string;
  lastActivityBefore?: string;
  topic?: string[];
}

/** Plain column filters every project list shares. */
export function applyFilters<Q extends { where: (...args: any[]) => Q }>(q: Q, f: ListFilters): Q {
  let out = q;
  if (f.search) {
    const s = f.search;
    out = out.where((eb: EB) => eb.or([containsCi('projects.name', s), containsCi('projects.path', s), containsCi('projects.description', s)]));
  }
  if (f.visibility) out = out.where('projects.visibility', '=', f.visibility);
  if (f.archived !== undefined) out = out.where('projects.archived', '=', f.archived ? 1 : 0);
  if (f.withMergeRequestsEnabled) out = out.where('projects.merge_requests_access_level', '!=', 'disabled');
  if (f.withIssuesEnabled) out = out.where('projects.issues_access_level', '!=', 'disabled');
  if (f.namespaceIds) out = out.where('projects.namespace_id', 'in', f.namespaceIds.length ? f.namespaceIds : [-1]);
  if (f.lastActivityAfter) out = out.where('projects.last_activity_at', '>', f.lastActivityAfter);
  if (f.lastActivityBefore) out = out.where('projects.last_activity_at', '<', f.lastActivityBefore);
  for (const t of f.topic ?? []) out = out.where(containsCi('projects.topics', JSON.stringify(t)));
  return out;
}
