// Audit events: GET /audit_events (admin), /groups/:id/audit_events (Owner) and
// /projects/:id/audit_events (Maintainer). Keyset pagination with order_by=id sort=desc only.
import type { FastifyInstance } from 'fastify';
import type { Selectable } from 'kysely';
import type { AuditEventsTable } from '../../../db/tables/groups.js';
import { notFound, paramError } from '../../../http/errors.js';
import { keysetNotAvailable, paginateKeyset, paginateOffset, wantsKeyset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { findGroup } from '../../../services/groups/lookup.js';
import { tierAvailable } from '../../../services/groups/tiers.js';
import { findProject } from '../../../services/projects/lookup.js';

type AuditRow = Selectable<AuditEventsTable>;

function presentAuditEvent(e: AuditRow) {
  let details: unknown = {};
  try {
    details = JSON.parse(e.details);
  } catch {
    /* stored by us; never fails in practice */
  }
  return {
    id: e.id,
    author_id: e.author_id ?? -1,
    entity_id: e.entity_id,
    entity_type: e.entity_type,
    event_name: e.event_name,
    details,
    created_at: e.created_at,
  };
}

/** GITLAB-COMPAT: audit events are a Premium feature; on Free the routes do not exist (404). */
function requirePremium(c: Ctx): void {
  if (!tierAvailable(c.app.config, 'PU')) throw paramError('404 Not Found', 404);
}

async function listEvents(c: Ctx, scope?: { type: string; id: number }) {
  const p = c.params;
  const createdAfter = p.datetime('created_after');
  const createdBefore = p.datetime('created_before');
  const orderBy = p.enum('order_by', ['id'] as const) ?? 'id';
  const sort = p.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
  let q = c.app.db.selectFrom('audit_events').selectAll();
  if (scope) q = q.where('entity_type', '=', scope.type).where('entity_id', '=', scope.id);
  else {
    const entityType = p.enum('entity_type', ['User', 'Group', 'Project', 'Gitlab::Audit::InstanceScope'] as const);
    const entityId = p.int('entity_id');
    if (entityType) q = q.where('entity_type', '=', entityType);
    if (entityId !== undefined) q = q.where('entity_id', '=', entityId);
  }
  if (createdAfter) q = q.where('created_at', '>=', createdAfter);
  if (createdBefore) q = q.where('created_at', '<=', createdBefore);
  let rows: AuditRow[];
  if (wantsKeyset(c)) {
    if (orderBy !== 'id' || sort !== 'desc') keysetNotAvailable();
    rows = await paginateKeyset(c, q, { order: [{ column: 'id', key: 'id' }], direction: 'desc', mode: 'id', value: (r, k) => (r as Record<string, unknown>)[k] });
  } else {
    rows = await paginateOffset(c, q.orderBy('id', sort));
  }
  return rows.map(presentAuditEvent);
}

// GET /audit_events
async function instanceEvents(c: Ctx) {
  c.requireAdmin();
  requirePremium(c);
  return listEvents(c);
}

// GET /audit_events/:id
async function instanceEvent(c: Ctx) {
  c.requireAdmin();
  requirePremium(c);
  const id = c.params.int('id');
  const row = id === undefined ? undefined : await c.app.db.selectFrom('audit_events').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound();
  return presentAuditEvent(row);
}

// GET /groups/:id/audit_events
async function groupEvents(c: Ctx) {
  c.requireUser();
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  requirePremium(c);
  return listEvents(c, { type: 'Group', id: group.id });
}

// GET /groups/:id/audit_events/:audit_event_id
async function groupEvent(c: Ctx) {
  c.requireUser();
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  requirePremium(c);
  const id = c.params.int('audit_event_id');
  const row =
    id === undefined
      ? undefined
      : await c.app.db.selectFrom('audit_events').selectAll().where('id', '=', id).where('entity_type', '=', 'Group').where('entity_id', '=', group.id).executeTakeFirst();
  if (!row) throw notFound();
  return presentAuditEvent(row);
}

// GET /projects/:id/audit_events
async function projectEvents(c: Ctx) {
  c.requireUser();
  const { project } = await findProject(c, String(c.params.raw.id ?? ''), { minAccess: AccessLevel.MAINTAINER });
  requirePremium(c);
  return listEvents(c, { type: 'Project', id: project.id });
}

export function registerAuditEventRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/audit_events', instanceEvents);
  route(app, 'GET', '/audit_events/:id', instanceEvent);
  route(app, 'GET', '/groups/:id/audit_events', groupEvents);
  route(app, 'GET', '/groups/:id/audit_events/:audit_event_id', groupEvent);
  route(app, 'GET', '/projects/:id/audit_events', projectEvents);
}
