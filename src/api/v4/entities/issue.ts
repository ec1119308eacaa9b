// Issue presenters named after GitLab's entities: Issue (lists, single reads and writes; lists
// without `subscribed`, as GitLab's `include_subscribed: false`), in GitLab's field order
// (IssuableEntity, IssueBasic with the EE edition's blocking_issues_count, Issue). Presenters never
// query: they read a bundle loaded in batch.
import { fullPath } from '../../../services/projects/lookup.js';
import type { IssueBundle, IssueRow } from '../../../services/issues/rows.js';
import type { UserRefRow } from '../../../db/repositories/users.js';
import { humanDuration, presentLabelDetails, presentMilestone, taskCompletion } from './merge-request.js';
import { presentUserBasic, presentUserRefs } from './user.js';

export interface IssuePresentCtx {
  base: string;
  bundle: IssueBundle;
  /** A group's list: references relative to the group. */
  group?: { id: number; full_path: string } | null;
  withLabelsDetails?: boolean;
  /** Single reads and writes: whether the caller is subscribed. Lists leave it out. */
  subscribed?: boolean;
}

function userRef(u: UserRefRow | undefined, base: string) {
  return u ? presentUserBasic(u, { base }) : null;
}

/**
 * GitLab's `has_tasks` is `!issue.tasks?`: true for a description without checklist items, whose
 * `task_status` ("0 of 0 checklist items completed", empty for no description) is then shown; an
 * issue with checklist items has `has_tasks: false` and no `task_status`.
 */
function taskFields(out: Record<string, unknown>, description: string | null): void {
  const done = taskCompletion(description);
  out.has_tasks = done.count === 0;
  if (done.count === 0) out.task_status = description ? `0 of 0 checklist items completed` : '';
}

export function issueWebUrl(base: string, projectPath: string, issue: Pick<IssueRow, 'iid' | 'issue_type'>): string {
  const kind = issue.issue_type === 'incident' ? 'issues/incident' : 'issues';
  return `${base}/${projectPath}/-/${kind}/${issue.iid}`;
}

/** IssueBasic (issue links' source and target): the fields up to the EE edition's blocking_issues_count. */
export function presentIssueBasic(issue: IssueRow, ctx: IssuePresentCtx): Record<string, unknown> {
  const { bundle, base } = ctx;
  const info = bundle.projects.get(issue.project_id)!;
  const path = fullPath(info.project, info.namespace);
  const assignees = presentUserRefs(bundle.assignees.get(issue.id), bundle.users, base);
  const labels = bundle.labels.get(issue.id) ?? [];
  const milestone = issue.milestone_id !== null ? bundle.milestones.get(issue.milestone_id) : undefined;
  const out: Record<string, unknown> = {
    id: issue.id,
    iid: issue.iid,
    project_id: issue.project_id,
    title: issue.title,
    description: issue.description,
    state: issue.state,
    created_at: issue.created_at,
    updated_at: issue.updated_at,
    closed_at: issue.closed_at,
    closed_by: issue.closed_by_id !== null ? userRef(bundle.users.get(issue.closed_by_id), base) : null,
    labels: ctx.withLabelsDetails ? labels.map(presentLabelDetails) : labels.map((l) => l.title),
    milestone: milestone ? presentMilestone(milestone, base, bundle.projects, milestone.group_id === null ? null : (bundle.groupPaths.get(milestone.group_id) ?? null)) : null,
    assignees,
    author: userRef(bundle.users.get(issue.author_id), base),
    type: issue.issue_type.toUpperCase(),
    assignee: assignees[0] ?? null,
    user_notes_count: issue.user_notes_count,
    merge_requests_count: bundle.mergeRequestCounts.get(issue.id) ?? 0,
    upvotes: issue.upvotes,
    downvotes: issue.downvotes,
    due_date: issue.due_date,
    confidential: issue.confidential === 1,
    discussion_locked: issue.discussion_locked === null ? null : issue.discussion_locked === 1,
    issue_type: issue.issue_type,
    web_url: issueWebUrl(base, path, issue),
    time_stats: {
      time_estimate: issue.time_estimate,
      total_time_spent: issue.total_time_spent,
      human_time_estimate: humanDuration(issue.time_estimate),
      human_total_time_spent: humanDuration(issue.total_time_spent),
    },
    task_completion_status: taskCompletion(issue.description),
    blocking_issues_count: 0,
  };
  return out;
}

/** Issue: IssueBasic and the single-issue fields. */
export function presentIssue(issue: IssueRow, ctx: IssuePresentCtx): Record<string, unknown> {
  const { bundle, base } = ctx;
  const info = bundle.projects.get(issue.project_id)!;
  const path = fullPath(info.project, info.namespace);
  const api = `${base}/api/v4/projects/${issue.project_id}`;
  const out = presentIssueBasic(issue, ctx);
  taskFields(out, issue.description);
  out._links = {
    self: `${api}/issues/${issue.iid}`,
    notes: `${api}/issues/${issue.iid}/notes`,
    award_emoji: `${api}/issues/${issue.iid}/award_emoji`,
    project: api,
    closed_as_duplicate_of: null,
  };
  let relative = `#${issue.iid}`;
  if (ctx.group) relative = info.namespace.id === ctx.group.id ? `${info.project.path}#${issue.iid}` : `${path}#${issue.iid}`;
  out.references = { short: `#${issue.iid}`, relative, full: `${path}#${issue.iid}` };
  out.severity = 'UNKNOWN';
  if (ctx.subscribed !== undefined) out.subscribed = ctx.subscribed;
  out.moved_to_id = issue.moved_to_id;
  out.imported = false;
  out.imported_from = 'none';
  out.service_desk_reply_to = null;
  return out;
}
