// The issue list query for the three scopes (GitLab's IssuesFinder as the REST API uses it): every
// filter is a WHERE on stored columns or an EXISTS on an indexed link table; confidential issues
// only where the caller may read them.
import { sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { AccessLevel } from '../access.js';
import { escapeLike } from '../../db/sql-helpers.js';
import { todayUtc } from '../personal-access-tokens.js';
import { issueProjectIds } from './access.js';
import type { IssueRow } from './rows.js';

export type IssueScope =
  | { kind: 'global' }
  | { kind: 'project'; projectId: number; access: number }
  | { kind: 'group'; groupId: number; traversal: string };

export type IdFilter = number | 'None' | 'Any';

export interface IssueFilters {
  state: 'opened' | 'closed' | 'all';
  scope: string;
  authorId?: number;
  authorUsername?: string;
  assigneeId?: IdFilter;
  assigneeUsernames?: string[];
  milestone?: string;
  milestoneId?: 'None' | 'Any' | 'Upcoming' | 'Started';
  labels?: string[];
  iids?: number[];
  search?: string;
  searchIn?: Array<'title' | 'description'>;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  confidential?: boolean;
  issueType?: string;
  dueDate?: string;
  myReactionEmoji?: string;
  nonArchived?: boolean;
  not?: {
    labels?: string[];
    milestone?: string;
    milestoneId?: 'None' | 'Any' | 'Upcoming' | 'Started';
    authorId?: number;
    authorUsername?: string;
    assigneeId?: number;
    assigneeUsernames?: string[];
    iids?: number[];
    myReactionEmoji?: string;
  };
  orderBy: string;
  sort: 'asc' | 'desc';
}

type EB = ExpressionBuilder<DB, 'issues'>;
type Q = SelectQueryBuilder<DB, 'issues', IssueRow>;

function userIdByName(eb: EB, username: string) {
  return eb.selectFrom('users').select('users.id').where(sql<boolean>`lower(users.username) = ${username.toLowerCase()}`);
}

function hasAssignee(eb: EB, userId?: number, username?: string) {
  let q = eb.selectFrom('issue_assignees as a').select('a.id').whereRef('a.issue_id', '=', 'issues.id');
  if (userId !== undefined) q = q.where('a.user_id', '=', userId);
  if (username !== undefined) q = q.where('a.user_id', 'in', userIdByName(eb, username));
  return eb.exists(q);
}

function hasLabel(eb: EB, title?: string) {
  let q = eb.selectFrom('issue_labels as il').innerJoin('labels as l', 'l.id', 'il.label_id').select('il.id').whereRef('il.issue_id', '=', 'issues.id');
  if (title !== undefined) q = q.where('l.title_lower', '=', title.toLowerCase());
  return eb.exists(q);
}

function hasReaction(eb: EB, userId: number, name?: string) {
  let q = eb.selectFrom('award_emoji as e').select('e.id').where('e.awardable_type', '=', 'Issue').whereRef('e.awardable_id', '=', 'issues.id').where('e.user_id', '=', userId);
  if (name !== undefined) q = q.where('e.name', '=', name);
  return eb.exists(q);
}

/** GitLab's milestone wildcards: None, Any, Upcoming (the next due), Started (start date passed, not closed). */
function milestoneWildcard(eb: EB, wildcard: 'None' | 'Any' | 'Upcoming' | 'Started') {
  const today = todayUtc();
  if (wildcard === 'None') return eb('issues.milestone_id', 'is', null);
  if (wildcard === 'Any') return eb('issues.milestone_id', 'is not', null);
  if (wildcard === 'Started') {
    return eb('issues.milestone_id', 'in', eb.selectFrom('milestones').select('milestones.id').where('milestones.state', '=', 'active').where('milestones.start_date', '<=', today));
  }
  // Upcoming: the active milestones due after today, the earliest due date of each project or group.
  return eb(
    'issues.milestone_id',
    'in',
    eb
      .selectFrom('milestones as m')
      .select('m.id')
      .where('m.state', '=', 'active')
      .where('m.due_date', '>', today)
      .where((e) =>
        e(
          'm.due_date',
          '=',
          e
            .selectFrom('milestones as m2')
            .select((x) => x.fn.min('m2.due_date').as('d'))
            .where('m2.state', '=', 'active')
            .where('m2.due_date', '>', today)
            .where(sql<boolean>`coalesce(m2.project_id, -1) = coalesce(m.project_id, -1) and coalesce(m2.group_id, -1) = coalesce(m.group_id, -1)`),
        ),
      ),
  );
}

function applyMilestone(q: Q, title: string | undefined, wildcard: IssueFilters['milestoneId']): Q {
  if (wildcard !== undefined) return q.where((eb) => milestoneWildcard(eb, wildcard));
  if (title === undefined) return q;
  // The legacy title filter of the REST API: `None`/`No Milestone`, `Any`, `Upcoming`, `Started` too.
  const lower = title.toLowerCase();
  if (lower === 'none' || lower === 'no milestone' || lower === 'no+milestone') return q.where('issues.milestone_id', 'is', null);
  if (lower === 'any') return q.where('issues.milestone_id', 'is not', null);
  if (title === 'Upcoming' || title === '#upcoming') return q.where((eb) => milestoneWildcard(eb, 'Upcoming'));
  if (title === 'Started' || title === '#started') return q.where((eb) => milestoneWildcard(eb, 'Started'));
  return q.where('issues.milestone_id', 'in', (eb) => eb.selectFrom('milestones').select('milestones.id').where('milestones.title', '=', title));
}

/**
 * Issues with every one of the labels: the issue's own matching links counted (one correlated
 * subquery on the issue's index; one EXISTS per label makes PostgreSQL's planning time grow fast
 * with the number of labels, and an uncorrelated GROUP BY would read every link of the instance).
 */
function withAllLabels(eb: EB, titles: string[]) {
  const lower = [...new Set(titles.map((t) => t.toLowerCase()))];
  const matched = eb
    .selectFrom('issue_labels as il')
    .innerJoin('labels as l', 'l.id', 'il.label_id')
    .select((e) => e.fn.count(sql`distinct l.title_lower`).as('n'))
    .whereRef('il.issue_id', '=', 'issues.id')
    .where('l.title_lower', 'in', lower);
  return eb(matched, '=', lower.length);
}

/** Issues assigned to every one of the users (by username, any case): as withAllLabels. */
function withAllAssignees(eb: EB, usernames: string[]) {
  const lower = [...new Set(usernames.map((u) => u.toLowerCase()))];
  const matched = eb
    .selectFrom('issue_assignees as a')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .select((e) => e.fn.count(sql`distinct a.user_id`).as('n'))
    .whereRef('a.issue_id', '=', 'issues.id')
    .where(sql<string>`lower(u.username)`, 'in', lower);
  return eb(matched, '=', lower.length);
}

/** Issues with any of the labels (`not[labels]` excludes them). */
function withAnyLabel(eb: EB, titles: string[]) {
  const lower = [...new Set(titles.map((t) => t.toLowerCase()))];
  return eb('issues.id', 'in', eb.selectFrom('issue_labels as il').innerJoin('labels as l', 'l.id', 'il.label_id').select('il.issue_id').where('l.title_lower', 'in', lower));
}

function applyLabels(q: Q, labels: string[] | undefined): Q {
  if (!labels?.length) return q;
  const lower = labels.map((l) => l.toLowerCase());
  if (lower.length === 1 && lower[0] === 'none') return q.where((eb) => eb.not(hasLabel(eb)));
  if (lower.length === 1 && lower[0] === 'any') return q.where((eb) => hasLabel(eb));
  if (labels.length === 1) return q.where((eb) => hasLabel(eb, labels[0]));
  return q.where((eb) => withAllLabels(eb, labels));
}

function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** GitLab's due date filters (Issue.due_* scopes), on UTC days. */
function applyDueDate(q: Q, due: string | undefined): Q {
  if (due === undefined) return q;
  const today = todayUtc();
  switch (due) {
    case '0':
    case 'none':
      return q.where('issues.due_date', 'is', null);
    case 'any':
      return q.where('issues.due_date', 'is not', null);
    case 'today':
      return q.where('issues.due_date', '=', today);
    case 'tomorrow':
      return q.where('issues.due_date', '=', addDays(today, 1));
    case 'overdue':
      return q.where('issues.due_date', '<', today);
    case 'week': {
      // This week, Monday to Sunday.
      const weekday = (new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7;
      return q.where('issues.due_date', '>=', addDays(today, -weekday)).where('issues.due_date', '<=', addDays(today, 6 - weekday));
    }
    case 'month':
      return q.where('issues.due_date', '>=', `${today.slice(0, 7)}-01`).where('issues.due_date', '<', nextMonth(today));
    case 'next_month_and_previous_two_weeks':
      // From two weeks ago to the end of next month.
      return q.where('issues.due_date', '>=', addDays(today, -14)).where('issues.due_date', '<', nextMonthEnd(today));
    default:
      return q;
  }
}

function nextMonth(day: string): string {
  const d = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  return d.toISOString().slice(0, 10);
}

function nextMonthEnd(day: string): string {
  const d = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + 2);
  return d.toISOString().slice(0, 10);
}

function applyNot(q: Q, not: IssueFilters['not'], user: UserRow | null): Q {
  if (!not) return q;
  if (not.labels?.length) q = q.where((eb) => eb.not(withAnyLabel(eb, not.labels!)));
  if (not.milestoneId !== undefined) q = q.where((eb) => eb.or([eb('issues.milestone_id', 'is', null), eb.not(milestoneWildcard(eb, not.milestoneId!))]));
  if (not.milestone !== undefined) {
    const m = not.milestone;
    q = q.where((eb) => eb.or([eb('issues.milestone_id', 'is', null), eb('issues.milestone_id', 'not in', eb.selectFrom('milestones').select('milestones.id').where('milestones.title', '=', m))]));
  }
  if (not.authorId !== undefined) q = q.where('issues.author_id', '!=', not.authorId);
  if (not.authorUsername !== undefined) q = q.where((eb) => eb('issues.author_id', 'not in', userIdByName(eb, not.authorUsername!)));
  if (not.assigneeId !== undefined) q = q.where((eb) => eb.not(hasAssignee(eb, not.assigneeId)));
  for (const name of not.assigneeUsernames ?? []) q = q.where((eb) => eb.not(hasAssignee(eb, undefined, name)));
  if (not.iids?.length) q = q.where('issues.iid', 'not in', not.iids);
  if (not.myReactionEmoji !== undefined && user) q = q.where((eb) => eb.not(hasReaction(eb, user.id, not.myReactionEmoji)));
  return q;
}

/** The orderings and their keys: an expression and the key a keyset cursor carries. */
export function orderColumns(orderBy: string): Array<{ column: string; key: string }> | null {
  switch (orderBy) {
    case 'created_at':
      return [{ column: 'issues.created_at', key: 'created_at' }, { column: 'issues.id', key: 'id' }];
    case 'updated_at':
      return [{ column: 'issues.updated_at', key: 'updated_at' }, { column: 'issues.id', key: 'id' }];
    case 'title':
      return [{ column: 'issues.title', key: 'title' }, { column: 'issues.id', key: 'id' }];
    case 'id':
    case 'relative_position':
      // Labwright keeps no manual order: issues stay in the order they were created.
      return [{ column: 'issues.id', key: 'id' }];
    default:
      return null;
  }
}

function applyOrder(q: Q, orderBy: string, sort: 'asc' | 'desc'): Q {
  const cols = orderColumns(orderBy);
  if (cols) {
    for (const c of cols) q = q.orderBy(c.column as 'issues.id', sort);
    return q;
  }
  const nullsLast = (e: ReturnType<typeof sql>) => sql`case when ${e} is null then 1 else 0 end`;
  switch (orderBy) {
    case 'due_date':
      return q.orderBy(nullsLast(sql.ref('issues.due_date'))).orderBy('issues.due_date', sort).orderBy('issues.id', sort);
    case 'popularity':
      return q.orderBy('issues.upvotes', sort).orderBy('issues.id', sort);
    case 'milestone_due': {
      const due = sql`(select m.due_date from milestones m where m.id = issues.milestone_id)`;
      return q.orderBy(nullsLast(due)).orderBy(due, sort).orderBy('issues.id', sort);
    }
    case 'label_priority':
    case 'priority': {
      const prio = sql`(select min(l.priority) from issue_labels il join labels l on l.id = il.label_id where il.issue_id = issues.id)`;
      return q.orderBy(nullsLast(prio)).orderBy(prio, 'asc').orderBy('issues.created_at', sort).orderBy('issues.id', sort);
    }
    default:
      return q.orderBy('issues.created_at', sort).orderBy('issues.id', sort);
  }
}

/** The filtered query (unordered); `orderIssues` orders it. */
export async function buildIssueQuery(db: Kysely<DB>, scope: IssueScope, f: IssueFilters, user: UserRow | null): Promise<Q> {
  let q = db.selectFrom('issues').selectAll('issues') as Q;
  if (scope.kind === 'project') {
    q = q.where('issues.project_id', '=', scope.projectId);
    // Confidential issues: all of them for Planners and up, else the caller's own and assigned ones.
    if (!user?.is_admin && scope.access < AccessLevel.PLANNER) q = q.where((eb) => visibleConfidential(eb, user, null));
  } else {
    const projects = await issueProjectIds(db, user, { groupTraversal: scope.kind === 'group' ? scope.traversal : undefined, nonArchived: f.nonArchived });
    q = q.where('issues.project_id', 'in', projects);
    if (!user?.is_admin) {
      const planner = user ? await issueProjectIds(db, user, { minLevel: AccessLevel.PLANNER, membersOnly: true }) : null;
      q = q.where((eb) => visibleConfidential(eb, user, planner));
    }
  }
  if (f.state !== 'all') q = q.where('issues.state', '=', f.state);
  if (f.scope === 'created_by_me') q = q.where('issues.author_id', '=', user?.id ?? -1);
  if (f.scope === 'assigned_to_me') q = q.where((eb) => hasAssignee(eb, user?.id ?? -1));
  if (f.authorId !== undefined) q = q.where('issues.author_id', '=', f.authorId);
  if (f.authorUsername !== undefined) q = q.where((eb) => eb('issues.author_id', 'in', userIdByName(eb, f.authorUsername!)));
  if (f.assigneeId === 'None') q = q.where((eb) => eb.not(hasAssignee(eb)));
  else if (f.assigneeId === 'Any') q = q.where((eb) => hasAssignee(eb));
  else if (f.assigneeId !== undefined) q = q.where((eb) => hasAssignee(eb, f.assigneeId as number));
  if (f.assigneeUsernames?.length === 1) q = q.where((eb) => hasAssignee(eb, undefined, f.assigneeUsernames![0]));
  else if (f.assigneeUsernames?.length) q = q.where((eb) => withAllAssignees(eb, f.assigneeUsernames!));
  q = applyMilestone(q, f.milestone, f.milestoneId);
  q = applyLabels(q, f.labels);
  if (f.iids?.length) q = q.where('issues.iid', 'in', f.iids);
  if (f.createdAfter) q = q.where('issues.created_at', '>=', f.createdAfter);
  if (f.createdBefore) q = q.where('issues.created_at', '<=', f.createdBefore);
  if (f.updatedAfter) q = q.where('issues.updated_at', '>=', f.updatedAfter);
  if (f.updatedBefore) q = q.where('issues.updated_at', '<=', f.updatedBefore);
  if (f.confidential !== undefined) q = q.where('issues.confidential', '=', f.confidential ? 1 : 0);
  if (f.issueType !== undefined) q = q.where('issues.issue_type', '=', f.issueType);
  q = applyDueDate(q, f.dueDate);
  if (f.myReactionEmoji !== undefined) {
    const uid = user?.id ?? -1;
    if (f.myReactionEmoji === 'None') q = q.where((eb) => eb.not(hasReaction(eb, uid)));
    else if (f.myReactionEmoji === 'Any') q = q.where((eb) => hasReaction(eb, uid));
    else q = q.where((eb) => hasReaction(eb, uid, f.myReactionEmoji));
  }
  q = applyNot(q, f.not, user);
  if (f.search) {
    const needle = `%${escapeLike(f.search.toLowerCase())}%`;
    const cols = f.searchIn?.length ? f.searchIn : ['title', 'description'];
    q = q.where((eb) => eb.or(cols.map((c) => sql<boolean>`lower(coalesce(${sql.ref(`issues.${c}`)}, '')) like ${needle} escape '\\'`)));
  }
  return q;
}

export function orderIssues(q: Q, f: Pick<IssueFilters, 'orderBy' | 'sort'>): Q {
  return applyOrder(q, f.orderBy, f.sort);
}

/** Non-confidential issues, the caller's own and assigned ones, and (lists across projects) those of projects where the caller is a Planner or up. */
function visibleConfidential(eb: EB, user: UserRow | null, plannerProjects: Awaited<ReturnType<typeof issueProjectIds>> | null) {
  const ors = [eb('issues.confidential', '=', 0)];
  if (user) {
    ors.push(eb('issues.author_id', '=', user.id));
    ors.push(hasAssignee(eb, user.id));
    if (plannerProjects) ors.push(eb('issues.project_id', 'in', plannerProjects));
  }
  return eb.or(ors);
}
