// The group list filters shared by GET /groups, /groups/:id/subgroups and /descendant_groups
// (spec document 3 §4.2.1), as one SQL query over namespaces left-joined to group_settings.
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Config } from '../../config.js';
import type { UserRow } from '../../db/repositories/users.js';
import type { DB } from '../../db/types.js';
import { containsCi } from '../../db/sql-helpers.js';
import type { Params } from '../../http/params.js';
import { ACCESS_LEVEL_VALUES } from '../access.js';
import { settingsOrDefault, type GroupRow, type GroupSettingsRow } from './lookup.js';
import { tierAvailable } from './tiers.js';
import { underGrants, userGrants, visibleGroups, type Grant } from './visibility.js';

export type GroupListQuery = SelectQueryBuilder<DB, 'namespaces' | 'group_settings', any>;

/** A row of the group list query: the group and its settings columns (null without a settings row). */
export type ListedGroupRow = GroupRow & {
  gs_id: number | null;
  gs_settings: string | null;
  gs_archived: number | null;
  gs_marked_for_deletion_on: string | null;
  gs_repository_storage: string | null;
  gs_created_by_id: number | null;
  gs_updated_at: string | null;
};

/** The settings of a listed group, as loadSettings would give them. */
export function settingsOfListed(r: ListedGroupRow): GroupSettingsRow {
  if (r.gs_id === null || r.gs_id === undefined) return settingsOrDefault(r.id, undefined);
  return {
    id: r.gs_id,
    namespace_id: r.id,
    settings: r.gs_settings!,
    archived: r.gs_archived!,
    marked_for_deletion_on: r.gs_marked_for_deletion_on,
    repository_storage: r.gs_repository_storage!,
    created_by_id: r.gs_created_by_id,
    updated_at: r.gs_updated_at!,
  };
}

export interface ListScope {
  /** Immediate children of this group. */
  parentId?: number;
  /** Every descendant of this traversal (excluding the group itself). */
  descendantsOf?: { id: number; traversal: string };
  /** Groups this group was invited to (shared with it). */
  invitedGroupId?: number;
}

export interface ListOptions {
  orderBy: 'name' | 'path' | 'id' | 'similarity';
  sort: 'asc' | 'desc';
  search?: string;
  statistics: boolean;
  withCustomAttributes: boolean;
}

