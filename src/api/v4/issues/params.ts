// Parameter parsing for the issue endpoints: Grape's declarations of lib/api/issues.rb and
// issues_helpers.rb (types, enums, mutually exclusive pairs) as typed readers.
import type { Ctx } from '../../../http/route.js';
import { notGiven, paramError } from '../../../http/errors.js';
import type { ParamHash } from '../../../http/params.js';
import { Params } from '../../../http/params.js';
import { assigneeIds, idFilter, labelList, notPrefixed, optId, usernameList } from '../merge-requests/params.js';
import { dbId } from '../../../services/merge-requests/rows.js';
import { ISSUE_TYPES } from '../../../services/issues/rows.js';
import type { IssueFilters } from '../../../services/issues/list.js';
import type { CreateIssueInput, IssueAttributes } from '../../../services/issues/write.js';

const STATES = ['opened', 'closed', 'all'] as const;
/** GitLab's sort options, with `weight` (a paid tier's; no issue has one here) and `id` (keyset). */
export const ORDER_BY = ['created_at', 'due_date', 'label_priority', 'milestone_due', 'popularity', 'priority', 'relative_position', 'title', 'updated_at', 'weight', 'id'] as const;
const SCOPES = ['created-by-me', 'assigned-to-me', 'created_by_me', 'assigned_to_me', 'all'] as const;
const MILESTONE_WILDCARDS = ['None', 'Any', 'Upcoming', 'Started'] as const;
const DUE_DATES = ['0', 'any', 'today', 'tomorrow', 'overdue', 'week', 'month', 'next_month_and_previous_two_weeks', ''] as const;

function milestoneWildcard(p: Params, name: string): (typeof MILESTONE_WILDCARDS)[number] | undefined {
  if (!p.has(name)) return undefined;
  const raw = p.raw[name];
  const match = typeof raw === 'string' ? MILESTONE_WILDCARDS.find((w) => w.toLowerCase() === raw.toLowerCase()) : undefined;
  if (!match) throw paramError(`${name} does not have a valid value`);
  return match;
}

function parseNot(hash: ParamHash | undefined): IssueFilters['not'] {
  if (!hash) return undefined;
  const p = new Params(hash);
  try {
    return {
      labels: labelList(p, 'labels'),
      milestone: p.string('milestone'),
      milestoneId: milestoneWildcard(p, 'milestone_id'),
      authorId: optId(p.int('author_id')),
      authorUsername: p.string('author_username'),
      assigneeId: optId(p.int('assignee_id')),
      assigneeUsernames: usernameList(p, 'assignee_username'),
      iids: p.intArray('iids', { comma: true })?.map(dbId),
      myReactionEmoji: p.string('my_reaction_emoji'),
    };
  } catch (e) {
    throw notPrefixed(e);
  }
}

export function parseIssueFilters(c: Ctx, defaults: { scope: string; nonArchived: boolean }): IssueFilters {
  const p = c.params;
  for (const pair of [
    ['author_id', 'author_username'],
    ['assignee_id', 'assignee_username'],
    ['milestone_id', 'milestone'],
  ]) {
    p.mutuallyExclusive(pair);
  }
  const searchIn = p.string('in');
  let inCols: Array<'title' | 'description'> | undefined;
  if (searchIn !== undefined) {
    inCols = searchIn.split(',').map((s) => s.trim()).filter(Boolean) as Array<'title' | 'description'>;
    if (!inCols.length || inCols.some((x) => x !== 'title' && x !== 'description')) throw paramError('in does not have a valid value');
  }
  p.bool('with_labels_details');
  const dueDate = p.enum('due_date', DUE_DATES);
  return {
    state: p.enum('state', STATES) ?? 'all',
    scope: (p.enum('scope', SCOPES) ?? defaults.scope).replace(/-/g, '_'),
    authorId: optId(p.int('author_id')),
    authorUsername: p.string('author_username'),
    assigneeId: idFilter(p, 'assignee_id'),
    assigneeUsernames: usernameList(p, 'assignee_username'),
    milestone: p.string('milestone'),
    milestoneId: milestoneWildcard(p, 'milestone_id'),
    labels: labelList(p, 'labels'),
    iids: p.intArray('iids', { comma: true })?.map(dbId),
    search: p.string('search') || undefined,
    searchIn: inCols,
    createdAfter: p.datetime('created_after'),
    createdBefore: p.datetime('created_before'),
    updatedAfter: p.datetime('updated_after'),
    updatedBefore: p.datetime('updated_before'),
    confidential: p.bool('confidential'),
    issueType: p.enum('issue_type', ISSUE_TYPES),
    dueDate: dueDate === '' ? undefined : dueDate,
    myReactionEmoji: p.string('my_reaction_emoji'),
    nonArchived: p.bool('non_archived') ?? defaults.nonArchived,
    not: parseNot(p.hash('not')),
    orderBy: p.enum('order_by', ORDER_BY) ?? 'created_at',
    sort: p.enum('sort', ['asc', 'desc'] as const) ?? 'desc',
  };
}

