// Parameter parsing for the merge request endpoints: Grape's declarations of
// merge_requests_helpers.rb (types, enums, mutually exclusive pairs) as typed readers.
import type { Ctx } from '../../../http/route.js';
import { paramError } from '../../../http/errors.js';
import type { ParamHash } from '../../../http/params.js';
import { Params } from '../../../http/params.js';
import { MAX_LABELS, splitLabels } from '../../../services/merge-requests/attributes.js';
import type { IdFilter, ListFilters } from '../../../services/merge-requests/list.js';
import { dbId } from '../../../services/merge-requests/rows.js';
import type { CreateInput, MrAttributes } from '../../../services/merge-requests/write.js';

const STATES = ['opened', 'closed', 'locked', 'merged', 'all'] as const;
const ORDER_BY = ['created_at', 'label_priority', 'milestone_due', 'popularity', 'priority', 'title', 'updated_at', 'merged_at'] as const;
const SCOPES = ['created-by-me', 'assigned-to-me', 'created_by_me', 'assigned_to_me', 'reviews_for_me', 'all'] as const;

export function optId(n: number | undefined): number | undefined {
  return n === undefined ? undefined : dbId(n);
}

export function idFilter(p: Params, name: string): IdFilter | undefined {
  if (!p.has(name)) return undefined;
  const raw = p.raw[name];
  if (typeof raw === 'string') {
    const lower = raw.toLowerCase();
    if (lower === 'none') return 'None';
    if (lower === 'any') return 'Any';
  }
  const n = p.int(name);
  return n === undefined ? undefined : dbId(n);
}

/** `approved_by_ids[]`: integers, or None / Any; at most 5. */
function approvedBy<T>(p: Params, name: string, read: () => T[] | undefined): T[] | 'None' | 'Any' | undefined {
  if (!p.has(name)) return undefined;
  const raw = p.raw[name];
  const single = Array.isArray(raw) && raw.length === 1 ? raw[0] : raw;
  if (typeof single === 'string' && /^(none|any)$/i.test(single)) return single.toLowerCase() === 'none' ? 'None' : 'Any';
  const values = read() ?? [];
  if (values.length > 5) throw paramError(`${name} does not have a valid value`);
  return values;
}

/** A list of usernames to filter by (at most MAX_LABELS, as label lists). */
export function usernameList(p: Params, name: string): string[] | undefined {
  const names = p.stringArray(name);
  if (names && names.length > MAX_LABELS) throw paramError(`${name} has too many values (maximum is ${MAX_LABELS})`);
  return names;
}

export function labelList(p: Params, name: string): string[] | undefined {
  const titles = splitLabels(p.stringArray(name, { comma: true }));
  if (titles && titles.length > MAX_LABELS) throw paramError(`${name} has too many values (maximum is ${MAX_LABELS})`);
  return titles;
}

function parseNot(hash: ParamHash | undefined): ListFilters['not'] {
  if (!hash) return undefined;
  const p = new Params(hash);
  const out: NonNullable<ListFilters['not']> = {};
  try {
    out.labels = labelList(p, 'labels');
    out.milestone = p.string('milestone');
    out.authorId = optId(p.int('author_id'));
    out.authorUsername = p.string('author_username');
    out.assigneeId = optId(p.int('assignee_id'));
    out.assigneeUsernames = usernameList(p, 'assignee_username');
    out.reviewerId = optId(p.int('reviewer_id'));
    out.reviewerUsername = p.string('reviewer_username');
    out.myReactionEmoji = p.string('my_reaction_emoji');
  } catch (e) {
    throw notPrefixed(e);
  }
  return out;
}

