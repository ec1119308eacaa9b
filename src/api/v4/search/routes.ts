// The search API (GitLab's lib/api/search.rb with its basic search): instance, group and project
// searches over projects, issues, merge requests, milestones, users, notes, and in a project the
// repository's files and commits (git grep / git log). Every scope keeps the lists' own read rules.
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { findUserRefsByIds, USER_REF_COLUMNS } from '../../../db/repositories/users.js';
import { containsCi } from '../../../db/sql-helpers.js';
import { apiError, notFound, paramError } from '../../../http/errors.js';
import { resolveId } from '../../../http/ids.js';
import { paginateArray, paginateOffset, readPage } from '../../../http/pagination.js';
import { presentSnippets, readableSnippets } from '../snippets/routes.js';
import { route, type Ctx } from '../../../http/route.js';
import { isGitError } from '../../../git/index.js';
import { AccessLevel, namespaceAccess, visibleWithoutMembership } from '../../../services/access.js';
import { loadGroupById } from '../../../services/groups/lookup.js';
import { canReadIssues, issueProjectIds } from '../../../services/issues/access.js';
import { buildIssueQuery, orderIssues, type IssueScope } from '../../../services/issues/list.js';
import { loadIssueBundle, type IssueRow } from '../../../services/issues/rows.js';
import { buildListQuery, readableProjectIds, type ListScope } from '../../../services/merge-requests/list.js';
import { loadBundle, loadProjects, type MilestoneRow, type MrRow } from '../../../services/merge-requests/rows.js';
import { checkSearchRateLimit } from '../../../services/merge-requests/search-limit.js';
import type { NoteRow } from '../../../services/merge-requests/notes.js';
import { applyFilters, visibleCondition } from '../../../services/projects/list.js';
import { findProject, fullPath, type ProjectRow } from '../../../services/projects/lookup.js';
import { canReadRepository, openRepository } from '../../../services/repository/project-repo.js';
import { presentCommitDetail } from '../entities/commit.js';
import { presentIssueBasic } from '../entities/issue.js';
import { presentMergeRequestBasic, presentMilestone } from '../entities/merge-request.js';
import { noteUserIds, presentNote } from '../entities/note.js';
import { presentProjects } from '../entities/project.js';
import { presentUserBasic } from '../entities/user.js';
import { canReadMrs } from '../merge-requests/context.js';

const GLOBAL = ['projects', 'issues', 'merge_requests', 'milestones', 'snippet_titles', 'users', 'wiki_blobs', 'blobs', 'commits', 'notes'] as const;
const GROUP = ['projects', 'issues', 'merge_requests', 'milestones', 'users', 'wiki_blobs', 'blobs', 'commits', 'notes'] as const;
const PROJECT = ['issues', 'merge_requests', 'milestones', 'notes', 'wiki_blobs', 'commits', 'blobs', 'users'] as const;
/** Scopes basic search serves only in a project (GitLab: advanced search elsewhere). */
const ADVANCED_ONLY = ['wiki_blobs', 'blobs', 'commits', 'notes'];
const STATES = ['all', 'merged', 'opened', 'closed'] as const;
const MAX_REPOSITORY_RESULTS = 10_000;

type Where =
  | { kind: 'global' }
  | { kind: 'group'; group: { id: number; traversal: string; full_path: string } }
  | { kind: 'project'; info: { project: ProjectRow; namespace: import('../../../services/projects/lookup.js').NamespaceRow }; access: number };

/** The shared parameters: `search` and `scope` required (the first missing one is named). */
function readParams(c: Ctx, scopes: readonly string[]) {
  c.params.requireAll(['search', 'scope']);
  const search = c.params.string('search')!;
  const scope = c.params.enum('scope', scopes)!;
  const state = c.params.enum('state', STATES);
  const confidential = c.params.bool('confidential');
  return { search, scope, state, confidential };
}

async function searchProjects(c: Ctx, where: Where, search: string) {
  const db = c.app.db;
  let q = applyFilters(db.selectFrom('projects').selectAll('projects'), { search });
  const visible = await visibleCondition(db, c.user);
  if (visible) q = q.where(visible);
  if (where.kind === 'group') {
    q = q.where('projects.namespace_id', 'in', db.selectFrom('namespaces').select('id').where(sql<boolean>`traversal like ${`${where.group.traversal}%`}`));
  }
  const rows = await paginateOffset(c, q.orderBy('projects.created_at', 'desc').orderBy('projects.id', 'desc'));
  return presentProjects(db, rows, { base: c.base, user: c.user, simple: true });
}