export const UPDATE_PARAMS = [
  'assignee_id', 'assignee_ids', 'confidential', 'created_at', 'description', 'discussion_locked', 'due_date', 'labels', 'add_labels',
  'remove_labels', 'milestone_id', 'state_event', 'title', 'issue_type',
];

/**
 * The writable attributes. `mayAdmin`: the caller may set metadata (labels, milestone, assignees,
 * due date, lock); from others GitLab drops those silently. `owner`: may date the issue.
 */
export function parseIssueAttributes(c: Ctx, opts: { mayAdmin: boolean; owner: boolean; create: boolean; mayConfidential: boolean }): IssueAttributes {
  const p = c.params;
  const attrs: IssueAttributes = {};
  if (p.has('title')) attrs.title = p.string('title', { allowBlank: false })!;
  if (p.has('description')) attrs.description = p.nullableString('description') ?? null;
  const assignees = assigneeIds(p);
  const labels = p.has('labels') ? (labelList(p, 'labels') ?? []) : undefined;
  const addLabels = p.has('add_labels') ? (labelList(p, 'add_labels') ?? []) : undefined;
  const removeLabels = p.has('remove_labels') ? (labelList(p, 'remove_labels') ?? []) : undefined;
  let milestoneId: number | null | undefined;
  if (p.has('milestone_id')) {
    const raw = p.raw.milestone_id;
    milestoneId = raw === '' || raw === null ? null : dbId(p.int('milestone_id')!);
  }
  let dueDate: string | null | undefined;
  if (p.has('due_date')) dueDate = p.raw.due_date === '' || p.raw.due_date === null ? null : p.date('due_date')!;
  const confidential = p.bool('confidential');
  const discussionLocked = p.bool('discussion_locked');
  const issueType = p.enum('issue_type', ISSUE_TYPES);
  const stateEvent = opts.create ? undefined : p.enum('state_event', ['close', 'reopen'] as const);
  const createdAt = p.datetime('created_at');
  // A date before 1970 cannot be used (as for notes).
  if (createdAt !== undefined && Date.parse(createdAt) < 0) throw paramError('created_at is invalid');
  const updatedAtRaw = opts.create ? undefined : p.datetime('updated_at');
  if (updatedAtRaw !== undefined && Date.parse(updatedAtRaw) < 0) throw paramError('updated_at is invalid');
  const updatedAt = updatedAtRaw;
  if (opts.mayAdmin) {
    Object.assign(attrs, { assigneeIds: assignees, labels, addLabels, removeLabels, milestoneId, dueDate, discussionLocked });
  }
  if (opts.mayConfidential) attrs.confidential = confidential;
  attrs.issueType = issueType;
  attrs.stateEvent = stateEvent;
  if (opts.owner) {
    attrs.createdAt = createdAt;
    attrs.updatedAt = updatedAt;
  }
  for (const k of Object.keys(attrs) as Array<keyof IssueAttributes>) if (attrs[k] === undefined) delete attrs[k];
  return attrs;
}

export function parseIssueCreate(c: Ctx, opts: { mayAdmin: boolean; owner: boolean }): CreateIssueInput {
  const p = c.params;
  if (!p.has('title') || p.raw.title === null) throw notGiven('title');
  const attrs = parseIssueAttributes(c, { ...opts, create: true, mayConfidential: true });
  const iid = p.int('iid', { min: 1, max: 2_147_483_646 });
  return Object.assign(attrs, { title: attrs.title!, ...(opts.owner && iid !== undefined ? { iid } : {}) });
}
