// Events (GitLab's lib/api/events.rb and project_events.rb, EventsFinder): the contribution events
// of the current user (`scope=all`: of every project they are a member of), of any user, and of a
// project. Filters: action, target_type, before/after (dates, exclusive), sort (id, desc by
// default); offset pages of at most 100. As in GitLab, only events of projects the caller may see
// are counted, and each page then leaves out the events whose target the caller may not read
// (a page can be short), so the totals can count a few events the pages do not show.
import type { FastifyInstance } from 'fastify';
import type { Selectable } from 'kysely';
import { findUserRefsByIds, type UserRefRow } from '../../../db/repositories/users.js';
import type { EventsTable } from '../../../db/tables/events.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { registerActivity } from '../../../services/activity.js';
import { AccessLevel } from '../../../services/access.js';
import { EVENT_ACTIONS, EVENT_TARGET_TYPES, NOTE_EVENT_TYPES } from '../../../services/event-rows.js';
import { canReadIssue, canReadIssues } from '../../../services/issues/access.js';
import type { NoteRow } from '../../../services/merge-requests/notes.js';
import type { IssueRow } from '../../../services/issues/rows.js';
import { membershipCondition, visibleCondition } from '../../../services/projects/list.js';
import { effectiveAccess, findProject, joinProjects, projectQueries, type NamespaceRow, type ProjectRow } from '../../../services/projects/lookup.js';
import { canReadRepository } from '../../../services/repository/project-repo.js';
import { repoFor } from '../../../services/merge-requests/git-ops.js';
import { presentNote } from '../entities/note.js';
import { presentUserBasic } from '../entities/user.js';
import { canReadMrs } from '../merge-requests/context.js';
import { profileVisible, userParam } from '../projects/stars.js';
import { pathParam } from '../repository/common.js';
import { canReadWiki, pagesAtSlugs, wikiRepository, type WikiPage } from '../../../services/wikis.js';

const WIKI = 'WikiPage::Meta';

type EventRow = Selectable<EventsTable>;
type Source = { kind: 'project'; projectId: number } | { kind: 'user'; userId: number } | { kind: 'member'; userId: number };

const NOTE_TYPES = new Set(NOTE_EVENT_TYPES);

interface Filters {
  action?: string;
  targetType?: string;
  before?: string;
  after?: string;
  sort: 'asc' | 'desc';
}

/** The filters in Grape's order of declaration (its first error wins). */
function readFilters(c: Ctx): Filters {
  // GitLab declares `values: Event.actions`, a Hash, which Grape reads as its options form: nothing
  // is validated, and an unknown action filters nothing (EventsFinder#by_action).
  const raw = c.params.string('action');
  const action = raw !== undefined && (EVENT_ACTIONS as readonly string[]).includes(raw) ? raw : undefined;
  const targetType = c.params.enum('target_type', Object.keys(EVENT_TARGET_TYPES));
  const before = c.params.date('before');
  const after = c.params.date('after');
  const sort = c.params.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
  return { action, targetType: targetType ? EVENT_TARGET_TYPES[targetType] : undefined, before, after, sort };
}

/** The day after a `YYYY-MM-DD` date: `after` keeps events from the start of the next day (created_at > after.end_of_day). */
function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

async function listEvents(c: Ctx, source: Source) {
  const f = readFilters(c);
  const db = c.app.db;
  let q = db.selectFrom('events').selectAll('events');
  if (source.kind === 'project') {
    q = q.where('events.project_id', '=', source.projectId);
  } else {
    if (source.kind === 'user') q = q.where('events.author_id', '=', source.userId);
    else {
      const member = await membershipCondition(db, c.user!, AccessLevel.GUEST);
      q = q.where('events.project_id', 'in', db.selectFrom('projects').select('projects.id').where(member));
    }
    // EventsFinder#by_current_user_access: only projects the caller may see.
    const visible = await visibleCondition(db, c.user);
    if (visible) q = q.where('events.project_id', 'in', db.selectFrom('projects').select('projects.id').where(visible));
  }
  if (f.action) q = q.where('events.action', '=', f.action);
  if (f.targetType) q = q.where('events.target_type', '=', f.targetType);
  if (f.before) q = q.where('events.created_at', '<', f.before);
  if (f.after) {
    // The day after 9999-12-31 is beyond every date: nothing is after it.
    const next = nextDay(f.after);
    q = /^\d{4}-\d{2}-\d{2}$/.test(next) ? q.where('events.created_at', '>=', next) : q.where('events.id', '<', 0);
  }
  const rows = await paginateOffset(c, q.orderBy('events.id', f.sort));
  return presentEvents(c, rows);
}

