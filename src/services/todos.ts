// To-do items (GitLab's Todo and TodoService): made when someone is assigned an issue or a merge
// request, asked to review one, or mentioned in its title, description or a comment (directly
// addressed when the mention opens a paragraph), or when a user marks one themselves; done when the
// user acts on the target (comments, edits, closes, merges, approves, awards an emoji) or says so.
// Only people who may read the target (and an internal comment) get one. As GitLab with its
// `multiple_todos` behaviour (the default since 17.8): mentions may repeat, any other reason is
// skipped while the same one is pending. Acting on your own issue gives you to-dos as in GitLab
// (assigning yourself, mentioning yourself).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/types.js';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { UserRow } from '../db/repositories/users.js';
import type { TodosTable } from '../db/tables/todos.js';
import { ApiError } from '../http/errors.js';
import { AccessLevel, canReadProject } from './access.js';
import { eventRecorders, type DomainEvent } from './events.js';
import { canReadIssue, canReadIssues } from './issues/access.js';
import type { IssueRow } from './issues/rows.js';
import { userCanReadMrs } from './merge-requests/access.js';
import type { ProjectInfo } from './merge-requests/rows.js';
import { activeOnly, allMembers } from './members.js';
import { projectDeletionHooks } from './projects/create.js';
import { effectiveAccess, loadProjectById } from './projects/lookup.js';
import { canReadGroup } from './groups/visibility.js';
import { userDeletionHooks } from './users.js';

export type TodoRow = Selectable<TodosTable>;

/** GitLab's Todo actions and the names the API shows. */
export const TODO_ACTION_NAMES: Record<number, string> = {
  1: 'assigned',
  2: 'mentioned',
  3: 'build_failed',
  4: 'marked',
  5: 'approval_required',
  6: 'unmergeable',
  7: 'directly_addressed',
  8: 'merge_train_removed',
  9: 'review_requested',
  10: 'member_access_requested',
  11: 'review_submitted',
  12: 'okr_checkin_requested',
  13: 'added_approver',
  14: 'ssh_key_expired',
  15: 'ssh_key_expiring_soon',
  // GitLab's later actions; the numbers are Labwright's (the API shows only the names).
  20: 'transfer_failed',
};
export const TodoAction = { ASSIGNED: 1, MENTIONED: 2, MARKED: 4, DIRECTLY_ADDRESSED: 7, REVIEW_REQUESTED: 9, MEMBER_ACCESS_REQUESTED: 10, TRANSFER_FAILED: 20 } as const;
/** Member::ACCESS_REQUEST_APPROVERS_TO_BE_NOTIFIED_LIMIT. */
const ACCESS_REQUEST_APPROVERS = 10;
/** Todo::ACTIONS_MULTIPLE_ALLOWED. */
const MULTIPLE_ALLOWED = new Set([2, 7, 10]);
/** TodosFinder::TODO_TYPES (the `type` filter's values). */
export const TODO_TYPES = ['Commit', 'Issue', 'WorkItem', 'MergeRequest', 'DesignManagement::Design', 'AlertManagement::Alert', 'Namespace', 'Project', 'Key', 'WikiPage::Meta'] as const;
/** GITLAB-COMPAT: at most this many people get to-dos from one text (GitLab sets no bound; @all in a large project). */
export const MAX_MENTION_RECIPIENTS = 100;

export type TodoTargetType = 'Issue' | 'MergeRequest';

export interface TodoTarget {
  type: TodoTargetType;
  id: number;
  /** The issue itself (confidential issues are read by fewer people). */
  issue?: IssueRow;
}

// --- mentions (Banzai's user references, approximated on the Markdown source) ---

/** Code spans and fenced blocks hold no references. */
function withoutCode(text: string): string {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?(^\1[^\n]*$|(?![\s\S]))/gm, '')
    .replace(/`+[^`\n]*`+/g, '');
}

const MENTION = /(?<![\w@`/.+-])@([a-zA-Z0-9_][a-zA-Z0-9_./-]*)/g;

function cleanName(raw: string): string {
  return raw.replace(/[./-]+$/, '').toLowerCase();
}

/**
 * The names a text mentions (users, groups, `all`), lower case, and those it addresses directly:
 * the mentions a paragraph opens with, separated by spaces only (GitLab's DirectlyAddressedUserParser).
 */
