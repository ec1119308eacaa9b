// Issue payloads (GitLab's Gitlab::HookData::IssueBuilder): the Issue Hook, and the issue's
// attributes that note and emoji events on an issue carry. Timestamps are ISO 8601 with
// milliseconds, as the other payloads.
import type { AppContext } from '../../context.js';
import { findUserRefsByIds, type UserRefRow } from '../../db/repositories/users.js';
import { humanDuration } from '../durations.js';
import type { IssueAssociations, IssueEvent } from '../events.js';
import { loadIssueBundle, type IssueBundle, type IssueRow } from '../issues/rows.js';
import type { ProjectInfo } from '../merge-requests/rows.js';
import { projectHookAttrs, projectWebUrl, repositoryAttrs, userHookAttrs } from './payloads.js';
import { labelHookAttrs } from './issuable-payloads.js';

const STATE_IDS: Record<string, number> = { opened: 1, closed: 2 };

/** IssueBuilder#build: the issue's hook attributes (without `action`). */
export function issueHookAttrs(base: string, info: ProjectInfo, issue: IssueRow, bundle: IssueBundle): Record<string, unknown> {
  const assignees = bundle.assignees.get(issue.id) ?? [];
  return {
    author_id: issue.author_id,
    closed_at: issue.closed_at,
    confidential: issue.confidential === 1,
    created_at: issue.created_at,
    description: issue.description,
    discussion_locked: issue.discussion_locked === null ? null : issue.discussion_locked === 1,
    due_date: issue.due_date,
    id: issue.id,
    iid: issue.iid,
    last_edited_at: null,
    last_edited_by_id: null,
    milestone_id: issue.milestone_id,
    moved_to_id: issue.moved_to_id,
    duplicated_to_id: null,
    project_id: issue.project_id,
    relative_position: null,
    state_id: STATE_IDS[issue.state] ?? 1,
    time_estimate: issue.time_estimate,
    title: issue.title,
    updated_at: issue.updated_at,
    updated_by_id: issue.updated_by_id,
    type: issue.issue_type === 'issue' ? 'Issue' : issue.issue_type === 'test_case' ? 'Test Case' : issue.issue_type.charAt(0).toUpperCase() + issue.issue_type.slice(1),
    url: `${projectWebUrl(base, info)}/-/issues/${issue.iid}`,
    total_time_spent: issue.total_time_spent,
    time_change: 0,
    human_total_time_spent: humanDuration(issue.total_time_spent),
    human_time_change: null,
    human_time_estimate: humanDuration(issue.time_estimate),
    assignee_ids: assignees,
    assignee_id: assignees[0] ?? null,
    labels: (bundle.labels.get(issue.id) ?? []).map(labelHookAttrs),
    state: issue.state,
    severity: 'unknown',
    customer_relations_contacts: [],
  };
}

/** The issue's hook attributes, its bundle loaded (note and emoji events). */
export async function loadIssueHookAttrs(app: AppContext, base: string, info: ProjectInfo, issue: IssueRow): Promise<Record<string, unknown>> {
  return issueHookAttrs(base, info, issue, await loadIssueBundle(app.db, [issue], [info]));
}

async function usersHookAttrs(app: AppContext, base: string, ids: number[]) {
  const users = await findUserRefsByIds(app.db, ids);
  return ids.map((id) => users.get(id)).filter((u): u is UserRefRow => !!u).map((u) => userHookAttrs(base, u));
}

const CHANGED = ['title', 'description', 'confidential', 'discussion_locked', 'due_date', 'milestone_id', 'time_estimate', 'closed_at', 'updated_at', 'updated_by_id'] as const;

async function issueChanges(app: AppContext, base: string, before: IssueRow, after: IssueRow, bundle: IssueBundle, was?: IssueAssociations) {
  const out: Record<string, unknown> = {};
  const norm = (k: (typeof CHANGED)[number], r: IssueRow) => (k === 'confidential' || k === 'discussion_locked' ? (r[k] === null ? null : r[k] === 1) : r[k]);
  for (const k of CHANGED) {
    const a = norm(k, before);
    const b = norm(k, after);
    if (a !== b) out[k] = { previous: a, current: b };
  }
  if (before.state !== after.state) out.state_id = { previous: STATE_IDS[before.state] ?? 1, current: STATE_IDS[after.state] ?? 1 };
  if (!was) return out;
  const assignees = bundle.assignees.get(after.id) ?? [];
  if (was.assigneeIds.join(',') !== assignees.join(',')) {
    out.assignees = { previous: await usersHookAttrs(app, base, was.assigneeIds), current: await usersHookAttrs(app, base, assignees) };
  }
  const labels = (bundle.labels.get(after.id) ?? []).map((l) => l.id);
  if ([...was.labelIds].sort((x, y) => x - y).join(',') !== [...labels].sort((x, y) => x - y).join(',')) {
    const old = was.labelIds.length ? await app.db.selectFrom('labels').selectAll().where('id', 'in', was.labelIds).orderBy('title').execute() : [];
    out.labels = { previous: old.map(labelHookAttrs), current: (bundle.labels.get(after.id) ?? []).map(labelHookAttrs) };
  }
  return out;
}

/** An issue event (`event_type` confidential_issue for a confidential issue). */
export async function issuePayload(app: AppContext, p: { base: string; info: ProjectInfo; issue: IssueRow; user: UserRefRow; action?: IssueEvent['action']; previous?: IssueRow; previousAssociations?: IssueAssociations }) {
  const bundle = await loadIssueBundle(app.db, [p.issue], [p.info]);
  const attrs = issueHookAttrs(p.base, p.info, p.issue, bundle);
  if (p.action) attrs.action = p.action;
  const assignees = await usersHookAttrs(app, p.base, bundle.assignees.get(p.issue.id) ?? []);
  return {
    object_kind: 'issue',
    event_type: p.issue.confidential === 1 ? 'confidential_issue' : 'issue',
    user: userHookAttrs(p.base, p.user),
    project: projectHookAttrs(p.base, p.info),
    object_attributes: attrs,
    labels: (bundle.labels.get(p.issue.id) ?? []).map(labelHookAttrs),
    changes: p.previous ? await issueChanges(app, p.base, p.previous, p.issue, bundle, p.previousAssociations) : {},
    repository: repositoryAttrs(p.base, p.info, 'issuable'),
    ...(assignees.length ? { assignees, assignee: assignees[0] } : {}),
  };
}