async function searchIssues(c: Ctx, where: Where, p: ReturnType<typeof readParams>) {
  let scope: IssueScope;
  if (where.kind === 'project') {
    if (!canReadIssues(c.user, where.info, where.access)) return paginateArray(c, []);
    scope = { kind: 'project', projectId: where.info.project.id, access: where.access };
  } else scope = where.kind === 'group' ? { kind: 'group', groupId: where.group.id, traversal: where.group.traversal } : { kind: 'global' };
  const state = p.state === 'opened' || p.state === 'closed' ? p.state : 'all';
  const q = await buildIssueQuery(c.app.db, scope, { state, scope: 'all', search: p.search, confidential: p.confidential, orderBy: 'created_at', sort: 'desc' }, c.user);
  const rows = (await paginateOffset(c, orderIssues(q, { orderBy: 'created_at', sort: 'desc' }))) as IssueRow[];
  const bundle = await loadIssueBundle(c.app.db, rows, where.kind === 'project' ? [where.info] : [], c.user);
  return rows.map((r) => presentIssueBasic(r, { base: c.base, bundle }));
}

async function searchMergeRequests(c: Ctx, where: Where, p: ReturnType<typeof readParams>) {
  let scope: ListScope;
  if (where.kind === 'project') {
    if (!canReadMrs(c, where.info, where.access)) return paginateArray(c, []);
    scope = { kind: 'project', projectId: where.info.project.id, access: where.access };
  } else scope = where.kind === 'group' ? { kind: 'group', groupId: where.group.id, traversal: where.group.traversal } : { kind: 'global' };
  const q = await buildListQuery(c.app.db, scope, { state: p.state ?? 'all', search: p.search, orderBy: 'created_at', sort: 'desc' }, c.user);
  const rows = (await paginateOffset(c, q)) as MrRow[];
  const bundle = await loadBundle(c.app.db, rows, where.kind === 'project' ? [where.info] : []);
  return rows.map((r) => presentMergeRequestBasic(r, { base: c.base, bundle }));
}

async function searchMilestones(c: Ctx, where: Where, search: string) {
  const db = c.app.db;
  let q = db.selectFrom('milestones').selectAll().where((eb) => eb.or([containsCi('title', search), containsCi('description', search)]));
  if (where.kind === 'project') {
    // GitLab's project search finds the project's own milestones, for callers who may read its
    // issues or merge requests (read_milestone).
    if (!canReadIssues(c.user, where.info, where.access) && !canReadMrs(c, where.info, where.access)) return paginateArray(c, []);
    q = q.where('project_id', '=', where.info.project.id);
  } else {
    // Milestones of projects whose issues or merge requests the caller may read (GitLab's MilestonesFinder over its projects).
    const projects = await issueProjectIds(db, c.user, where.kind === 'group' ? { groupTraversal: where.group.traversal } : {});
    const mrProjects = await readableProjectIds(db, c.user);
    q = q.where((eb) => eb.or([eb('project_id', 'in', projects), eb('project_id', 'in', mrProjects)]));
    if (where.kind === 'group') q = q.where('project_id', 'in', db.selectFrom('projects').select('id').where('namespace_id', 'in', db.selectFrom('namespaces').select('id').where(sql<boolean>`traversal like ${`${where.group.traversal}%`}`)));
  }
  const rows = (await paginateOffset(c, q.orderBy('id', 'desc'))) as MilestoneRow[];
  const projects = await loadProjects(db, rows.map((m) => m.project_id).filter((x): x is number => x !== null));
  return rows.map((m) => presentMilestone(m, c.base, projects));
}