export function parseMentions(text: string | null | undefined): { mentioned: string[]; direct: string[] } {
  if (!text || !text.includes('@')) return { mentioned: [], direct: [] };
  const plain = withoutCode(text);
  const mentioned = new Set<string>();
  for (const m of plain.matchAll(MENTION)) {
    const name = cleanName(m[1]!);
    if (name) mentioned.add(name);
  }
  const direct = new Set<string>();
  for (const paragraph of plain.split(/\n\s*\n/)) {
    let rest = paragraph.replace(/^\s+/, '');
    for (;;) {
      const m = /^@([a-zA-Z0-9_][a-zA-Z0-9_./-]*)/.exec(rest);
      if (!m) break;
      const name = cleanName(m[1]!);
      if (name) direct.add(name);
      rest = rest.slice(m[0].length);
      const gap = /^[ \t]+/.exec(rest);
      if (!gap) break;
      rest = rest.slice(gap[0].length);
    }
  }
  return { mentioned: [...mentioned], direct: [...direct] };
}

/** How many distinct names one text is read for (in text order): the lookups stay bounded. */
const MAX_NAMES_PER_TEXT = MAX_MENTION_RECIPIENTS * 2;

/**
 * The users behind mentioned names: users by username; the direct members of groups by path, for
 * groups the author may see and whose mentions are not disabled (GitLab's reference parsers); `all`
 * the project's members, only when the author is one. Users named themselves come first.
 */
async function usersNamed(app: AppContext, info: ProjectInfo, names: string[], author: UserRow): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  if (!names.length) return out;
  const db = app.db;
  const users = await db
    .selectFrom('users')
    .select(['id', 'username'])
    .where((eb) => eb(eb.fn('lower', ['username']), 'in', names))
    .execute();
  for (const u of users) out.set(u.username.toLowerCase(), [u.id]);
  const groupNames = names.filter((n) => !out.has(n) && n !== 'all');
  if (groupNames.length) {
    const groups = await db
      .selectFrom('namespaces')
      .selectAll()
      .where('kind', '=', 'group')
      .where((eb) => eb(eb.fn('lower', ['full_path']), 'in', groupNames))
      .execute();
    const settings = groups.length ? await db.selectFrom('group_settings').select(['namespace_id', 'settings']).where('namespace_id', 'in', groups.map((g) => g.id)).execute() : [];
    const disabled = new Set(settings.filter((r) => {
      try {
        return (JSON.parse(r.settings) as { mentions_disabled?: boolean | null }).mentions_disabled === true;
      } catch {
        return false;
      }
    }).map((r) => r.namespace_id));
    const seen: typeof groups = [];
    for (const g of groups) if (!disabled.has(g.id) && (await canReadGroup(db, author, g))) seen.push(g);
    if (seen.length) {
      const members = await db
        .selectFrom('members')
        .select(['source_id', 'user_id'])
        .where('source_type', '=', 'Namespace')
        .where('source_id', 'in', seen.map((g) => g.id))
        .where('access_level', '>=', AccessLevel.GUEST)
        .limit(MAX_MENTION_RECIPIENTS * 10)
        .execute();
      for (const g of seen) out.set(g.full_path.toLowerCase(), members.filter((m) => m.source_id === g.id).map((m) => m.user_id));
    }
  }
  if (names.includes('all') && !out.has('all')) {
    const source = { type: 'Project' as const, id: info.project.id, project: info.project, namespace: info.namespace };
    const members = await allMembers(db, source, {}, null);
    if (members.some((m) => m.user_id === author.id)) out.set('all', members.slice(0, MAX_MENTION_RECIPIENTS).map((m) => m.user_id));
  }
  return out;
}

// --- who may read the target ---

/**
 * The users among `ids` who may read the target (and, for an internal comment, internal notes), in
 * the order given; at most MAX_MENTION_RECIPIENTS are looked at (the order puts the people named
 * first). Access is each user's own (memberships, inherited and shared groups).
 */