/** Reads the list parameters and builds the filtered query (ordering is applied by the caller). */
export async function buildGroupListQuery(
  db: Kysely<DB>,
  config: Config,
  user: UserRow | null,
  p: Params,
  scope: ListScope,
): Promise<{ query: GroupListQuery; opts: ListOptions; grants: Grant[] }> {
  const skip = p.intArray('skip_groups', { comma: true }) ?? [];
  const isAdmin = user?.is_admin === 1;
  const allAvailable = p.bool('all_available') ?? (user ? isAdmin : true);
  const search = p.string('search');
  const orderBy = p.enum('order_by', ['name', 'path', 'id', 'similarity'] as const) ?? 'name';
  const sort = p.enum('sort', ['asc', 'desc'] as const) ?? 'asc';
  const statistics = (p.bool('statistics') ?? false) && isAdmin;
  const visibility = p.enum('visibility', ['public', 'internal', 'private'] as const);
  const withCustomAttributes = (p.bool('with_custom_attributes') ?? false) && isAdmin;
  const owned = p.bool('owned') ?? false;
  const minAccess = p.intEnum('min_access_level', ACCESS_LEVEL_VALUES);
  const topLevelOnly = p.bool('top_level_only') ?? false;
  const repositoryStorage = p.string('repository_storage');
  const markedOn = p.date('marked_for_deletion_on');
  const active = p.bool('active');
  const archived = p.bool('archived');
  const customAttributes = p.has('custom_attributes') ? p.hash('custom_attributes') : undefined;

  // An administrator listing all available groups sees every group as Owner: no grants needed.
  const needGrants = user !== null && user !== undefined && !(isAdmin && allAvailable && !owned && minAccess === undefined);
  const grants = needGrants ? await userGrants(db, user.id) : [];
  let q = db
    .selectFrom('namespaces')
    .leftJoin('group_settings', 'group_settings.namespace_id', 'namespaces.id')
    .selectAll('namespaces')
    // Each group's settings come with its row (settingsOfListed), not from a second query.
    .select([
      'group_settings.id as gs_id',
      'group_settings.settings as gs_settings',
      'group_settings.archived as gs_archived',
      'group_settings.marked_for_deletion_on as gs_marked_for_deletion_on',
      'group_settings.repository_storage as gs_repository_storage',
      'group_settings.created_by_id as gs_created_by_id',
      'group_settings.updated_at as gs_updated_at',
    ])
    .where('namespaces.kind', '=', 'group') as unknown as GroupListQuery;

  if (scope.parentId !== undefined) q = q.where('namespaces.parent_id', '=', scope.parentId);
  if (scope.descendantsOf) {
    q = q
      .where('namespaces.traversal', 'like', `${scope.descendantsOf.traversal}%`)
      .where('namespaces.id', '!=', scope.descendantsOf.id);
  }

  if (scope.invitedGroupId !== undefined) {
    const invited = scope.invitedGroupId;
    q = q.where('namespaces.id', 'in', (eb) =>
      eb.selectFrom('group_group_links').select('group_group_links.shared_group_id').where('group_group_links.shared_with_group_id', '=', invited),
    );
  }

  // Who sees what: owned and min_access_level take precedence over all_available.
  if (!user) {
    q = q.where('namespaces.visibility', '=', 'public');
  } else if (owned) {
    q = q.where('namespaces.id', 'in', (eb) =>
      eb
        .selectFrom('members')
        .select('members.source_id')
        .where('members.source_type', '=', 'Namespace')
        .where('members.user_id', '=', user.id)
        .where('members.access_level', '>=', 50),
    );
  } else if (minAccess !== undefined) {
    q = q.where((eb) => underGrants(eb as never, grants, minAccess));
  } else if (allAvailable) {
    q = q.where((eb) => visibleGroups(eb as never, user, grants));
  } else {
    q = q.where((eb) => underGrants(eb as never, grants));
  }

  if (skip.length) q = q.where('namespaces.id', 'not in', skip);
  if (search) {
    // The top-level list matches full paths too; subgroup lists match short paths only.
    const fields = scope.parentId === undefined && scope.descendantsOf === undefined ? ['namespaces.name', 'namespaces.path', 'namespaces.full_path'] : ['namespaces.name', 'namespaces.path'];
    q = q.where((eb) => eb.or(fields.map((f) => containsCi(f, search))));
  }
  if (visibility) q = q.where('namespaces.visibility', '=', visibility);
  if (topLevelOnly) q = q.where('namespaces.parent_id', 'is', null);
  if (repositoryStorage !== undefined && isAdmin && tierAvailable(config, 'PU')) {
    q = q.where(sql`coalesce(group_settings.repository_storage, 'default')`, '=', repositoryStorage);
  }
  if (markedOn !== undefined && tierAvailable(config, 'PU')) q = q.where('group_settings.marked_for_deletion_on', '=', markedOn);
  if (archived !== undefined) {
    q = archived
      ? q.where('group_settings.archived', '=', 1)
      : q.where((eb) => eb.or([eb('group_settings.archived', 'is', null), eb('group_settings.archived', '=', 0)]));
  }
  if (active !== undefined) {
    q = active
      ? q
          .where((eb) => eb.or([eb('group_settings.archived', 'is', null), eb('group_settings.archived', '=', 0)]))
          .where('group_settings.marked_for_deletion_on', 'is', null)
      : q.where((eb) => eb.or([eb('group_settings.archived', '=', 1), eb('group_settings.marked_for_deletion_on', 'is not', null)]));
  }
  if (customAttributes && isAdmin) {
    for (const [key, value] of Object.entries(customAttributes)) {
      q = q.where('namespaces.id', 'in', (eb) =>
        eb
          .selectFrom('namespace_custom_attributes')
          .select('namespace_custom_attributes.namespace_id')
          .where('namespace_custom_attributes.key', '=', key)
          .where('namespace_custom_attributes.value', '=', String(value)),
      );
    }
  }
  return { query: q, opts: { orderBy, sort, search, statistics, withCustomAttributes }, grants };
}

/** Applies the order with an id tie-breaker (`similarity` puts exact name/path matches first). */
export function orderGroupList(q: GroupListQuery, o: ListOptions): GroupListQuery {
  if (o.orderBy === 'similarity') {
    if (o.search) {
      const s = o.search.toLowerCase();
      q = q.orderBy(sql`case when lower(namespaces.path) = ${s} or lower(namespaces.name) = ${s} then 0 else 1 end`);
    }
    return q.orderBy('namespaces.name', 'asc').orderBy('namespaces.id', 'asc');
  }
  const col = o.orderBy === 'id' ? 'namespaces.id' : o.orderBy === 'path' ? 'namespaces.path' : 'namespaces.name';
  q = q.orderBy(col, o.sort);
  return o.orderBy === 'id' ? q : q.orderBy('namespaces.id', 'asc');
}
