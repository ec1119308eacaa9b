// GET /projects: which projects a caller may list, and the filters GitLab offers on them. The
// visibility rule is one SQL condition so pagination counts and pages stay exact.
import type { ExpressionBuilder, Expression, Kysely, SqlBool } from 'kysely';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { containsCi, like } from '../../db/sql-helpers.js';
import { AccessLevel } from '../access.js';

type EB = ExpressionBuilder<DB, 'projects'>;

function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/**
 * Projects the user reaches through membership at `minLevel` or more: direct project members,
 * members of the project's group or any ancestor, and the owner of a personal namespace.
 */
export async function membershipCondition(db: Kysely<DB>, user: UserRow, minLevel: number): Promise<(eb: EB) => Expression<SqlBool>> {
  const groups = await db
    .selectFrom('members')
    .select('source_id')
    .where('source_type', '=', 'Namespace')
    .where('user_id', '=', user.id)
    .where('access_level', '>=', minLevel)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today())]))
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
          .where((e) => e.or([e('members.expires_at', 'is', null), e('members.expires_at', '>', today())])),
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
    }
    return eb.or(ors);
  };
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

/** The column an order_by sorts on; star counts are all zero and similarity needs search ranking. */
export function orderColumn(orderBy: OrderBy): 'id' | 'name' | 'path' | 'created_at' | 'updated_at' | 'last_activity_at' {
  if (orderBy === 'star_count') return 'id';
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