async function searchUsers(c: Ctx, where: Where, search: string) {
  const db = c.app.db;
  let q = db
    .selectFrom('users')
    .select(USER_REF_COLUMNS.map((k) => `users.${k}` as const))
    .where('users.state', '=', 'active')
    // Name or username; an exact email address only for administrators (it would tell who has one).
    .where((eb) => eb.or([containsCi('users.name', search), containsCi('users.username', search), ...(c.user?.is_admin ? [eb('users.email', '=', search)] : [])]));
  // In a group or project: its members (GitLab's search among the members).
  if (where.kind === 'project') {
    const ancestors = where.info.namespace.kind === 'group' ? where.info.namespace.traversal.split('/').filter(Boolean).map(Number) : [];
    q = q.where((eb) =>
      eb.or([
        eb('users.id', 'in', db.selectFrom('members').select('user_id').where('source_type', '=', 'Project').where('source_id', '=', where.info.project.id)),
        ...(ancestors.length ? [eb('users.id', 'in', db.selectFrom('members').select('user_id').where('source_type', '=', 'Namespace').where('source_id', 'in', ancestors))] : []),
        ...(where.info.namespace.owner_id !== null ? [eb('users.id', '=', where.info.namespace.owner_id)] : []),
      ]),
    );
  } else if (where.kind === 'group') {
    const ancestors = where.group.traversal.split('/').filter(Boolean).map(Number);
    q = q.where('users.id', 'in', db.selectFrom('members').select('user_id').where('source_type', '=', 'Namespace').where('source_id', 'in', ancestors));
  }
  const rows = await paginateOffset(c, q.orderBy('users.id', 'asc'));
  return rows.map((u) => presentUserBasic(u, { base: c.base }));
}

/** Notes on the project's issues and merge requests the caller may read (never internal ones below Reporter). */
async function searchNotes(c: Ctx, where: Extract<Where, { kind: 'project' }>, search: string) {
  const db = c.app.db;
  const readIssues = canReadIssues(c.user, where.info, where.access);
  const readMrs = canReadMrs(c, where.info, where.access);
  const types = [...(readIssues ? ['Issue'] : []), ...(readMrs ? ['MergeRequest'] : [])];
  if (!types.length) return paginateArray(c, []);
  let q = db.selectFrom('notes').selectAll().where('project_id', '=', where.info.project.id).where('noteable_type', 'in', types).where('system', '=', 0).where(containsCi('body', search));
  // Internal notes: on issues for Planners and up, on merge requests for Reporters and up (as the notes APIs).
  if (!c.user?.is_admin && where.access < AccessLevel.REPORTER) {
    const planner = where.access >= AccessLevel.PLANNER;
    q = q.where((eb) => eb.or([eb('internal', '=', 0), ...(planner ? [eb('noteable_type', '=', 'Issue')] : [])]));
  }
  if (readIssues && !c.user?.is_admin && where.access < AccessLevel.PLANNER) {
    // Not on confidential issues the caller may not read.
    const visible = (await buildIssueQuery(db, { kind: 'project', projectId: where.info.project.id, access: where.access }, { state: 'all', scope: 'all', orderBy: 'id', sort: 'asc' }, c.user)).clearSelect().select('issues.id');
    q = q.where((eb) => eb.or([eb('noteable_type', '!=', 'Issue'), eb('noteable_id', 'in', visible)]));
  }
  const rows = (await paginateOffset(c, q.orderBy('id', 'desc'))) as NoteRow[];
  const users = await findUserRefsByIds(db, noteUserIds(rows));
  const iids = new Map<string, number>();
  for (const type of ['Issue', 'MergeRequest'] as const) {
    const ids = rows.filter((r) => r.noteable_type === type).map((r) => r.noteable_id);
    if (!ids.length) continue;
    const table = type === 'Issue' ? 'issues' : 'merge_requests';
    for (const r of await db.selectFrom(table).select(['id', 'iid']).where('id', 'in', ids).execute()) iids.set(`${type}:${r.id}`, r.iid);
  }
  return rows.map((n) => presentNote(n, { base: c.base, users, noteableIid: iids.get(`${n.noteable_type}:${n.noteable_id}`) ?? 0 }));
}

/** Snippets the caller may read whose title or description contains the term (GitLab's snippet_titles, global search only). */
async function searchSnippets(c: Ctx, search: string) {
  const q = (await readableSnippets(c, c.user!)).where((eb) => eb.or([containsCi('snippets.title', search), containsCi('snippets.description', search)]));
  return presentSnippets(c, await paginateOffset(c, q.orderBy('snippets.id', 'desc')));
}

