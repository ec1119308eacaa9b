// Resource events (GitLab's lib/api/resource_label_events.rb, resource_state_events.rb and
// resource_milestone_events.rb): the label, state and milestone history of an issue or a merge
// request the caller may read, oldest first, and one event by id. Signed-in callers only.
import type { FastifyInstance } from 'fastify';
import type { Selectable } from 'kysely';
import { findUserRefsByIds } from '../../../db/repositories/users.js';
import type { ResourceEventsTable } from '../../../db/tables/resource-events.js';
import { apiError, notFound } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import type { ProjectInfo } from '../../../services/merge-requests/rows.js';
import { AccessLevel, namespaceAccess, visibleWithoutMembership } from '../../../services/access.js';
import { presentLabelDetails, presentMilestone } from '../entities/merge-request.js';
import { presentUserBasic } from '../entities/user.js';
import { issueFromPath } from '../issues/context.js';
import { mrFromPath } from '../merge-requests/context.js';
import { pathParam } from '../repository/common.js';

type EventRow = Selectable<ResourceEventsTable>;
type Kind = 'label' | 'state' | 'milestone';

interface Eventable {
  type: 'Issue' | 'MergeRequest';
  id: number;
  info: ProjectInfo;
}

/** The issue or merge request of the path, for a signed-in caller who may read it (404 otherwise, as the notes API). */
async function eventable(c: Ctx): Promise<Eventable> {
  c.requireUser();
  if (c.params.raw.issue_iid !== undefined) {
    const s = await issueFromPath(c);
    return { type: 'Issue', id: s.issue.id, info: s.info };
  }
  const p = await mrFromPath(c, { hidden: true });
  return { type: 'MergeRequest', id: p.mr.id, info: p.info };
}

/** Entities::ResourceLabelEvent, ResourceStateEvent and ResourceMilestoneEvent, in GitLab's field order; null for a label event whose label is gone (not shown, as GitLab's read_label). */
async function present(c: Ctx, e: Eventable, rows: EventRow[]): Promise<Array<Record<string, unknown> | null>> {
  const db = c.app.db;
  const labelIds = [...new Set(rows.map((r) => r.label_id).filter((id): id is number => id !== null))];
  const milestoneIds = [...new Set(rows.map((r) => r.milestone_id).filter((id): id is number => id !== null))];
  const [users, labels, milestones] = await Promise.all([
    findUserRefsByIds(db, [...new Set(rows.map((r) => r.user_id).filter((id): id is number => id !== null))]),
    labelIds.length ? db.selectFrom('labels').selectAll().where('id', 'in', labelIds).execute() : [],
    milestoneIds.length ? db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).execute() : [],
  ]);
  // Group labels and milestones: only those of groups the caller may see (a project moved out of a
  // private group keeps events naming that group's labels).
  const groupIds = [...new Set([...milestones.map((m) => m.group_id), ...labels.map((l) => l.group_id)].filter((id): id is number => id !== null))];
  const groups = groupIds.length ? await db.selectFrom('namespaces').selectAll().where('id', 'in', groupIds).execute() : [];
  const readable = new Set<number>();
  for (const g of groups) {
    if (c.user?.is_admin || visibleWithoutMembership(g.visibility, c.user) || (await namespaceAccess(db, c.user, g)) >= AccessLevel.GUEST) readable.add(g.id);
  }
  const labelById = new Map(labels.filter((l) => l.group_id === null || readable.has(l.group_id)).map((l) => [l.id, l]));
  const milestoneById = new Map(milestones.filter((m) => m.group_id === null || readable.has(m.group_id)).map((m) => [m.id, m]));
  const groupPath = new Map(groups.map((g) => [g.id, g.full_path]));
  const projects = new Map([[e.info.project.id, e.info]]);
  return rows.map((r) => {
    const user = r.user_id === null ? undefined : users.get(r.user_id);
    const head = {
      id: r.id,
      user: user ? presentUserBasic(user, { base: c.base }) : null,
      created_at: r.created_at,
      resource_type: r.resource_type,
      resource_id: r.resource_id,
    };
    if (r.kind === 'label') {
      const label = r.label_id === null ? undefined : labelById.get(r.label_id);
      if (!label) return null;
      const l = presentLabelDetails(label);
      return { ...head, label: { id: l.id, name: l.name, color: l.color, description: l.description, description_html: l.description_html, text_color: l.text_color }, action: r.action };
    }
    if (r.kind === 'state') return { ...head, source_commit: r.source_commit, source_merge_request_id: r.source_merge_request_id, state: r.state };
    const m = r.milestone_id === null ? undefined : milestoneById.get(r.milestone_id);
    // A milestone of a group the caller may not see: the event is not theirs to read.
    if (!m && r.milestone_id !== null && milestones.some((x) => x.id === r.milestone_id)) return null;
    return { ...head, milestone: m ? presentMilestone(m, c.base, projects, m.group_id === null ? null : (groupPath.get(m.group_id) ?? null)) : null, action: r.action, state: r.state };
  });
}

function scoped(c: Ctx, e: Eventable, kind: Kind) {
  return c.app.db.selectFrom('resource_events').selectAll().where('resource_id', '=', e.id).where('resource_type', '=', e.type).where('kind', '=', kind);
}

const ENTITY: Record<Kind, string> = { label: 'ResourceLabelEvent', state: 'ResourceStateEvent', milestone: 'ResourceMilestoneEvent' };

export function registerResourceEventRoutes(app: FastifyInstance): void {
  for (const kind of ['label', 'state', 'milestone'] as const) {
    for (const parent of ['issues/:issue_iid', 'merge_requests/:merge_request_iid']) {
      const path = `/projects/:id/${parent}/resource_${kind}_events`;
      route(app, 'GET', path, async function listResourceEvents(c) {
        const e = await eventable(c);
        const rows = await paginateOffset(c, scoped(c, e, kind).orderBy('id'));
        // The page is cut first, then what the caller may not read is left out (as GitLab).
        return (await present(c, e, rows)).filter((r) => r !== null);
      });
      route(app, 'GET', `${path}/:event_id`, async function getResourceEvent(c) {
        const e = await eventable(c);
        // GitLab's event_id is a String looked up with find: anything not an id is 404.
        const raw = pathParam(c, 'event_id');
        const id = /^\d{1,9}$/.test(raw) ? Number(raw) : -1;
        const row = id > 0 ? await scoped(c, e, kind).where('id', '=', id).executeTakeFirst() : undefined;
        if (!row) throw apiError(404, '404 Not found');
        const [out] = await present(c, e, [row]);
        if (!out) throw notFound(ENTITY[kind]);
        return out;
      });
    }
  }
}