interface Loaded {
  projects: Map<number, { project: ProjectRow; namespace: NamespaceRow; access: number }>;
  issues: Map<number, { id: number; iid: number; title: string; confidential: number; author_id: number; assignees: number[] }>;
  mrs: Map<number, { id: number; iid: number; title: string }>;
  milestones: Map<number, { id: number; iid: number; title: string }>;
  notes: Map<number, NoteRow>;
  /** Titles of the commits commented on, by `projectId:sha`. */
  commits: Map<string, string>;
  users: Map<number, UserRefRow>;
  /** Wiki page metas, and the page each names now (null when it is gone). */
  wikiMetas: Map<number, { id: number; title: string; page: WikiPage | null }>;
}

function idsOf(rows: EventRow[], types: (t: string | null) => boolean): number[] {
  return [...new Set(rows.filter((r) => types(r.target_type) && r.target_id !== null).map((r) => r.target_id!))];
}

/** Everything a page of events shows or is judged by, a few queries for the whole page. */
async function loadPage(c: Ctx, rows: EventRow[]): Promise<Loaded> {
  const db = c.app.db;
  const projectIds = [...new Set(rows.map((r) => r.project_id))];
  const pq = projectQueries(db, projectIds);
  const noteIds = idsOf(rows, (t) => t !== null && NOTE_TYPES.has(t));
  const [projects, namespaces, notes] = await Promise.all([
    projectIds.length ? pq.projects.execute() : [],
    projectIds.length ? pq.namespaces.execute() : [],
    noteIds.length ? (db.selectFrom('notes').selectAll().where('id', 'in', noteIds).execute() as Promise<NoteRow[]>) : [],
  ]);
  const noteables = (type: string) => notes.filter((n) => n.noteable_type === type).map((n) => n.noteable_id);
  const issueIds = [...new Set([...idsOf(rows, (t) => t === 'Issue'), ...noteables('Issue')])];
  const mrIds = [...new Set([...idsOf(rows, (t) => t === 'MergeRequest'), ...noteables('MergeRequest')])];
  const milestoneIds = idsOf(rows, (t) => t === 'Milestone');
  const [issues, mrs, milestones] = await Promise.all([
    issueIds.length ? db.selectFrom('issues').select(['id', 'iid', 'title', 'confidential', 'author_id']).where('id', 'in', issueIds).execute() : [],
    mrIds.length ? db.selectFrom('merge_requests').select(['id', 'iid', 'title']).where('id', 'in', mrIds).execute() : [],
    milestoneIds.length ? db.selectFrom('milestones').select(['id', 'iid', 'title']).where('id', 'in', milestoneIds).execute() : [],
  ]);
  // Assignees matter only for confidential issues (who besides Planners may read them).
  const confidential = issues.filter((i) => i.confidential === 1).map((i) => i.id);
  const assignees = confidential.length ? await db.selectFrom('issue_assignees').select(['issue_id', 'user_id']).where('issue_id', 'in', confidential).execute() : [];
  const users = await findUserRefsByIds(db, [...new Set([...rows.map((r) => r.author_id), ...notes.flatMap((n) => [n.author_id, ...(n.resolved_by_id ? [n.resolved_by_id] : [])])])]);
  // The caller's access to each project of the page (one lookup per project, not per event).
  // The commits commented on: one read per distinct commit (a note's title is its noteable's).
  const commits = new Map<string, string>();
  for (const n of notes) {
    const key = `${n.project_id}:${n.commit_id}`;
    if (n.noteable_type !== 'Commit' || !n.commit_id || commits.has(key)) continue;
    const found = await repoFor(c.app, n.project_id).getCommit(n.commit_id).catch(() => null);
    if (found) commits.set(key, found.title);
  }
  const joined = joinProjects(projects, namespaces);
  const withAccess = new Map<number, { project: ProjectRow; namespace: NamespaceRow; access: number }>();
  for (const [id, p] of joined) withAccess.set(id, { ...p, access: await effectiveAccess(db, c.user, p.project, p.namespace) });
  const wikiMetas = await loadWikiMetas(c, idsOf(rows, (t) => t === WIKI), (projectId) => {
    const p = withAccess.get(projectId);
    return Boolean(p) && canReadWiki(c.user, p!);
  });
  return {
    projects: withAccess,
    issues: new Map(issues.map((i) => [i.id, { ...i, assignees: assignees.filter((a) => a.issue_id === i.id).map((a) => a.user_id) }])),
    mrs: new Map(mrs.map((m) => [m.id, m])),
    milestones: new Map(milestones.map((m) => [m.id, m])),
    notes: new Map(notes.map((n) => [n.id, n])),
    commits,
    users,
    wikiMetas,
  };
}