/** A `not[…]` parameter's error names it as Grape does (`not[labels] is invalid`). */
export function notPrefixed(e: unknown): unknown {
  if (e && typeof e === 'object' && 'body' in e) {
    const body = (e as { body: { error?: string } }).body;
    if (body.error) (body as { error: string }).error = `not[${body.error}`.replace(/^not\[(\w+)/, 'not[$1]');
  }
  return e;
}

export function parseListFilters(c: Ctx, defaults: { scope: string; nonArchived: boolean }): ListFilters {
  const p = c.params;
  for (const pair of [
    ['author_id', 'author_username'],
    ['assignee_id', 'assignee_username'],
    ['reviewer_id', 'reviewer_username'],
    ['merge_user_id', 'merge_user_username'],
    ['draft', 'wip'],
    ['approved_by_ids', 'approved_by_usernames'],
  ]) {
    p.mutuallyExclusive(pair);
  }
  const scope = (p.enum('scope', SCOPES) ?? defaults.scope).replace(/-/g, '_');
  const wip = p.enum('wip', ['yes', 'no'] as const);
  const draft = p.bool('draft') ?? (wip === undefined ? undefined : wip === 'yes');
  const searchIn = p.string('in');
  let inCols: Array<'title' | 'description'> | undefined;
  if (searchIn !== undefined) {
    inCols = searchIn.split(',').map((s) => s.trim()).filter(Boolean) as Array<'title' | 'description'>;
    if (!inCols.length || inCols.some((x) => x !== 'title' && x !== 'description')) throw paramError('in does not have a valid value');
  }
  if (p.has('view')) p.enum('view', ['simple'] as const);
  p.bool('with_labels_details');
  p.bool('with_merge_status_recheck');
  // GITLAB-COMPAT: approver_ids is validated (integers, None or Any) but filters nothing: there are no approval rules.
  approvedBy(p, 'approver_ids', () => p.intArray('approver_ids', { comma: true }));
  return {
    state: p.enum('state', STATES) ?? 'all',
    scope,
    authorId: optId(p.int('author_id')),
    authorUsername: p.string('author_username'),
    assigneeId: idFilter(p, 'assignee_id'),
    assigneeUsernames: usernameList(p, 'assignee_username'),
    reviewerId: idFilter(p, 'reviewer_id'),
    reviewerUsername: p.string('reviewer_username'),
    mergeUserId: optId(p.int('merge_user_id')),
    mergeUserUsername: p.string('merge_user_username'),
    milestone: p.string('milestone'),
    labels: labelList(p, 'labels'),
    myReactionEmoji: p.string('my_reaction_emoji'),
    not: parseNot(p.hash('not')),
    createdAfter: p.datetime('created_after'),
    createdBefore: p.datetime('created_before'),
    updatedAfter: p.datetime('updated_after'),
    updatedBefore: p.datetime('updated_before'),
    mergedAfter: p.datetime('merged_after'),
    mergedBefore: p.datetime('merged_before'),
    deployedAfter: p.datetime('deployed_after'),
    deployedBefore: p.datetime('deployed_before'),
    environment: p.string('environment'),
    search: p.string('search') || undefined,
    searchIn: inCols,
    sourceBranch: p.string('source_branch'),
    targetBranch: p.string('target_branch'),
    draft,
    approvedByIds: approvedBy(p, 'approved_by_ids', () => p.intArray('approved_by_ids', { comma: true })?.map(dbId)),
    approvedByUsernames: approvedBy(p, 'approved_by_usernames', () => p.stringArray('approved_by_usernames', { comma: true })),
    iids: p.intArray('iids', { comma: true })?.map(dbId),
    sourceProjectId: optId(p.int('source_project_id')),
    nonArchived: p.bool('non_archived') ?? defaults.nonArchived,
    orderBy: p.enum('order_by', ORDER_BY) ?? 'created_at',
    sort: p.enum('sort', ['asc', 'desc'] as const) ?? 'desc',
  };
}

/** assignee_id / assignee_ids: 0 or empty unassigns everyone. */
export function assigneeIds(p: Params): number[] | undefined {
  if (p.has('assignee_ids')) return (p.intArray('assignee_ids', { comma: true }) ?? []).filter((id) => id > 0);
  if (p.has('assignee_id')) {
    const raw = p.raw.assignee_id;
    if (raw === '' || raw === null) return [];
    const id = p.int('assignee_id')!;
    return id > 0 ? [id] : [];
  }
  return undefined;
}

export function parseAttributes(c: Ctx): MrAttributes {
  const p = c.params;
  p.mutuallyExclusive(['milestone_id', 'milestone']);
  const attrs: MrAttributes = {};
  if (p.has('title')) attrs.title = p.string('title', { allowBlank: false })!;
  if (p.has('description')) attrs.description = p.nullableString('description') ?? null;
  attrs.assigneeIds = assigneeIds(p);
  if (p.has('reviewer_ids')) attrs.reviewerIds = (p.intArray('reviewer_ids', { comma: true }) ?? []).filter((id) => id > 0);
  if (p.has('labels')) attrs.labels = labelList(p, 'labels') ?? [];
  if (p.has('add_labels')) attrs.addLabels = labelList(p, 'add_labels') ?? [];
  if (p.has('remove_labels')) attrs.removeLabels = labelList(p, 'remove_labels') ?? [];
  if (p.has('milestone_id')) {
    const raw = p.raw.milestone_id;
    attrs.milestoneId = raw === '' || raw === null ? null : dbId(p.int('milestone_id')!);
  }
  if (p.has('milestone')) attrs.milestone = p.string('milestone', { max: 255 });
  attrs.removeSourceBranch = p.bool('remove_source_branch');
  attrs.allowCollaboration = p.bool('allow_collaboration') ?? p.bool('allow_maintainer_to_push');
  attrs.squash = p.bool('squash');
  if (p.has('merge_after')) attrs.mergeAfter = p.raw.merge_after === '' || p.raw.merge_after === null ? null : p.datetime('merge_after')!;
  attrs.discussionLocked = p.bool('discussion_locked');
  attrs.approvalsBeforeMerge = p.int('approvals_before_merge', { min: 0, max: 2_147_483_647 });
  if (p.has('target_branch')) attrs.targetBranch = p.string('target_branch', { allowBlank: false });
  attrs.stateEvent = p.enum('state_event', ['close', 'reopen'] as const);
  for (const k of Object.keys(attrs) as Array<keyof MrAttributes>) if (attrs[k] === undefined) delete attrs[k];
  return attrs;
}

/** Every required parameter is checked first; the first missing one is named (spec document 1 §7.2). */
export function parseCreate(c: Ctx): CreateInput {
  const p = c.params;
  p.requireAll(['source_branch', 'target_branch', 'title']);
  const source = p.string('source_branch', { allowBlank: false })!;
  const target = p.string('target_branch', { allowBlank: false })!;
  const attrs = parseAttributes(c);
  return Object.assign({}, attrs, {
    title: attrs.title!,
    sourceBranch: source,
    targetBranch: target,
    targetProjectId: optId(p.int('target_project_id')),
  });
}