/** Files and commits of the project's repository (its default branch, or `ref`). */
async function searchRepository(c: Ctx, where: Extract<Where, { kind: 'project' }>, scope: 'blobs' | 'commits', search: string) {
  if (!canReadRepository(where.info.project, c.user, where.access)) return paginateArray(c, []);
  const ref = c.params.string('ref') || where.info.project.default_branch;
  if (!ref) return paginateArray(c, []);
  const repo = await openRepository(c.app, where.info.project.id);
  const { page, perPage } = readPage(c);
  const web = `${c.base}/${fullPath(where.info.project, where.info.namespace)}`;
  try {
    if (scope === 'commits') {
      // One page and one more (to know whether there is a next one) from git log.
      const commits = await repo.listCommits({ ref, grep: search, offset: (page - 1) * perPage, limit: perPage + 1 });
      setPageHeaders(c, page, perPage, commits.length > perPage);
      return commits.slice(0, perPage).map((commit) => presentCommitDetail(commit, web, where.info.project.id));
    }
    // Results beyond the 10,000th are not served (git would read the whole repository for them).
    if (page * perPage > MAX_REPOSITORY_RESULTS) return [];
    const found = await repo.grepFiles(ref, search, page * perPage + 1);
    setPageHeaders(c, page, perPage, found.length > page * perPage);
    return found.slice((page - 1) * perPage, page * perPage).map((b) => ({
      basename: b.path.replace(/\.[^./]*$/, ''),
      data: b.data,
      path: b.path,
      filename: b.path,
      id: null,
      ref,
      startline: b.startline,
      project_id: where.info.project.id,
    }));
  } catch (e) {
    if (isGitError(e, 'not_found') || isGitError(e, 'invalid_ref')) return paginateArray(c, []);
    if (isGitError(e, 'failed')) throw apiError(408, { error: 'Request timed out' });
    throw e;
  }
}

/** Offset pagination headers without a total (search results are not counted). */
function setPageHeaders(c: Ctx, page: number, perPage: number, hasNext: boolean): void {
  c.header('X-Page', String(page));
  c.header('X-Per-Page', String(perPage));
  c.header('X-Next-Page', hasNext ? String(page + 1) : '');
  c.header('X-Prev-Page', page > 1 ? String(page - 1) : '');
}

async function run(c: Ctx, where: Where, scopes: readonly string[]) {
  const user = c.requireUser();
  const p = readParams(c, scopes);
  // Search is rate limited per user (GitLab's search_rate_limit); its answers are never kept.
  c.noStore();
  checkSearchRateLimit(`user:${user.id}`, true);
  if (where.kind !== 'project' && ADVANCED_ONLY.includes(p.scope)) throw apiError(400, { error: 'Scope supported only with advanced search or exact code search' });
  c.header('X-Search-Type', 'basic');
  // An empty search term finds nothing (not everything).
  if (p.search.trim() === '') return paginateArray(c, []);
  switch (p.scope) {
    case 'projects':
      return searchProjects(c, where, p.search);
    case 'issues':
      return searchIssues(c, where, p);
    case 'merge_requests':
      return searchMergeRequests(c, where, p);
    case 'milestones':
      return searchMilestones(c, where, p.search);
    case 'users':
      return searchUsers(c, where, p.search);
    case 'notes':
      return searchNotes(c, where as Extract<Where, { kind: 'project' }>, p.search);
    case 'blobs':
    case 'commits':
      return searchRepository(c, where as Extract<Where, { kind: 'project' }>, p.scope, p.search);
    case 'snippet_titles':
      return searchSnippets(c, p.search);
    default:
      // wiki_blobs: an advanced search scope (Elasticsearch), which Labwright does not have.
      return paginateArray(c, []);
  }
}

export function registerSearchRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/search', (c) => run(c, { kind: 'global' }, GLOBAL));
  for (const path of ['/groups/:id/search', '/groups/:id/-/search']) {
    route(app, 'GET', path, async (c) => {
      c.requireUser();
      const id = await resolveId(c, 'Namespace', String(c.params.raw.id ?? ''), { allowTopLevelPath: true });
      const group = id === null ? null : await loadGroupById(c.app.db, id);
      if (!group || (!c.user?.is_admin && !visibleWithoutMembership(group.visibility, c.user) && (await namespaceAccess(c.app.db, c.user, group)) < AccessLevel.GUEST)) throw notFound('Group');
      return run(c, { kind: 'group', group }, GROUP);
    });
  }
  for (const path of ['/projects/:id/search', '/projects/:id/-/search']) {
    route(app, 'GET', path, async (c) => {
      c.requireUser();
      const found = await findProject(c, String(c.params.raw.id ?? ''));
      return run(c, { kind: 'project', info: { project: found.project, namespace: found.namespace }, access: found.access }, PROJECT);
    });
  }
}
