// Reading and listing groups: GET /groups, /groups/:id, /subgroups, /descendant_groups,
// /transfer_locations (spec document 3 §4.2).
import type { FastifyInstance } from 'fastify';
import { containsCi } from '../../../db/sql-helpers.js';
import { keysetNotAvailable, paginateKeyset, paginateOffset, wantsKeyset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { buildGroupListQuery, orderGroupList, type ListedGroupRow, type ListScope } from '../../../services/groups/list.js';
import { findGroup } from '../../../services/groups/lookup.js';
import { underGrants, userGrants } from '../../../services/groups/visibility.js';
import { presentGroupLocation } from '../entities/group.js';
import { presentGroupDetailFor, presentGroupList } from './present.js';

/** One list endpoint body: filters, then keyset (anonymous, by name) or offset pagination. */
async function listWithScope(c: Ctx, scope: ListScope) {
  const { query, opts, grants } = await buildGroupListQuery(c.app.db, c.app.config, c.user, c.params, scope);
  let rows: ListedGroupRow[];
  if (!c.user && wantsKeyset(c)) {
    // Unauthenticated callers may page by keyset, ordered by name ascending only.
    if (opts.orderBy !== 'name' || opts.sort !== 'asc') keysetNotAvailable();
    rows = (await paginateKeyset(c, query, {
      order: [
        { column: 'namespaces.name', key: 'name' },
        { column: 'namespaces.id', key: 'id' },
      ],
      direction: 'asc',
      mode: 'cursor',
      value: (r, k) => (r as Record<string, unknown>)[k],
    })) as ListedGroupRow[];
  } else {
    // The 50,000 offset cap applies where keyset exists: unauthenticated requests.
    rows = (await paginateOffset(c, orderGroupList(query, opts), { keysetType: c.user ? undefined : 'Group' })) as ListedGroupRow[];
  }
  return presentGroupList(c, rows, { grants, statistics: opts.statistics, withCustomAttributes: opts.withCustomAttributes });
}

// GET /groups
async function listGroups(c: Ctx) {
  return listWithScope(c, {});
}

// GET /groups/:id
async function showGroup(c: Ctx) {
  const withProjects = c.params.bool('with_projects') ?? true;
  const withCustomAttributes = c.params.bool('with_custom_attributes') ?? false;
  const { group, settings, access } = await findGroup(c, c.params.raw.id);
  return presentGroupDetailFor(c, group, settings, access, { withProjects, withCustomAttributes });
}

// GET /groups/:id/subgroups
async function listSubgroups(c: Ctx) {
  const { group } = await findGroup(c, c.params.raw.id);
  return listWithScope(c, { parentId: group.id });
}

// GET /groups/:id/descendant_groups
async function listDescendants(c: Ctx) {
  const { group } = await findGroup(c, c.params.raw.id);
  return listWithScope(c, { descendantsOf: { id: group.id, traversal: group.traversal } });
}

// GET /groups/:id/groups/shared
async function listInvitedGroups(c: Ctx) {
  const { group } = await findGroup(c, c.params.raw.id);
  // Visible groups only: the caller learns nothing about private groups through the invitation.
  if (!c.params.has('all_available')) c.params.raw.all_available = 'true';
  return listWithScope(c, { invitedGroupId: group.id });
}

// GET /groups/:id/transfer_locations
async function transferLocations(c: Ctx) {
  const user = c.requireUser();
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  const search = c.params.string('search');
  let q = c.app.db
    .selectFrom('namespaces')
    .selectAll('namespaces')
    .where('namespaces.kind', '=', 'group')
    .where('namespaces.traversal', 'not like', `${group.traversal}%`);
  if (group.parent_id !== null) q = q.where('namespaces.id', '!=', group.parent_id);
  if (!user.is_admin) {
    const grants = await userGrants(c.app.db, user.id);
    q = q.where((eb) => underGrants(eb, grants, AccessLevel.OWNER));
  }
  if (search) q = q.where(containsCi('namespaces.name', search));
  q = q.orderBy('namespaces.name').orderBy('namespaces.id');
  const rows = await paginateOffset(c, q);
  return rows.map((g) => presentGroupLocation(g, c.base));
}

export function registerGroupReadRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/groups', listGroups, { cache: true });
  route(app, 'GET', '/groups/:id', showGroup, { cache: true });
  route(app, 'GET', '/groups/:id/subgroups', listSubgroups, { cache: true });
  route(app, 'GET', '/groups/:id/descendant_groups', listDescendants);
  route(app, 'GET', '/groups/:id/transfer_locations', transferLocations);
  route(app, 'GET', '/groups/:id/groups/shared', listInvitedGroups);
}
