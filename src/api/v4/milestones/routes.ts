// Project and group milestones (GitLab's milestones API), which merge requests reference.
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../../http/route.js';
import { route } from '../../../http/route.js';
import { conflict, forbidden, notFound, notGiven, paramError, validationError } from '../../../http/errors.js';
import { resolveId } from '../../../http/ids.js';
import { paginateOffset } from '../../../http/pagination.js';
import { nowIso } from '../../../db/database.js';
import { insertEvents } from '../../../services/event-rows.js';
import { AccessLevel, namespaceAccess, visibleWithoutMembership } from '../../../services/access.js';
import { findProject } from '../../../services/projects/lookup.js';
import { buildListQuery } from '../../../services/merge-requests/list.js';
import { dbId, loadBundle, loadProjects, pathId, type MilestoneRow, type ProjectInfo } from '../../../services/merge-requests/rows.js';
import { presentMergeRequestBasic, presentMilestone } from '../entities/merge-request.js';
import { presentIssue } from '../entities/issue.js';
import { canReadIssues } from '../../../services/issues/access.js';
import { canReadMrs } from '../merge-requests/context.js';
import { buildIssueQuery, orderIssues } from '../../../services/issues/list.js';
import { loadIssueBundle, type IssueRow } from '../../../services/issues/rows.js';
import { lockOwnerRow } from '../../../services/owner-lock.js';

interface Owner {
  kind: 'project' | 'group';
  id: number;
  access: number;
  info?: ProjectInfo;
  groupPath?: string;
  traversal?: string;
}

/**
 * A project's milestones are read where its issues or its merge requests are (GitLab's
 * read_milestone: 403 where neither feature is available to the caller).
 */
async function projectOwner(c: Ctx): Promise<Owner> {
  const found = await findProject(c, String(c.params.raw.id));
  const info = { project: found.project, namespace: found.namespace };
  if (!canReadIssues(c.user, info, found.access) && !canReadMrs(c, info, found.access)) throw forbidden();
  return { kind: 'project', id: found.project.id, access: found.access, info };
}

async function groupOwner(c: Ctx): Promise<Owner> {
  const id = await resolveId(c, 'Namespace', String(c.params.raw.id), { allowTopLevelPath: true });
  const ns = id === null ? undefined : await c.app.db.selectFrom('namespaces').selectAll().where('id', '=', id).where('kind', '=', 'group').executeTakeFirst();
  if (!ns) throw notFound('Group');
  const access = c.user?.is_admin ? AccessLevel.OWNER : await namespaceAccess(c.app.db, c.user, ns);
  if (!c.user?.is_admin && !visibleWithoutMembership(ns.visibility, c.user) && access < AccessLevel.GUEST) throw notFound('Group');
  return { kind: 'group', id: ns.id, access, groupPath: ns.full_path, traversal: ns.traversal };
}

function scoped(c: Ctx, o: Owner) {
  return c.app.db.selectFrom('milestones').selectAll().where(o.kind === 'project' ? 'project_id' : 'group_id', '=', o.id);
}

async function present(c: Ctx, o: Owner, rows: MilestoneRow[]) {
  const projects = o.info ? new Map([[o.info.project.id, o.info]]) : await loadProjects(c.app.db, []);
  return rows.map((m) => presentMilestone(m, c.base, projects, o.groupPath ?? null));
}

async function findMilestone(c: Ctx, o: Owner): Promise<MilestoneRow> {
  const raw = String(c.params.raw.milestone_id ?? '');
  const m = pathId(raw) > 0 ? await scoped(c, o).where('id', '=', pathId(raw)).executeTakeFirst() : undefined;
  if (!m) throw notFound('Milestone');
  return m;
}

function requireWrite(c: Ctx, o: Owner): void {
  c.requireUser();
  if (o.access < AccessLevel.REPORTER) throw forbidden();
}

