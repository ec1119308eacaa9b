// GET /projects: offset pagination, and keyset pagination with order_by=id.
import type { FastifyInstance } from 'fastify';
import { keysetNotAvailable, paginateKeyset, paginateOffset, wantsKeyset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { ACCESS_LEVEL_VALUES } from '../../../services/access.js';
import { VISIBILITIES } from '../../../services/projects/attrs.js';
import { applyFilters, membershipCondition, ORDER_COLUMNS, orderColumn, visibleCondition, type ListFilters } from '../../../services/projects/list.js';
import { presentProjects } from '../entities/project.js';
import type { SelectQueryBuilder } from 'kysely';
import type { DB } from '../../../db/types.js';
import type { ProjectRow } from '../../../services/projects/lookup.js';
import { starredBy } from '../../../services/projects/stars.js';

function readFilters(c: Ctx): ListFilters {
  const p = c.params;
  return {
    search: p.string('search') || undefined,
    visibility: p.enum('visibility', VISIBILITIES),
    archived: p.bool('archived'),
    withMergeRequestsEnabled: p.bool('with_merge_requests_enabled'),
    withIssuesEnabled: p.bool('with_issues_enabled'),
    lastActivityAfter: p.datetime('last_activity_after'),
    lastActivityBefore: p.datetime('last_activity_before'),
    topic: p.stringArray('topic', { comma: true }),
  };
}

type ProjectQuery = SelectQueryBuilder<DB, 'projects', ProjectRow>;

/**
 * GET /projects, and with `scope` the lists that take the same parameters on fewer projects: the
 * direct forks of a project (GitLab's ForkProjectsFinder), a user's projects and starred projects.
 */
export async function listProjects(c: Ctx, scope?: (q: ProjectQuery) => ProjectQuery) {
  const p = c.params;
  const orderBy = p.enum('order_by', ORDER_COLUMNS) ?? 'created_at';
  const sort = p.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
  const simple = p.bool('simple') ?? false;
  const owned = p.bool('owned') ?? false;
  const membership = p.bool('membership') ?? false;
  const starred = p.bool('starred') ?? false;
  const minAccess = p.intEnum('min_access_level', ACCESS_LEVEL_VALUES);
  const filters = readFilters(c);
  const idAfter = p.int('id_after');
  const idBefore = p.int('id_before');
  const keyset = wantsKeyset(c);
  if (keyset && orderBy !== 'id') keysetNotAvailable();

  const db = c.app.db;
  let q = applyFilters(db.selectFrom('projects').selectAll('projects'), filters);
  if (scope) q = scope(q);
  const visible = await visibleCondition(db, c.user);
  if (visible) q = q.where(visible);
  if (starred && c.user) q = q.where('projects.id', 'in', starredBy(db, c.user.id));
  if (c.user) {
    if (owned) {
      const user = c.user;
      q = q.where('projects.namespace_id', 'in', db.selectFrom('namespaces').select('id').where('kind', '=', 'user').where('owner_id', '=', user.id));
    }
    if (membership || minAccess !== undefined) q = q.where(await membershipCondition(db, c.user, minAccess ?? 10));
  }
  const column = orderColumn(orderBy);
  let rows;
  if (keyset) {
    rows = await paginateKeyset(c, q, { order: [{ column: 'projects.id', key: 'id' }], direction: sort, mode: 'id', value: (r, k) => (r as Record<string, unknown>)[k] });
  } else {
    if (idAfter !== undefined) q = q.where('projects.id', '>', idAfter);
    if (idBefore !== undefined) q = q.where('projects.id', '<', idBefore);
    q = q.orderBy(`projects.${column}`, sort);
    if (column !== 'id') q = q.orderBy('projects.id', sort);
    rows = await paginateOffset(c, q, { keysetType: 'Project', deferredJoin: 'projects' });
  }
  // Anonymous callers always get the simple entity (GitLab: `simple` is a no-op without a user).
  return presentProjects(db, rows, { base: c.base, user: c.user, simple: simple || !c.user, statistics: p.bool('statistics') ?? false });
}

export function registerProjectListRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects', (c) => listProjects(c));
}
