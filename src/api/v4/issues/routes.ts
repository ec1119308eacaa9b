// Issues (GitLab's lib/api/issues.rb): lists in the three scopes with IssuesFinder's filters and
// keyset pagination on project lists, one issue, create, update (close, reopen), delete,
// statistics, participants, subscriptions and the merge requests that close an issue.
import type { FastifyInstance } from 'fastify';
import { nowIso } from '../../../db/database.js';
import { findUserById, findUserRefsByIds } from '../../../db/repositories/users.js';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import { apiError, forbidden, notFound, notGiven, paramError, unauthorized } from '../../../http/errors.js';
import { resolveId } from '../../../http/ids.js';
import { keysetNotAvailable, paginateArray, paginateKeyset, paginateOffset, wantsKeyset } from '../../../http/pagination.js';
import { AccessLevel, canReadProject, namespaceAccess, visibleWithoutMembership } from '../../../services/access.js';
import { loadGroupById } from '../../../services/groups/lookup.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { userDeletionHooks } from '../../../services/users.js';
import { checkSpam } from '../../../services/merge-requests/spam.js';
import { checkSearchRateLimit } from '../../../services/merge-requests/search-limit.js';
import { dbId, loadBundle, type MrRow, type ProjectInfo } from '../../../services/merge-requests/rows.js';
import { buildListQuery } from '../../../services/merge-requests/list.js';
import { canAdminIssues, canCreateIssue, canDeleteIssue, canReadIssue, canReadIssues, canUpdateIssue } from '../../../services/issues/access.js';
import { effectiveAccess } from '../../../services/projects/lookup.js';
import { buildIssueQuery, orderColumns, orderIssues, type IssueFilters, type IssueScope } from '../../../services/issues/list.js';
import { findIssueById, loadIssueBundle, type IssueRow } from '../../../services/issues/rows.js';
import { registerClosingHooks } from '../../../services/issues/closing.js';
import { copyIssue } from '../../../services/issues/move.js';
import { createIssue, deleteIssue, deleteProjectIssues, updateIssue } from '../../../services/issues/write.js';
import { presentIssue, type IssuePresentCtx } from '../entities/issue.js';
import { presentMergeRequestBasic } from '../entities/merge-request.js';
import { presentUserBasic } from '../entities/user.js';
import { registerIssueExtraRoutes } from './extra-routes.js';
import { registerIssueLinkRoutes } from './link-routes.js';
import { assigneesOf, issueFromPath, issueProject, issueSubscribed, type IssueProject, type IssueScopeCtx } from './context.js';
import { mrFromPath } from '../merge-requests/context.js';
import { parseIssueAttributes, parseIssueCreate, parseIssueFilters, UPDATE_PARAMS } from './params.js';

async function presentOne(c: Ctx, p: IssueProject, issue: IssueRow, subscribed?: boolean): Promise<Record<string, unknown>> {
  const bundle = await loadIssueBundle(c.app.db, [issue], [p.info], c.user);
  return presentIssue(issue, { base: c.base, bundle, subscribed, withLabelsDetails: c.params.bool('with_labels_details') === true });
}

async function presentFresh(c: Ctx, p: IssueProject, issue: IssueRow): Promise<Record<string, unknown>> {
  const assignees = await assigneesOf(c.app.db, issue.id);
  return presentOne(c, p, issue, await issueSubscribed(c, Object.assign({}, p, { issue, assignees })));
}

async function listAndPresent(c: Ctx, scope: IssueScope, filters: IssueFilters, ctx: Partial<IssuePresentCtx>, known: ProjectInfo[] = []) {
  if (filters.search) {
    c.noStore();
    checkSearchRateLimit(c.user ? `user:${c.user.id}` : `ip:${c.req.ip}`, c.user !== null);
  }
  const q = await buildIssueQuery(c.app.db, scope, filters, c.user);
  let rows: IssueRow[];
  if (wantsKeyset(c)) {
    // Keyset pagination: project lists, ordered by one of the keyset orderings (spec §4.2's table).
    const cols = scope.kind === 'project' ? orderColumns(filters.orderBy) : null;
    if (!cols) keysetNotAvailable();
    rows = await paginateKeyset(c, q, { order: cols, direction: filters.sort, mode: 'cursor', value: (r, k) => (r as Record<string, unknown>)[k] });
  } else {
    rows = (await paginateOffset(c, orderIssues(q, filters))) as IssueRow[];
  }
  const bundle = await loadIssueBundle(c.app.db, rows, known, c.user);
  const pctx: IssuePresentCtx = { base: c.base, bundle, withLabelsDetails: c.params.bool('with_labels_details') === true, ...ctx };
  return rows.map((r) => presentIssue(r, pctx));
}

