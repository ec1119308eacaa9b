// Projects of a group (spec document 3 §4.2.2): GET /groups/:id/projects, /projects/shared, and
// DELETE /groups/:id/shared_projects/:project_id.
import type { FastifyInstance } from 'fastify';
import { starredBy } from '../../../services/projects/stars.js';
import { sql } from 'kysely';
import { notFound } from '../../../http/errors.js';
import { keysetNotAvailable, paginateKeyset, paginateOffset, wantsKeyset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel, ACCESS_LEVEL_VALUES } from '../../../services/access.js';
import { recordAudit } from '../../../services/audit.js';
import { findGroup } from '../../../services/groups/lookup.js';
import { tierAvailable } from '../../../services/groups/tiers.js';
import { applyFilters, membershipCondition, ORDER_COLUMNS, orderColumn } from '../../../services/projects/list.js';
import { presentProjects } from '../entities/project.js';
import { projectGroupLinksAvailable } from './present.js';
import { visibleProjectsQuery, type ProjectQuery } from './projects-query.js';

const VISIBILITIES = ['public', 'internal', 'private'] as const;

function linkedProjectIds(groupId: number) {
  return (eb: any) => eb.selectFrom('project_group_links').select('project_group_links.project_id').where('project_group_links.group_id', '=', groupId);
}

/** Filters and pagination common to both project lists of a group. */
async function finishProjectList(c: Ctx, q: ProjectQuery) {
  const p = c.params;
  const orderBy = p.enum('order_by', ORDER_COLUMNS) ?? 'created_at';
  const sort = p.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
  const simple = p.bool('simple') ?? false;
  const owned = p.bool('owned') ?? false;
  const starred = p.bool('starred') ?? false;
  const minAccess = p.intEnum('min_access_level', ACCESS_LEVEL_VALUES);
  const active = p.bool('active');
  q = applyFilters(q, {
    search: p.string('search') || undefined,
    visibility: p.enum('visibility', VISIBILITIES),
    archived: p.bool('archived'),
    withIssuesEnabled: p.bool('with_issues_enabled'),
    withMergeRequestsEnabled: p.bool('with_merge_requests_enabled'),
    topic: p.stringArray('topic', { comma: true }),
  });
  if (active !== undefined) q = q.where('projects.archived', '=', active ? 0 : 1);
  if (starred && c.user) q = q.where('projects.id', 'in', starredBy(c.app.db, c.user.id));
  if (c.user && owned) q = q.where('projects.creator_id', '=', c.user.id);
  if (c.user && minAccess !== undefined) q = q.where((await membershipCondition(c.app.db, c.user, minAccess)) as never);
  let rows;
  if (wantsKeyset(c)) {
    if (orderBy !== 'id') keysetNotAvailable();
    rows = await paginateKeyset(c, q, { order: [{ column: 'projects.id', key: 'id' }], direction: sort, mode: 'id', value: (r, k) => (r as Record<string, unknown>)[k] });
  } else {
    if (orderBy === 'similarity' && p.string('search')) {
      q = q.orderBy(sql`case when lower(projects.name) = ${p.string('search')!.toLowerCase()} then 0 else 1 end`);
    }
    const column = orderColumn(orderBy);
    q = q.orderBy(`projects.${column}`, orderBy === 'similarity' ? 'asc' : sort);
    if (column !== 'id') q = q.orderBy('projects.id', sort);
    rows = await paginateOffset(c, q, { keysetType: 'Project', deferredJoin: 'projects' });
  }
  return presentProjects(c.app.db, rows, { base: c.base, user: c.user, simple: simple || !c.user, statistics: p.bool('statistics') ?? false });
}

// GET /groups/:id/projects
async function groupProjects(c: Ctx) {
  const { group } = await findGroup(c, c.params.raw.id);
  const withShared = c.params.bool('with_shared') ?? true;
  const includeSubgroups = c.params.bool('include_subgroups') ?? false;
  const withSecurityReports = c.params.bool('with_security_reports') ?? false;
  let q = await visibleProjectsQuery(c.app.db, c.user);
  // U: only projects with security reports; Labwright runs no scanners, so there are none.
  if (withSecurityReports && tierAvailable(c.app.config, 'U')) q = q.where('projects.id', '<', 0);
  const shared = withShared && (await projectGroupLinksAvailable(c.app.db));
  q = q.where((eb) => {
    const own = includeSubgroups
      ? eb('projects.namespace_id', 'in', eb.selectFrom('namespaces').select('namespaces.id').where('namespaces.traversal', 'like', `${group.traversal}%`))
      : eb('projects.namespace_id', '=', group.id);
    return shared ? eb.or([own, eb('projects.id', 'in', linkedProjectIds(group.id)(eb))]) : own;
  });
  return finishProjectList(c, q);
}

// GET /groups/:id/projects/shared
async function sharedProjects(c: Ctx) {
  const { group } = await findGroup(c, c.params.raw.id);
  let q = await visibleProjectsQuery(c.app.db, c.user);
  if (!(await projectGroupLinksAvailable(c.app.db))) q = q.where('projects.id', '<', 0);
  else q = q.where((eb) => eb('projects.id', 'in', linkedProjectIds(group.id)(eb)));
  return finishProjectList(c, q);
}

// DELETE /groups/:id/shared_projects/:project_id
async function unshareProject(c: Ctx) {
  const user = c.requireUser();
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  const projectId = c.params.int('project_id', { required: true })!;
  if (!(await projectGroupLinksAvailable(c.app.db))) throw notFound('Project');
  const db = c.app.db as any;
  const link = await db.selectFrom('project_group_links').select('id').where('project_id', '=', projectId).where('group_id', '=', group.id).executeTakeFirst();
  if (!link) throw notFound('Project');
  await c.app.database.transaction(async (trx) => {
    await (trx as any).deleteFrom('project_group_links').where('id', '=', link.id).execute();
    await recordAudit(trx, {
      author: user,
      entityType: 'Group',
      entityId: group.id,
      entityPath: group.full_path,
      eventName: 'project_group_link_deleted',
      targetType: 'Project',
      targetId: projectId,
      ipAddress: c.req.ip,
    });
  });
  return undefined;
}

export function registerGroupProjectRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/groups/:id/projects', groupProjects, { cache: true });
  route(app, 'GET', '/groups/:id/projects/shared', sharedProjects);
  route(app, 'DELETE', '/groups/:id/shared_projects/:project_id', unshareProject);
}