function register(app: FastifyInstance, prefix: string, ownerOf: (c: Ctx) => Promise<Owner>): void {
  // GET /projects/:id/milestones, GET /groups/:id/milestones
  route(app, 'GET', `${prefix}/milestones`, async function listMilestones(c) {
    const o = await ownerOf(c);
    let q = scoped(c, o);
    const state = c.params.enum('state', ['active', 'closed'] as const);
    if (state) q = q.where('state', '=', state);
    const title = c.params.string('title');
    if (title !== undefined) q = q.where('title', '=', title);
    const search = c.params.string('search');
    if (search) q = q.where((eb) => eb.or([eb('title', 'like', `%${search}%`), eb('description', 'like', `%${search}%`)]));
    const iids = c.params.intArray('iids', { comma: true });
    if (iids?.length) q = q.where('iid', 'in', iids.map(dbId));
    const rows = await paginateOffset(c, q.orderBy('due_date').orderBy('id', 'desc'));
    return present(c, o, rows);
  });

  // GET /projects/:id/milestones/:milestone_id
  route(app, 'GET', `${prefix}/milestones/:milestone_id`, async function getMilestone(c) {
    const o = await ownerOf(c);
    return (await present(c, o, [await findMilestone(c, o)]))[0];
  });

  // POST /projects/:id/milestones
  route(app, 'POST', `${prefix}/milestones`, async function createMilestone(c) {
    const o = await ownerOf(c);
    requireWrite(c, o);
    if (!c.params.has('title')) throw notGiven('title');
    const title = c.params.string('title', { allowBlank: false, max: 255 })!;
    const now = nowIso();
    const row = await c.app.database.transaction(async (trx) => {
      // The owner's row is locked first: two creations cannot both pass the title check or take one iid (PostgreSQL).
      await lockOwnerRow(c.app, trx, o.kind === 'project' ? 'projects' : 'namespaces', o.id);
      const col = o.kind === 'project' ? 'project_id' : 'group_id';
      const dup = await trx.selectFrom('milestones').select('id').where(col, '=', o.id).where('title', '=', title).executeTakeFirst();
      if (dup) throw conflict('Milestone already exists');
      const max = await trx.selectFrom('milestones').select((eb) => eb.fn.max<number>('iid').as('m')).where(col, '=', o.id).executeTakeFirst();
      const values = {
        iid: Number(max?.m ?? 0) + 1,
        project_id: o.kind === 'project' ? o.id : null,
        group_id: o.kind === 'group' ? o.id : null,
        title,
        description: c.params.string('description') ?? null,
        state: 'active',
        due_date: c.params.date('due_date') ?? null,
        start_date: c.params.date('start_date') ?? null,
        created_at: now,
        updated_at: now,
      };
      const ins = await trx.insertInto('milestones').values(values).returning('id').executeTakeFirstOrThrow();
      // GitLab's open_milestone event (project milestones; a group's are no project's activity).
      if (o.kind === 'project') await insertEvents(trx, [{ projectId: o.id, authorId: c.user!.id, action: 'created', targetType: 'Milestone', targetId: ins.id }]);
      return Object.assign({}, values, { id: ins.id });
    });
    return (await present(c, o, [row]))[0];
  });

  // PUT /projects/:id/milestones/:milestone_id
  route(app, 'PUT', `${prefix}/milestones/:milestone_id`, async function updateMilestone(c) {
    const o = await ownerOf(c);
    requireWrite(c, o);
    const m = await findMilestone(c, o);
    c.params.requireAtLeastOne(['title', 'description', 'due_date', 'start_date', 'state_event']);
    const set: Partial<MilestoneRow> = { updated_at: nowIso() };
    if (c.params.has('title')) set.title = c.params.string('title', { allowBlank: false, max: 255 })!;
    if (c.params.has('description')) set.description = c.params.nullableString('description') ?? null;
    if (c.params.has('due_date')) set.due_date = c.params.date('due_date') ?? null;
    if (c.params.has('start_date')) set.start_date = c.params.date('start_date') ?? null;
    const ev = c.params.enum('state_event', ['close', 'activate'] as const);
    if (ev) set.state = ev === 'close' ? 'closed' : 'active';
    await c.app.database.transaction(async (trx) => {
      // GitLab's milestone validation: a title is unique within its project or group.
      if (set.title !== undefined && set.title !== m.title) {
        await lockOwnerRow(c.app, trx, o.kind === 'project' ? 'projects' : 'namespaces', o.id);
        const col = o.kind === 'project' ? 'project_id' : 'group_id';
        const dup = await trx.selectFrom('milestones').select('id').where(col, '=', o.id).where('title', '=', set.title).where('id', '!=', m.id).executeTakeFirst();
        if (dup) throw validationError({ title: ['has already been taken'] });
      }
      await trx.updateTable('milestones').set(set).where('id', '=', m.id).execute();
      // close_milestone / reopen_milestone, when the state changed.
      if (o.kind === 'project' && set.state && set.state !== m.state) {
        await insertEvents(trx, [{ projectId: o.id, authorId: c.user!.id, action: set.state === 'closed' ? 'closed' : 'reopened', targetType: 'Milestone', targetId: m.id }]);
      }
    });
    return (await present(c, o, [Object.assign({}, m, { ...set })]))[0];
  });

  // DELETE /projects/:id/milestones/:milestone_id
  route(app, 'DELETE', `${prefix}/milestones/:milestone_id`, async function deleteMilestone(c) {
    const o = await ownerOf(c);
    requireWrite(c, o);
    const m = await findMilestone(c, o);
    await c.app.database.transaction(async (trx) => {
      await trx.updateTable('merge_requests').set({ milestone_id: null }).where('milestone_id', '=', m.id).execute();
      await trx.updateTable('issues').set({ milestone_id: null }).where('milestone_id', '=', m.id).execute();
      await trx.deleteFrom('milestones').where('id', '=', m.id).execute();
      // Its events go with it; then, as GitLab's destroy_milestone, one saying it was destroyed
      // (which no one is shown: its target is gone).
      await trx.deleteFrom('events').where('target_type', '=', 'Milestone').where('target_id', '=', m.id).execute();
      if (o.kind === 'project') await insertEvents(trx, [{ projectId: o.id, authorId: c.user!.id, action: 'destroyed', targetType: 'Milestone', targetId: m.id }]);
    });
    return undefined;
  });

  // GET /projects/:id/milestones/:milestone_id/merge_requests
  route(app, 'GET', `${prefix}/milestones/:milestone_id/merge_requests`, async function milestoneMrs(c) {
    const o = await ownerOf(c);
    const m = await findMilestone(c, o);
    const scope = o.kind === 'project' ? { kind: 'project' as const, projectId: o.id, access: o.access } : { kind: 'group' as const, groupId: o.id, traversal: o.traversal! };
    const q = (await buildListQuery(c.app.db, scope, { orderBy: 'created_at', sort: 'asc', state: 'all' }, c.user)).where('merge_requests.milestone_id', '=', m.id);
    const rows = await paginateOffset(c, q);
    const bundle = await loadBundle(c.app.db, rows, o.info ? [o.info] : []);
    return rows.map((r) => presentMergeRequestBasic(r, { base: c.base, bundle }));
  });

  // GET /projects/:id/milestones/:milestone_id/issues: the milestone's issues the caller may read.
  route(app, 'GET', `${prefix}/milestones/:milestone_id/issues`, async function milestoneIssues(c) {
    const o = await ownerOf(c);
    const m = await findMilestone(c, o);
    const scope = o.kind === 'project' ? { kind: 'project' as const, projectId: o.id, access: o.access } : { kind: 'group' as const, groupId: o.id, traversal: o.traversal! };
    if (o.info && !canReadIssues(c.user, o.info, o.access)) return [];
    const q = (await buildIssueQuery(c.app.db, scope, { state: 'all', scope: 'all', orderBy: 'created_at', sort: 'asc' }, c.user)).where('issues.milestone_id', '=', m.id);
    const rows = (await paginateOffset(c, orderIssues(q, { orderBy: 'created_at', sort: 'asc' }))) as IssueRow[];
    const bundle = await loadIssueBundle(c.app.db, rows, o.info ? [o.info] : [], c.user);
    return rows.map((r) => presentIssue(r, { base: c.base, bundle }));
  });
}

export function registerMilestoneRoutes(app: FastifyInstance): void {
  register(app, '/projects/:id', projectOwner);
  register(app, '/groups/:id', groupOwner);
}