async function groupParam(c: Ctx) {
  const id = await resolveId(c, 'Namespace', String(c.params.raw.id ?? ''), { allowTopLevelPath: true });
  if (id === null) throw notFound('Group');
  const group = await loadGroupById(c.app.db, id);
  if (!group) throw notFound('Group');
  if (!c.user?.is_admin && !visibleWithoutMembership(group.visibility, c.user) && (await namespaceAccess(c.app.db, c.user, group)) < AccessLevel.GUEST) throw notFound('Group');
  return group;
}

/** Counts by state of the filtered issues (GitLab's issues_statistics), the state filter itself ignored. */
async function statistics(c: Ctx, scope: IssueScope, filters: IssueFilters) {
  const rows = await (await buildIssueQuery(c.app.db, scope, { ...filters, state: 'all' }, c.user))
    .clearSelect()
    .select((eb) => ['issues.state', eb.fn.countAll<number>().as('n')])
    .groupBy('issues.state')
    .execute();
  const by = new Map(rows.map((r) => [r.state, Number(r.n)]));
  const opened = by.get('opened') ?? 0;
  const closed = by.get('closed') ?? 0;
  return { statistics: { counts: { all: opened + closed, closed, opened } } };
}

/**
 * The assignee kept (the free tier's first), if they may read the issue (GitLab's
 * assignee_can_read?: the project's issues for a new issue, the issue itself otherwise).
 */
async function assignable(c: Ctx, p: IssueProject, ids: number[], issue: IssueRow | null): Promise<number[]> {
  const first = ids.find((id) => id > 0);
  const user = first === undefined ? undefined : await findUserById(c.app.db, dbId(first));
  if (!user) return [];
  const access = await effectiveAccess(c.app.db, user, p.info.project, p.info.namespace);
  if (!canReadProject(user, p.info.project, access) || !canReadIssues(user, p.info, access)) return [];
  if (issue && !canReadIssue(user, access, issue, [])) return [];
  return [user.id];
}

function mayOwn(c: Ctx, p: IssueProject): boolean {
  return !!c.user?.is_admin || p.access >= AccessLevel.OWNER;
}