/** The metas of the page's wiki events (of wikis the caller may read) and their pages now (one git call per wiki). */
async function loadWikiMetas(c: Ctx, ids: number[], readable: (projectId: number) => boolean): Promise<Loaded['wikiMetas']> {
  const out: Loaded['wikiMetas'] = new Map();
  if (!ids.length) return out;
  const metas = (await c.app.db.selectFrom('wiki_page_meta').select(['id', 'project_id', 'title', 'canonical_slug']).where('id', 'in', ids).execute()).filter((m) => readable(m.project_id));
  const byProject = new Map<number, Map<string, WikiPage>>();
  for (const projectId of new Set(metas.map((m) => m.project_id))) {
    const slugs = metas.filter((m) => m.project_id === projectId && m.canonical_slug !== null).map((m) => m.canonical_slug!);
    byProject.set(projectId, await pagesAtSlugs(await wikiRepository(c.app, projectId, false), slugs).catch(() => new Map()));
  }
  for (const m of metas) {
    const page = m.canonical_slug === null ? undefined : byProject.get(m.project_id)?.get(m.canonical_slug);
    out.set(m.id, { id: m.id, title: m.title, page: page ?? null });
  }
  return out;
}

/** Event#visible_to_user?: what the caller may read of the event's target (the project itself is visible already). */
function visible(c: Ctx, e: EventRow, l: Loaded): boolean {
  const p = l.projects.get(e.project_id);
  if (!p) return false;
  const user = c.user;
  const admin = Boolean(user?.is_admin);
  const issueReadable = (id: number) => {
    const issue = l.issues.get(id);
    return Boolean(issue) && canReadIssues(user, p, p.access) && canReadIssue(user, p.access, issue as unknown as IssueRow, issue!.assignees);
  };
  if (e.action === 'pushed') return canReadRepository(p.project, user, p.access);
  // Project creation and membership: whoever sees the project (the query kept only those).
  if (e.target_type === null || e.target_type === 'Project') return true;
  if (e.target_type === 'Issue') return issueReadable(e.target_id!);
  if (e.target_type === 'MergeRequest') return l.mrs.has(e.target_id!) && canReadMrs(c, p, p.access);
  // read_milestone on the milestone: none once it is deleted (its destroyed event included).
  if (e.target_type === 'Milestone') return l.milestones.has(e.target_id!) && (canReadIssues(user, p, p.access) || canReadMrs(c, p, p.access));
  if (e.target_type === WIKI) return canReadWiki(user, p);
  if (NOTE_TYPES.has(e.target_type)) {
    const note = l.notes.get(e.target_id!);
    if (!note) return false;
    if (note.noteable_type === 'Commit') return canReadRepository(p.project, user, p.access);
    if (note.noteable_type === 'Issue') return issueReadable(note.noteable_id) && (!note.internal || admin || p.access >= AccessLevel.PLANNER);
    if (note.noteable_type === 'MergeRequest') return l.mrs.has(note.noteable_id) && canReadMrs(c, p, p.access) && (!note.internal || admin || p.access >= AccessLevel.REPORTER);
  }
  return false;
}

/** Event#action_name. */
function actionName(e: EventRow): string {
  // A wiki page's events are named by their action (created, updated, destroyed).
  if (e.target_type === WIKI) return e.action;
  switch (e.action) {
    case 'pushed':
      return e.push_action === 'created' ? 'pushed new' : e.push_action === 'removed' ? 'deleted' : 'pushed to';
    case 'closed':
      return 'closed';
    case 'merged':
      return 'accepted';
    case 'joined':
      return 'joined';
    case 'left':
      return 'left';
    case 'expired':
      return 'removed due to membership expiration from';
    case 'destroyed':
      return 'destroyed';
    case 'commented':
      return 'commented on';
    case 'approved':
      return 'approved';
    case 'created':
      return e.target_type === null || e.target_type === 'Project' ? 'created' : 'opened';
    default:
      return 'opened';
  }
}

