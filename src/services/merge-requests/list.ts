// The merge request list query for the three scopes (spec §4.1): every filter is a WHERE on stored
// columns or an EXISTS on an indexed side table, so a page costs a fixed number of queries.
import { sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { escapeLike } from '../../db/sql-helpers.js';
import type { MrRow } from './rows.js';
import { featureProjectIds } from '../projects/list.js';

export type ListScope =
  | { kind: 'global' }
  | { kind: 'project'; projectId: number; access: number }
  | { kind: 'group'; groupId: number; traversal: string };

export type IdFilter = number | 'None' | 'Any';

export interface ListFilters {
  state?: string;
  scope?: string;
  authorId?: number;
  authorUsername?: string;
  assigneeId?: IdFilter;
  assigneeUsernames?: string[];
  reviewerId?: IdFilter;
  reviewerUsername?: string;
  mergeUserId?: number;
  mergeUserUsername?: string;
  milestone?: string;
  labels?: string[];
  myReactionEmoji?: string;
  not?: {
    labels?: string[];
    milestone?: string;
    authorId?: number;
    authorUsername?: string;
    assigneeId?: number;
    assigneeUsernames?: string[];
    reviewerId?: number;
    reviewerUsername?: string;
    myReactionEmoji?: string;
  };
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  mergedAfter?: string;
  mergedBefore?: string;
  deployedAfter?: string;
  deployedBefore?: string;
  environment?: string;
  search?: string;
  searchIn?: Array<'title' | 'description'>;
  sourceBranch?: string;
  targetBranch?: string;
  draft?: boolean;
  approvedByIds?: IdFilter[] | 'None' | 'Any';
  approvedByUsernames?: string[] | 'None' | 'Any';
  iids?: number[];
  sourceProjectId?: number;
  nonArchived?: boolean;
  orderBy: string;
  sort: 'asc' | 'desc';
}

type EB = ExpressionBuilder<DB, 'merge_requests'>;
type Q = SelectQueryBuilder<DB, 'merge_requests', MrRow>;

function userIdByName(eb: EB, username: string) {
  return eb.selectFrom('users').select('users.id').where(sql<boolean>`lower(users.username) = ${username.toLowerCase()}`);
}

function hasAssignee(eb: EB, userId?: number, username?: string) {
  let q = eb.selectFrom('merge_request_assignees as a').select('a.id').whereRef('a.merge_request_id', '=', 'merge_requests.id');
  if (userId !== undefined) q = q.where('a.user_id', '=', userId);
  if (username !== undefined) q = q.where('a.user_id', 'in', userIdByName(eb, username));
  return eb.exists(q);
}

function hasReviewer(eb: EB, userId?: number, username?: string) {
  let q = eb.selectFrom('merge_request_reviewers as r').select('r.id').whereRef('r.merge_request_id', '=', 'merge_requests.id');
  if (userId !== undefined) q = q.where('r.user_id', '=', userId);
  if (username !== undefined) q = q.where('r.user_id', 'in', userIdByName(eb, username));
  return eb.exists(q);
}

function hasLabel(eb: EB, title?: string) {
  let q = eb
    .selectFrom('merge_request_labels as ml')
    .innerJoin('labels as l', 'l.id', 'ml.label_id')
    .select('ml.id')
    .whereRef('ml.merge_request_id', '=', 'merge_requests.id');
  if (title !== undefined) q = q.where('l.title_lower', '=', title.toLowerCase());
  return eb.exists(q);
}

function hasMilestone(eb: EB, title: string) {
  return eb('merge_requests.milestone_id', 'in', eb.selectFrom('milestones').select('milestones.id').where('milestones.title', '=', title));
}

function hasReaction(eb: EB, userId: number, name?: string) {
  let q = eb
    .selectFrom('award_emoji as e')
    .select('e.id')
    .where('e.awardable_type', '=', 'MergeRequest')
    .whereRef('e.awardable_id', '=', 'merge_requests.id')
    .where('e.user_id', '=', userId);
  if (name !== undefined) q = q.where('e.name', '=', name);
  return eb.exists(q);
}

function hasApproval(eb: EB, userId?: number, username?: string) {
  let q = eb.selectFrom('merge_request_approvals as ap').select('ap.id').whereRef('ap.merge_request_id', '=', 'merge_requests.id');
  if (userId !== undefined) q = q.where('ap.user_id', '=', userId);
  if (username !== undefined) q = q.where('ap.user_id', 'in', userIdByName(eb, username));
  return eb.exists(q);
}

/** Projects whose merge requests the user may read (lists across projects): featureProjectIds for merge requests. */
export function readableProjectIds(db: Kysely<DB>, user: UserRow | null, opts: Parameters<typeof featureProjectIds>[3] = {}) {
  return featureProjectIds(db, user, 'merge_requests_access_level', opts);
}

function applyIdFilter(q: Q, value: IdFilter | undefined, has: (eb: EB, id?: number) => ReturnType<typeof hasAssignee>): Q {
  if (value === undefined) return q;
  if (value === 'None') return q.where((eb) => eb.not(has(eb)));
  if (value === 'Any') return q.where((eb) => has(eb));
  return q.where((eb) => has(eb, value));
}

/**
 * Merge requests with every one of the labels: the request's own matching links counted (one
 * correlated subquery on the request's index; one EXISTS per label makes PostgreSQL's planning
 * time grow fast with the number of labels, and an uncorrelated GROUP BY would read every link).
 */
function withAllLabels(eb: EB, titles: string[]) {
  const lower = [...new Set(titles.map((t) => t.toLowerCase()))];
  const matched = eb
    .selectFrom('merge_request_labels as ml')
    .innerJoin('labels as l', 'l.id', 'ml.label_id')
    .select((e) => e.fn.count(sql`distinct l.title_lower`).as('n'))
    .whereRef('ml.merge_request_id', '=', 'merge_requests.id')
    .where('l.title_lower', 'in', lower);
  return eb(matched, '=', lower.length);
}

/** Merge requests assigned to every one of the users (by username, any case): as withAllLabels. */
function withAllAssignees(eb: EB, usernames: string[]) {
  const lower = [...new Set(usernames.map((u) => u.toLowerCase()))];
  const matched = eb
    .selectFrom('merge_request_assignees as a')
    .innerJoin('users as u', 'u.id', 'a.user_id')
    .select((e) => e.fn.count(sql`distinct a.user_id`).as('n'))
    .whereRef('a.merge_request_id', '=', 'merge_requests.id')
    .where(sql<string>`lower(u.username)`, 'in', lower);
  return eb(matched, '=', lower.length);
}

function applyLabels(q: Q, labels: string[] | undefined): Q {
  if (!labels?.length) return q;
  const lower = labels.map((l) => l.toLowerCase());
  if (lower.length === 1 && lower[0] === 'none') return q.where((eb) => eb.not(hasLabel(eb)));
  if (lower.length === 1 && lower[0] === 'any') return q.where((eb) => hasLabel(eb));
  // One label: the indexed EXISTS (the common case and the benchmarked one).
  if (labels.length === 1) return q.where((eb) => hasLabel(eb, labels[0]));
  return q.where((eb) => withAllLabels(eb, labels));
}

function applyMilestone(q: Q, milestone: string | undefined): Q {
  if (milestone === undefined) return q;
  if (milestone === 'None' || milestone === 'No+Milestone') return q.where('merge_requests.milestone_id', 'is', null);
  if (milestone === 'Any') return q.where('merge_requests.milestone_id', 'is not', null);
  return q.where((eb) => hasMilestone(eb, milestone));
}

function applyNot(q: Q, not: ListFilters['not'], user: UserRow | null): Q {
  if (!not) return q;
  if (not.labels?.length) {
    const lower = [...new Set(not.labels.map((l) => l.toLowerCase()))];
    q = q.where((eb) => eb('merge_requests.id', 'not in', eb.selectFrom('merge_request_labels as ml').innerJoin('labels as l', 'l.id', 'ml.label_id').select('ml.merge_request_id').where('l.title_lower', 'in', lower)));
  }
  if (not.milestone !== undefined) {
    const m = not.milestone;
    q = q.where((eb) => eb.or([eb('merge_requests.milestone_id', 'is', null), eb.not(hasMilestone(eb, m))]));
  }
  if (not.authorId !== undefined) q = q.where('merge_requests.author_id', '!=', not.authorId);
  if (not.authorUsername !== undefined) q = q.where((eb) => eb('merge_requests.author_id', 'not in', userIdByName(eb, not.authorUsername!)));
  if (not.assigneeId !== undefined) q = q.where((eb) => eb.not(hasAssignee(eb, not.assigneeId)));
  for (const name of not.assigneeUsernames ?? []) q = q.where((eb) => eb.not(hasAssignee(eb, undefined, name)));
  if (not.reviewerId !== undefined) q = q.where((eb) => eb.not(hasReviewer(eb, not.reviewerId)));
  if (not.reviewerUsername !== undefined) q = q.where((eb) => eb.not(hasReviewer(eb, undefined, not.reviewerUsername)));
  if (not.myReactionEmoji !== undefined && user) q = q.where((eb) => eb.not(hasReaction(eb, user.id, not.myReactionEmoji)));
  return q;
}

function applyOrder(q: Q, orderBy: string, sort: 'asc' | 'desc'): Q {
  const nullsLast = (col: string) => sql`case when ${sql.ref(col)} is null then 1 else 0 end`;
  switch (orderBy) {
    case 'updated_at':
      return q.orderBy('merge_requests.updated_at', sort).orderBy('merge_requests.id', sort);
    case 'merged_at':
      return q.orderBy(nullsLast('merge_requests.merged_at')).orderBy('merge_requests.merged_at', sort).orderBy('merge_requests.id', sort);
    case 'title':
      return q.orderBy('merge_requests.title', sort).orderBy('merge_requests.id', sort);
    case 'popularity':
      return q.orderBy('merge_requests.upvotes', sort).orderBy('merge_requests.id', sort);
    case 'milestone_due': {
      const due = sql`(select m.due_date from milestones m where m.id = merge_requests.milestone_id)`;
      return q.orderBy(sql`case when ${due} is null then 1 else 0 end`).orderBy(due, sort).orderBy('merge_requests.id', sort);
    }
    case 'label_priority':
    case 'priority': {
      // Highest priority first (lowest number), requests without prioritised labels last.
      const prio = sql`(select min(l.priority) from merge_request_labels ml join labels l on l.id = ml.label_id where ml.merge_request_id = merge_requests.id)`;
      return q.orderBy(sql`case when ${prio} is null then 1 else 0 end`).orderBy(prio, 'asc').orderBy('merge_requests.created_at', sort).orderBy('merge_requests.id', sort);
    }
    default:
      return q.orderBy('merge_requests.created_at', sort).orderBy('merge_requests.id', sort);
  }
}

/** The filtered, ordered query; the caller paginates it. */
export async function buildListQuery(db: Kysely<DB>, scope: ListScope, f: ListFilters, user: UserRow | null): Promise<Q> {
  let q = db.selectFrom('merge_requests').selectAll('merge_requests') as Q;
  if (scope.kind === 'project') {
    q = q.where('merge_requests.project_id', '=', scope.projectId);
  } else {
    const projects = await readableProjectIds(db, user, { groupTraversal: scope.kind === 'group' ? scope.traversal : undefined, nonArchived: f.nonArchived });
    q = q.where('merge_requests.project_id', 'in', projects);
  }
  if (f.state && f.state !== 'all') q = q.where('merge_requests.state', '=', f.state);
  if (f.scope === 'created_by_me') q = q.where('merge_requests.author_id', '=', user?.id ?? -1);
  if (f.scope === 'assigned_to_me') q = q.where((eb) => hasAssignee(eb, user?.id ?? -1));
  if (f.scope === 'reviews_for_me') q = q.where((eb) => hasReviewer(eb, user?.id ?? -1));
  if (f.authorId !== undefined) q = q.where('merge_requests.author_id', '=', f.authorId);
  if (f.authorUsername !== undefined) q = q.where((eb) => eb('merge_requests.author_id', 'in', userIdByName(eb, f.authorUsername!)));
  q = applyIdFilter(q, f.assigneeId, (eb, id) => hasAssignee(eb, id));
  if (f.assigneeUsernames?.length === 1) q = q.where((eb) => hasAssignee(eb, undefined, f.assigneeUsernames![0]));
  else if (f.assigneeUsernames?.length) q = q.where((eb) => withAllAssignees(eb, f.assigneeUsernames!));
  q = applyIdFilter(q, f.reviewerId, (eb, id) => hasReviewer(eb, id));
  if (f.reviewerUsername !== undefined) q = q.where((eb) => hasReviewer(eb, undefined, f.reviewerUsername));
  if (f.mergeUserId !== undefined) q = q.where('merge_requests.merge_user_id', '=', f.mergeUserId).where('merge_requests.state', '=', 'merged');
  if (f.mergeUserUsername !== undefined) {
    q = q.where((eb) => eb('merge_requests.merge_user_id', 'in', userIdByName(eb, f.mergeUserUsername!))).where('merge_requests.state', '=', 'merged');
  }
  q = applyMilestone(q, f.milestone);
  q = applyLabels(q, f.labels);
  if (f.myReactionEmoji !== undefined) {
    const uid = user?.id ?? -1;
    if (f.myReactionEmoji === 'None') q = q.where((eb) => eb.not(hasReaction(eb, uid)));
    else if (f.myReactionEmoji === 'Any') q = q.where((eb) => hasReaction(eb, uid));
    else q = q.where((eb) => hasReaction(eb, uid, f.myReactionEmoji));
  }
  q = applyNot(q, f.not, user);
  if (f.createdAfter) q = q.where('merge_requests.created_at', '>=', f.createdAfter);
  if (f.createdBefore) q = q.where('merge_requests.created_at', '<=', f.createdBefore);
  if (f.updatedAfter) q = q.where('merge_requests.updated_at', '>=', f.updatedAfter);
  if (f.updatedBefore) q = q.where('merge_requests.updated_at', '<=', f.updatedBefore);
  if (f.mergedAfter) q = q.where('merge_requests.merged_at', '>=', f.mergedAfter);
  if (f.mergedBefore) q = q.where('merge_requests.merged_at', '<=', f.mergedBefore);
  if (f.environment !== undefined || f.deployedAfter || f.deployedBefore) {
    q = q.where((eb) => {
      let d = eb.selectFrom('deployment_merge_requests as dm').select('dm.id').whereRef('dm.merge_request_id', '=', 'merge_requests.id');
      if (f.environment !== undefined) d = d.where('dm.environment', '=', f.environment);
      if (f.deployedAfter) d = d.where('dm.deployed_at', '>', f.deployedAfter);
      if (f.deployedBefore) d = d.where('dm.deployed_at', '<', f.deployedBefore);
      return eb.exists(d);
    });
  }
  if (f.search) {
    const needle = `%${escapeLike(f.search.toLowerCase())}%`;
    const cols = f.searchIn?.length ? f.searchIn : ['title', 'description'];
    q = q.where((eb) => eb.or(cols.map((c) => sql<boolean>`lower(coalesce(${sql.ref(`merge_requests.${c}`)}, '')) like ${needle} escape '\\'`)));
  }
  if (f.sourceBranch !== undefined) q = q.where('merge_requests.source_branch', '=', f.sourceBranch);
  if (f.targetBranch !== undefined) q = q.where('merge_requests.target_branch', '=', f.targetBranch);
  if (f.draft !== undefined) q = q.where('merge_requests.draft', '=', f.draft ? 1 : 0);
  if (f.approvedByIds !== undefined) {
    const v = f.approvedByIds;
    if (v === 'None') q = q.where((eb) => eb.not(hasApproval(eb)));
    else if (v === 'Any') q = q.where((eb) => hasApproval(eb));
    else for (const id of v) q = q.where((eb) => hasApproval(eb, id as number));
  }
  if (f.approvedByUsernames !== undefined) {
    const v = f.approvedByUsernames;
    if (v === 'None') q = q.where((eb) => eb.not(hasApproval(eb)));
    else if (v === 'Any') q = q.where((eb) => hasApproval(eb));
    else for (const name of v) q = q.where((eb) => hasApproval(eb, undefined, name));
  }
  if (f.iids?.length) q = q.where('merge_requests.iid', 'in', f.iids);
  if (f.sourceProjectId !== undefined) q = q.where('merge_requests.source_project_id', '=', f.sourceProjectId);
  return applyOrder(q, f.orderBy, f.sort);
}