async function readers(app: AppContext, info: ProjectInfo, target: TodoTarget, ids: number[], internal = false): Promise<UserRow[]> {
  const unique = [...new Set(ids)].slice(0, MAX_MENTION_RECIPIENTS);
  if (!unique.length) return [];
  const rows = (await app.db.selectFrom('users').selectAll().where('id', 'in', unique).execute()) as UserRow[];
  const byId = new Map(rows.map((u) => [u.id, u]));
  let assignees: number[] = [];
  if (target.type === 'Issue' && target.issue?.confidential === 1) {
    assignees = (await app.db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', target.id).execute()).map((r) => r.user_id);
  }
  const out: UserRow[] = [];
  for (const id of unique) {
    const u = byId.get(id);
    if (!u || u.state !== 'active') continue;
    const access = await effectiveAccess(app.db, u, info.project, info.namespace);
    if (!canReadProject(u, info.project, access)) continue;
    if (target.type === 'Issue') {
      if (!target.issue || !canReadIssues(u, info, access) || !canReadIssue(u, access, target.issue, assignees)) continue;
      if (internal && !u.is_admin && access < AccessLevel.PLANNER) continue;
    } else {
      if (!userCanReadMrs(u, info, access)) continue;
      if (internal && !u.is_admin && access < AccessLevel.REPORTER) continue;
    }
    out.push(u);
  }
  return out;
}

// --- writing to-dos ---

interface NewTodos {
  info: ProjectInfo;
  target: TodoTarget;
  userIds: number[];
  authorId: number;
  action: number;
  noteId?: number | null;
}

/** Inserts to-dos for the users, skipping those with the same pending one where it may not repeat. */
async function insertTodos(app: AppContext, t: NewTodos): Promise<void> {
  let ids = [...new Set(t.userIds)];
  if (!ids.length) return;
  if (!MULTIPLE_ALLOWED.has(t.action)) {
    const pending = await app.db
      .selectFrom('todos')
      .select('user_id')
      .where('target_id', '=', t.target.id)
      .where('target_type', '=', t.target.type)
      .where('user_id', 'in', ids)
      .where('action', '=', t.action)
      .where('state', '=', 'pending')
      .execute();
    const skip = new Set(pending.map((r) => r.user_id));
    ids = ids.filter((id) => !skip.has(id));
  }
  if (!ids.length) return;
  const now = nowIso();
  await app.db
    .insertInto('todos')
    .values(ids.map((userId) => ({ user_id: userId, project_id: t.info.project.id, group_id: null, body: null, target_type: t.target.type, target_id: t.target.id, author_id: t.authorId, action: t.action, note_id: t.noteId ?? null, state: 'pending', resolved_by_action: null, created_at: now, updated_at: now })))
    .execute();
}

/** Assignment or review to-dos for the people who may read the target. */
async function peopleTodos(app: AppContext, info: ProjectInfo, target: TodoTarget, userIds: number[], authorId: number, action: number): Promise<void> {
  if (!userIds.length) return;
  const allowed = await readers(app, info, target, userIds);
  await insertTodos(app, { info, target, userIds: allowed.map((u) => u.id), authorId, action });
}

/** Mention to-dos for a text (those addressed directly get only that one), minus the names in `before`. */
async function mentionTodos(app: AppContext, info: ProjectInfo, target: TodoTarget, text: string, author: UserRow, opts: { before?: string; noteId?: number; internal?: boolean } = {}): Promise<void> {
  const now = parseMentions(text);
  if (!now.mentioned.length) return;
  const old = new Set(parseMentions(opts.before).mentioned);
  const fresh = now.mentioned.filter((n) => !old.has(n)).slice(0, MAX_NAMES_PER_TEXT);
  if (!fresh.length) return;
  const freshSet = new Set(fresh);
  const direct = now.direct.filter((n) => freshSet.has(n));
  const named = await usersNamed(app, info, fresh, author);
  const idsOf = (names: string[]) => names.flatMap((n) => named.get(n) ?? []);
  const directIds = new Set(idsOf(direct));
  // People addressed first, then people named, then groups and @all: a cap never drops someone named.
  const single = (n: string) => named.get(n)?.length === 1 && !n.includes('/') && n !== 'all';
  const ordered = [...directIds, ...idsOf(fresh.filter(single)), ...idsOf(fresh.filter((n) => !single(n)))];
  const allowed = await readers(app, info, target, ordered, opts.internal);
  const common = { info, target, authorId: author.id, noteId: opts.noteId ?? null };
  await insertTodos(app, { ...common, userIds: allowed.filter((u) => directIds.has(u.id)).map((u) => u.id), action: TodoAction.DIRECTLY_ADDRESSED });
  await insertTodos(app, { ...common, userIds: allowed.filter((u) => !directIds.has(u.id)).map((u) => u.id), action: TodoAction.MENTIONED });
}

/** TodoService#resolve_todos_for_target: the user's own pending to-dos on the target are done. */
export async function resolveTodosForTarget(app: AppContext, target: { type: string; id: number }, userId: number, by = 'system_done'): Promise<void> {
  // A read first: most actions find nothing to resolve, and a write would take SQLite's lock for nothing.
  const pending = await app.db
    .selectFrom('todos')
    .select('id')
    .where('target_id', '=', target.id)
    .where('target_type', '=', target.type)
    .where('user_id', '=', userId)
    .where('state', '=', 'pending')
    .limit(1)
    .executeTakeFirst();
  if (!pending) return;
  await app.db
    .updateTable('todos')
    .set({ state: 'done', resolved_by_action: by, updated_at: nowIso() })
    .where('target_id', '=', target.id)
    .where('target_type', '=', target.type)
    .where('user_id', '=', userId)
    .where('state', '=', 'pending')
    .execute();
}

/** TodoService#mark_todo: a `marked` to-do of the user on the target; null when one is pending already (304). */
export async function markTodo(app: AppContext, info: ProjectInfo, target: TodoTarget, user: UserRow): Promise<TodoRow | null> {
  return app.database.transaction(async (trx) => {
    // The user's row is locked first, so that two marks at once cannot both find none pending (PostgreSQL).
    await app.database.forUpdate(trx.selectFrom('users').select('id').where('id', '=', user.id)).executeTakeFirst();
    const pending = await trx
      .selectFrom('todos')
      .select('id')
      .where('target_id', '=', target.id)
      .where('target_type', '=', target.type)
      .where('user_id', '=', user.id)
      .where('action', '=', TodoAction.MARKED)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    if (pending) return null;
    const now = nowIso();
    return trx
      .insertInto('todos')
      .values({ user_id: user.id, project_id: info.project.id, group_id: null, body: null, target_type: target.type, target_id: target.id, author_id: user.id, action: TodoAction.MARKED, note_id: null, state: 'pending', resolved_by_action: null, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

// --- to-dos of a group or a project itself ---

/** A group (target type Namespace, the group as resource parent) or a project (its own parent). */
export type ParentTarget = { type: 'Namespace'; id: number } | { type: 'Project'; id: number };

function parentColumns(t: ParentTarget): { project_id: number | null; group_id: number | null } {
  return t.type === 'Project' ? { project_id: t.id, group_id: null } : { project_id: null, group_id: t.id };
}

/**
 * TodoService#create_member_access_request_todos: the people who may approve a request to join
 * (a group's direct Owners, a project's direct Maintainers and Owners; active users, the most
 * recently signed in first, at most 10) get a `member_access_requested` to-do from the requester.
 */
export async function accessRequestTodos(app: AppContext, target: ParentTarget, requesterId: number): Promise<void> {
  const approvers = await activeOnly(app.db
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select('users.id')
    .where('members.source_type', '=', target.type)
    .where('members.source_id', '=', target.id)
    .where('members.access_level', '>=', target.type === 'Project' ? AccessLevel.MAINTAINER : AccessLevel.OWNER)
    .where('users.state', '=', 'active')
    .where('users.user_type', '=', 'human'))
    // order_recent_sign_in: people who never signed in last, on both databases.
    .orderBy(sql`users.last_sign_in_at desc nulls last`)
    .orderBy('users.id', 'desc')
    .limit(ACCESS_REQUEST_APPROVERS)
    .execute();
  if (!approvers.length) return;
  const now = nowIso();
  await app.db
    .insertInto('todos')
    .values(approvers.map((a) => ({ user_id: a.id, ...parentColumns(target), target_type: target.type, target_id: target.id, author_id: requesterId, action: TodoAction.MEMBER_ACCESS_REQUESTED, note_id: null, body: null, state: 'pending', resolved_by_action: null, created_at: now, updated_at: now })))
    .execute();
}

/** TodoService#resolve_access_request_todos: the request is answered (approved, denied or withdrawn). */
export async function resolveAccessRequestTodos(db: Kysely<DB>, target: ParentTarget, requesterId: number): Promise<void> {
  await db
    .updateTable('todos')
    .set({ state: 'done', resolved_by_action: 'system_done', updated_at: nowIso() })
    .where('target_type', '=', target.type)
    .where('target_id', '=', target.id)
    .where('author_id', '=', requesterId)
    .where('action', '=', TodoAction.MEMBER_ACCESS_REQUESTED)
    .where('state', '=', 'pending')
    .execute();
}

/**
 * A failed transfer leaves the requester a `transfer_failed` to-do saying why (GitLab since 19.4
 * transfers in the background and reports a failure so; Labwright transfers at once and also
 * answers 400 with the reason). `err` is what the transfer threw: only its refusals (400) count.
 */
export async function transferFailedTodo(app: AppContext, target: ParentTarget, userId: number, from: string, to: string | null, err: unknown): Promise<void> {
  const reason = refusalText(err);
  if (reason === null) return;
  const body = `Failed to transfer ${from} to ${to ?? 'the top level'}. ${reason}`;
  const now = nowIso();
  await app.db
    .insertInto('todos')
    .values({ user_id: userId, ...parentColumns(target), target_type: target.type, target_id: target.id, author_id: userId, action: TodoAction.TRANSFER_FAILED, note_id: null, body, state: 'pending', resolved_by_action: null, created_at: now, updated_at: now })
    .execute();
}

/** The text of a 400 refusal: its message without "Transfer failed: ", or its field errors. */
function refusalText(err: unknown): string | null {
  if (!(err instanceof ApiError) || err.status !== 400) return null;
  const message = (err.body as { message?: unknown } | null)?.message;
  if (typeof message === 'string') return message.replace(/^Transfer failed: /, '');
  if (message && typeof message === 'object') {
    return Object.entries(message as Record<string, unknown>)
      .map(([field, errors]) => `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} ${([] as unknown[]).concat(errors).join(', ')}.`)
      .join(' ');
  }
  return null;
}

// --- reacting to changes ---

async function infoOf(app: AppContext, projectId: number, info: ProjectInfo | undefined): Promise<ProjectInfo | null> {
  return info ?? (await loadProjectById(app.db, projectId));
}

function added(now: number[], before: number[] | undefined): number[] {
  if (!before) return [];
  const had = new Set(before);
  return now.filter((id) => !had.has(id));
}

async function authorOf(app: AppContext, id: number): Promise<UserRow | null> {
  return ((await app.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()) as UserRow | undefined) ?? null;
}

async function onEvent(app: AppContext, e: DomainEvent): Promise<void> {
  if (e.kind === 'issue') {
    const target: TodoTarget = { type: 'Issue', id: e.issue.id, issue: e.issue };
    if (e.action !== 'open') await resolveTodosForTarget(app, target, e.userId);
    if (e.action !== 'open' && e.action !== 'update') return;
    // A new issue's assignees as asked for; an update's new ones against those before.
    const assigneeIds = e.action === 'open' ? (e.assigneeIds ?? []) : e.previousAssociations ? added(await issueAssignees(app, e.issue.id), e.previousAssociations.assigneeIds) : [];
    const text = `${e.issue.title}\n\n${e.issue.description ?? ''}`;
    const before = e.previous ? `${e.previous.title}\n\n${e.previous.description ?? ''}` : undefined;
    const textChanged = text.includes('@') && (e.action === 'open' || (before !== undefined && before !== text));
    if (!assigneeIds.length && !textChanged) return;
    const info = await infoOf(app, e.projectId, e.info);
    if (!info) return;
    await peopleTodos(app, info, target, assigneeIds, e.userId, TodoAction.ASSIGNED);
    const author = textChanged ? await authorOf(app, e.userId) : null;
    if (author) await mentionTodos(app, info, target, text, author, e.action === 'update' && before !== undefined ? { before } : {});
    return;
  }
  if (e.kind === 'merge_request') {
    const target: TodoTarget = { type: 'MergeRequest', id: e.mr.id };
    // A push to the source branch resolves nothing (its event is sent only when a webhook listens).
    if (e.action !== 'open' && !e.oldrev) await resolveTodosForTarget(app, target, e.userId);
    if (e.action !== 'open' && e.action !== 'update') return;
    const text = `${e.mr.title}\n\n${e.mr.description ?? ''}`;
    const before = e.previous ? `${e.previous.row.title}\n\n${e.previous.row.description ?? ''}` : undefined;
    const textChanged = text.includes('@') && (e.action === 'open' || (before !== undefined && before !== text));
    // The people asked for: all of them on a new request, those not there before on an update.
    const previous = e.previous?.associations;
    const assignees = e.action === 'open' ? (e.people?.assigneeIds ?? []) : previous && e.people ? added(e.people.assigneeIds, previous.assigneeIds) : [];
    const reviewers = e.action === 'open' ? (e.people?.reviewerIds ?? []) : previous && e.people ? added(e.people.reviewerIds, previous.reviewerIds) : [];
    if (!textChanged && !assignees.length && !reviewers.length) return;
    const info = await infoOf(app, e.projectId, e.info);
    if (!info) return;
    await peopleTodos(app, info, target, assignees, e.userId, TodoAction.ASSIGNED);
    await peopleTodos(app, info, target, reviewers, e.userId, TodoAction.REVIEW_REQUESTED);
    const author = textChanged ? await authorOf(app, e.userId) : null;
    if (author) await mentionTodos(app, info, target, text, author, before !== undefined && e.action === 'update' ? { before } : {});
    return;
  }
  if (e.kind === 'note') {
    const n = e.note;
    if (n.system === 1 || (n.noteable_type !== 'Issue' && n.noteable_type !== 'MergeRequest')) return;
    const type = n.noteable_type as TodoTargetType;
    await resolveTodosForTarget(app, { type, id: n.noteable_id }, e.userId);
    // An edit notifies only the people it newly mentions (TodoService#update_note).
    if (!n.body.includes('@') || (e.action === 'update' && e.previousBody === undefined)) return;
    const [info, author] = await Promise.all([infoOf(app, e.projectId, undefined), authorOf(app, e.userId)]);
    if (!info || !author) return;
    const issue = type === 'Issue' ? ((await app.db.selectFrom('issues').selectAll().where('id', '=', n.noteable_id).executeTakeFirst()) as IssueRow | undefined) : undefined;
    if (type === 'Issue' && !issue) return;
    const before = e.action === 'update' ? { before: e.previousBody } : {};
    await mentionTodos(app, info, { type, id: n.noteable_id, ...(issue ? { issue } : {}) }, n.body, author, { noteId: n.id, internal: n.internal === 1, ...before });
    return;
  }
  if (e.kind === 'emoji' && e.action === 'award' && (e.award.awardable_type === 'Issue' || e.award.awardable_type === 'MergeRequest')) {
    await resolveTodosForTarget(app, { type: e.award.awardable_type, id: e.award.awardable_id }, e.userId);
  }
}

async function issueAssignees(app: AppContext, issueId: number): Promise<number[]> {
  return (await app.db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issueId).execute()).map((r) => r.user_id);
}

let registered = false;

/** Reacts to issue, merge request, comment and emoji changes; removes to-dos with their project or user. */
export function registerTodos(): void {
  if (registered) return;
  registered = true;
  eventRecorders.push(async function todosFor(app, e) {
    try {
      await onEvent(app, e);
    } catch (err) {
      app.log.error({ err, kind: e.kind }, 'to-dos not recorded');
    }
  });
  projectDeletionHooks.push(async function deleteProjectTodos(_app, trx, projectId) {
    await trx.deleteFrom('todos').where('project_id', '=', projectId).execute();
  });
  // A deleted user's to-dos go; those they made for others stay, without an author (GitLab's ghost user).
  userDeletionHooks.push(async function deleteUserTodos(_app, trx, user) {
    await trx.deleteFrom('todos').where('user_id', '=', user.id).execute();
    // Their access requests go with them (access-requests.ts), so the to-dos asking about them are done.
    await trx
      .updateTable('todos')
      .set({ state: 'done', resolved_by_action: 'system_done', updated_at: nowIso() })
      .where('author_id', '=', user.id)
      .where('action', '=', TodoAction.MEMBER_ACCESS_REQUESTED)
      .where('state', '=', 'pending')
      .execute();
  });
}