export function registerIssueRoutes(app: FastifyInstance): void {
  registerClosingHooks();
  registerIssueExtraRoutes(app);
  registerIssueLinkRoutes(app);
  projectDeletionHooks.push(async function deleteIssues(_app, trx, projectId) {
    await deleteProjectIssues(trx, projectId);
  });
  // A deleted user is no one's assignee any more (their issues stay, as their merge requests do).
  userDeletionHooks.push(async function unassignIssues(_app, trx, user) {
    await trx.deleteFrom('issue_assignees').where('user_id', '=', user.id).execute();
  });

  // GET /issues: the caller's issues (created_by_me unless another scope; anonymous only with scope=all).
  route(app, 'GET', '/issues', async function listAllIssues(c) {
    const filters = parseIssueFilters(c, { scope: 'created_by_me', nonArchived: true });
    if (!c.user && filters.scope !== 'all') throw unauthorized();
    return listAndPresent(c, { kind: 'global' }, filters, {});
  }, { cache: true });

  route(app, 'GET', '/issues_statistics', async function allIssueStatistics(c) {
    const filters = parseIssueFilters(c, { scope: 'created_by_me', nonArchived: true });
    if (!c.user && filters.scope !== 'all') throw unauthorized();
    return statistics(c, { kind: 'global' }, filters);
  }, { cache: true });

  // GET /issues/:id: one issue by its global id, for administrators.
  route(app, 'GET', '/issues/:id', async function showIssueById(c) {
    const user = c.requireUser();
    if (!user.is_admin) throw forbidden();
    const raw = String(c.params.raw.id ?? '');
    if (!/^\d+$/.test(raw)) throw paramError('id is invalid');
    const issue = raw.length > 10 ? undefined : await findIssueById(c.app.db, dbId(Number(raw)));
    if (!issue) throw notFound('Issue');
    const bundle = await loadIssueBundle(c.app.db, [issue], [], c.user);
    if (!bundle.projects.has(issue.project_id)) throw notFound('Issue');
    return presentIssue(issue, { base: c.base, bundle, subscribed: false });
  });

  route(app, 'GET', '/groups/:id/issues', async function listGroupIssues(c) {
    const group = await groupParam(c);
    const filters = parseIssueFilters(c, { scope: 'all', nonArchived: true });
    if (wantsKeyset(c)) keysetNotAvailable();
    return listAndPresent(c, { kind: 'group', groupId: group.id, traversal: group.traversal }, filters, { group: { id: group.id, full_path: group.full_path } });
  }, { cache: true });

  route(app, 'GET', '/groups/:id/issues_statistics', async function groupIssueStatistics(c) {
    const group = await groupParam(c);
    return statistics(c, { kind: 'group', groupId: group.id, traversal: group.traversal }, parseIssueFilters(c, { scope: 'all', nonArchived: true }));
  }, { cache: true });

  route(app, 'GET', '/projects/:id/issues', async function listProjectIssues(c) {
    const p = await issueProject(c);
    const filters = parseIssueFilters(c, { scope: 'all', nonArchived: false });
    // IssuesFinder finds nothing where the caller may not read issues.
    if (!canReadIssues(c.user, p.info, p.access)) {
      if (wantsKeyset(c) && !orderColumns(filters.orderBy)) keysetNotAvailable();
      return paginateArray(c, []);
    }
    return listAndPresent(c, { kind: 'project', projectId: p.info.project.id, access: p.access }, filters, {}, [p.info]);
  }, { cache: true });

  route(app, 'GET', '/projects/:id/issues_statistics', async function projectIssueStatistics(c) {
    const p = await issueProject(c);
    const filters = parseIssueFilters(c, { scope: 'all', nonArchived: false });
    if (!canReadIssues(c.user, p.info, p.access)) return { statistics: { counts: { all: 0, closed: 0, opened: 0 } } };
    return statistics(c, { kind: 'project', projectId: p.info.project.id, access: p.access }, filters);
  }, { cache: true });

  route(app, 'GET', '/projects/:id/issues/:issue_iid', async function showIssue(c) {
    const s = await issueFromPath(c);
    return presentOne(c, s, s.issue, await issueSubscribed(c, s));
  }, { cache: true });

  route(app, 'POST', '/projects/:id/issues', async function createIssueRoute(c) {
    const user = c.requireUser();
    const p = await issueProject(c);
    // Project members (Guest and up) set a new issue's metadata too (GitLab's set_issue_metadata on creation).
    const input = parseIssueCreate(c, { mayAdmin: canAdminIssues(user, p.access) || p.access >= AccessLevel.GUEST, owner: mayOwn(c, p) });
    if (input.assigneeIds?.length) input.assigneeIds = await assignable(c, p, input.assigneeIds, null);
    if (!canCreateIssue(user, p.info, p.access)) throw forbidden();
    await checkSpam(c.app, { title: input.title, description: input.description ?? null, user, ip: c.req.ip }, captchaHeaders(c.req.headers), 'Issue');
    const issue = await createIssue(c.app, p.info, user, input);
    return presentFresh(c, p, issue);
  });

  route(app, 'PUT', '/projects/:id/issues/:issue_iid', async function updateIssueRoute(c) {
    const user = c.requireUser();
    const s = await issueFromPath(c);
    c.params.requireAtLeastOne(UPDATE_PARAMS);
    if (!canUpdateIssue(user, s.info, s.access, s.issue, s.assignees)) throw forbidden();
    const mayAdmin = canAdminIssues(user, s.access);
    // Confidentiality of an existing issue is metadata: Planners and up only (set_confidentiality).
    const attrs = parseIssueAttributes(c, { mayAdmin, owner: mayOwn(c, s), create: false, mayConfidential: mayAdmin });
    if (attrs.assigneeIds?.length) attrs.assigneeIds = await assignable(c, s, attrs.assigneeIds, s.issue);
    if (attrs.title !== undefined || attrs.description !== undefined) {
      await checkSpam(c.app, { title: attrs.title ?? s.issue.title, description: attrs.description ?? s.issue.description, user, ip: c.req.ip }, captchaHeaders(c.req.headers), 'Issue');
    }
    const issue = await updateIssue(c.app, s.info, s.issue, user, attrs);
    return presentFresh(c, s, issue);
  });

  route(app, 'DELETE', '/projects/:id/issues/:issue_iid', async function deleteIssueRoute(c) {
    const user = c.requireUser();
    const s = await issueFromPath(c);
    if (!canDeleteIssue(user, s.access)) throw forbidden();
    refuseIfModifiedSince(c, s.issue.updated_at);
    await deleteIssue(c.app, s.issue);
    return undefined;
  });

  // GET …/participants: the author, the assignees and the commenters the caller may see.
  route(app, 'GET', '/projects/:id/issues/:issue_iid/participants', async function issueParticipants(c) {
    const s = await issueFromPath(c);
    let notes = c.app.db.selectFrom('notes').select('author_id').where('noteable_type', '=', 'Issue').where('noteable_id', '=', s.issue.id).where('system', '=', 0);
    if (!canAdminIssues(c.user, s.access)) notes = notes.where('internal', '=', 0);
    const commenters = (await notes.orderBy('id').execute()).map((r) => r.author_id);
    const ids = [...new Set([s.issue.author_id, ...s.assignees, ...commenters])];
    const users = await findUserRefsByIds(c.app.db, ids);
    return paginateArray(c, ids.map((id) => users.get(id)).filter((u) => u !== undefined).map((u) => presentUserBasic(u!, { base: c.base })));
  });

  // GET …/closed_by and …/related_merge_requests: the merge requests that close the issue when merged.
  for (const suffix of ['closed_by', 'related_merge_requests']) {
    route(app, 'GET', `/projects/:id/issues/:issue_iid/${suffix}`, async function closingMrs(c) {
      const s = await issueFromPath(c);
      const mrIds = c.app.db.selectFrom('merge_requests_closing_issues').select('merge_request_id').where('issue_id', '=', s.issue.id);
      const q = (await buildListQuery(c.app.db, { kind: 'global' }, { orderBy: 'created_at', sort: 'desc', state: 'all' }, c.user)).where('merge_requests.id', 'in', mrIds);
      const rows = (await paginateOffset(c, q)) as MrRow[];
      const bundle = await loadBundle(c.app.db, rows);
      // Only requests of projects whose merge requests the caller may read (the list query's rule).
      return rows.map((r) => presentMergeRequestBasic(r, { base: c.base, bundle }));
    });
  }

  // POST …/move and …/clone (Issues::MoveService, CloneService): 201 with the new issue; refusals are 400.
  for (const action of ['move', 'clone'] as const) {
    route(app, 'POST', `/projects/:id/issues/:issue_iid/${action}`, async function moveOrClone(c) {
      const user = c.requireUser();
      const s = await issueFromPath(c).catch((e) => {
        throw (e as { status?: number }).status === 404 ? notFound('Issue') : e;
      });
      if (!c.params.has('to_project_id')) throw notGiven('to_project_id');
      const withNotes = action === 'clone' ? c.params.bool('with_notes') === true : true;
      const target = await issueProject(c, String(c.params.raw.to_project_id));
      const noun = action === 'move' ? 'move' : 'clone';
      // can_move? / can_clone?: not moved yet, admin_issue on the issue and in the target project.
      const allowed = s.issue.moved_to_id === null && canAdminIssues(user, s.access) && canReadIssues(user, target.info, target.access) && canAdminIssues(user, target.access) && !target.info.project.archived && !s.info.project.archived;
      if (!allowed) throw apiError(400, `Cannot ${noun} issue due to insufficient permissions!`);
      if (action === 'move' && target.info.project.id === s.info.project.id) throw apiError(400, 'Cannot move issue to project it originates from!');
      const created = await copyIssue(c.app, { info: s.info, issue: s.issue }, target.info, user, { move: action === 'move', withNotes });
      return presentFresh(c, target, created);
    });
  }

  // GET /projects/:id/merge_requests/:merge_request_iid/closes_issues: the issues the request closes
  // when merged that the caller may read (Entities::Issue, without `subscribed`).
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/closes_issues', async function closesIssues(c) {
    const p = await mrFromPath(c);
    const ids = c.app.db.selectFrom('merge_requests_closing_issues').select('issue_id').where('merge_request_id', '=', p.mr.id);
    const q = (await buildIssueQuery(c.app.db, { kind: 'global' }, { state: 'all', scope: 'all', orderBy: 'id', sort: 'asc' }, c.user)).where('issues.id', 'in', ids);
    const rows = (await paginateOffset(c, q.orderBy('issues.id', 'asc'))) as IssueRow[];
    const bundle = await loadIssueBundle(c.app.db, rows, [p.info], c.user);
    return rows.map((r) => presentIssue(r, { base: c.base, bundle }));
  });

  // POST …/subscribe and …/unsubscribe: 201 with the issue, 304 when nothing changes.
  for (const [action, want] of [['subscribe', true], ['unsubscribe', false]] as const) {
    route(app, 'POST', `/projects/:id/issues/:issue_iid/${action}`, async function issueSubscription(c) {
      const user = c.requireUser();
      const s = await issueFromPath(c);
      if ((await issueSubscribed(c, s)) === want) {
        c.status(304);
        return undefined;
      }
      const now = nowIso();
      await c.app.db
        .insertInto('subscriptions')
        .values({ user_id: user.id, project_id: s.info.project.id, subscribable_type: 'Issue', subscribable_id: s.issue.id, subscribed: want ? 1 : 0, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['subscribable_id', 'subscribable_type', 'user_id']).doUpdateSet({ subscribed: want ? 1 : 0, updated_at: now }))
        .execute();
      return presentOne(c, s, s.issue, want);
    });
  }
}

function captchaHeaders(headers: Record<string, unknown>) {
  const one = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { response: one(headers['x-service-captcha-response']), spamLogId: one(headers['x-service-spam-log-id']) };
}