/** The target's iid and title (a target deleted since: its id, no title). */
function targetOf(e: EventRow, l: Loaded): { iid: number | null; title: string | null } {
  if (e.target_id === null) return { iid: null, title: null };
  const t = e.target_type === 'Issue' ? l.issues.get(e.target_id) : e.target_type === 'MergeRequest' ? l.mrs.get(e.target_id) : e.target_type === 'Milestone' ? l.milestones.get(e.target_id) : undefined;
  if (t) return { iid: t.iid, title: t.title };
  // A project has no iid; its title is its name.
  if (e.target_type === 'Project') return { iid: e.target_id, title: l.projects.get(e.target_id)?.project.name ?? null };
  if (e.target_type === WIKI) return { iid: e.target_id, title: l.wikiMetas.get(e.target_id)?.title ?? null };
  if (e.target_type !== null && NOTE_TYPES.has(e.target_type)) {
    // A note has no iid (the event shows its id) and its title is its noteable's.
    const note = l.notes.get(e.target_id);
    const on = note?.noteable_type === 'Issue' ? l.issues.get(note.noteable_id) : note?.noteable_type === 'MergeRequest' ? l.mrs.get(note.noteable_id) : undefined;
    const commit = note?.noteable_type === 'Commit' ? l.commits.get(`${note.project_id}:${note.commit_id}`) : undefined;
    return { iid: e.target_id, title: on?.title ?? commit ?? null };
  }
  return { iid: e.target_id, title: null };
}

function noteableIid(note: NoteRow, l: Loaded): number | null {
  return (note.noteable_type === 'Issue' ? l.issues.get(note.noteable_id)?.iid : note.noteable_type === 'MergeRequest' ? l.mrs.get(note.noteable_id)?.iid : undefined) ?? null;
}

/** The event's page as Entities::WikiPageBasic, null once it is gone. */
function wikiPageOf(e: EventRow, l: Loaded): Record<string, unknown> | null {
  const meta = e.target_id === null ? undefined : l.wikiMetas.get(e.target_id);
  if (!meta?.page) return null;
  return { format: meta.page.format, slug: meta.page.slug, title: meta.page.title, wiki_page_meta_id: meta.id };
}

/** Entities::Event, in GitLab's field order. */
function presentEvent(c: Ctx, e: EventRow, l: Loaded): Record<string, unknown> {
  const author = l.users.get(e.author_id);
  const target = targetOf(e, l);
  const note = e.target_type !== null && NOTE_TYPES.has(e.target_type) && e.target_id !== null ? l.notes.get(e.target_id) : undefined;
  return {
    id: e.id,
    project_id: e.project_id,
    action_name: actionName(e),
    target_id: e.target_id,
    target_iid: target.iid,
    target_type: e.target_type,
    author_id: e.author_id,
    target_title: target.title,
    created_at: e.created_at,
    ...(note ? { note: presentNote(note, { base: c.base, users: l.users, noteableIid: noteableIid(note, l) }) } : {}),
    ...(author ? { author: presentUserBasic(author, { base: c.base }) } : {}),
    ...(e.target_type === WIKI ? { wiki_page: wikiPageOf(e, l) } : {}),
    imported: false,
    imported_from: 'none',
    ...(e.action === 'pushed'
      ? {
          push_data: {
            commit_count: e.push_commit_count ?? 0,
            action: e.push_action,
            ref_type: e.push_ref_type,
            commit_from: e.push_commit_from,
            commit_to: e.push_commit_to,
            ref: e.push_ref,
            commit_title: e.push_commit_title,
            ref_count: e.push_ref_count,
          },
        }
      : {}),
    author_username: author?.username ?? null,
  };
}

async function presentEvents(c: Ctx, rows: EventRow[]) {
  if (rows.length === 0) return [];
  const l = await loadPage(c, rows);
  return rows.filter((e) => visible(c, e, l)).map((e) => presentEvent(c, e, l));
}

export function registerEventRoutes(app: FastifyInstance): void {
  registerActivity();
  // GET /events: the caller's own events, or with scope=all those of every project they are a member of.
  route(
    app,
    'GET',
    '/events',
    async function currentUserEvents(c) {
      const user = c.requireUser();
      const scope = c.params.string('scope');
      return listEvents(c, scope === 'all' ? { kind: 'member', userId: user.id } : { kind: 'user', userId: user.id });
    },
    { extraScopes: ['read_user'] },
  );
  // GET /users/:id/events: a user's events (none when the caller may not read their profile).
  route(app, 'GET', '/users/:id/events', async function userEvents(c) {
    const user = await userParam(c, 'id');
    if (!profileVisible(c, user)) {
      readFilters(c);
      return paginateOffset(c, c.app.db.selectFrom('events').selectAll().where('id', '<', 0).orderBy('id'));
    }
    // As GitLab's EventsFinder: a signed-in caller's scope=all means their projects' events, whoever the user is.
    if (c.user && c.params.string('scope') === 'all') return listEvents(c, { kind: 'member', userId: c.user.id });
    return listEvents(c, { kind: 'user', userId: user.id });
  }, { extraScopes: ['read_user'] });
  // GET /projects/:id/events
  route(app, 'GET', '/projects/:id/events', async function projectEvents(c) {
    const found = await findProject(c, pathParam(c, 'id'));
    return listEvents(c, { kind: 'project', projectId: found.project.id });
  });
}
