// Merge request presenters named after GitLab's entities: MergeRequestBasic (lists),
// MergeRequest (single read, create, update, merge), MergeRequestSimple (view=simple). Field order
// follows GitLab (reference §5.2). Presenters never query: they read a bundle loaded in batch.
import { humanDuration } from '../../../services/durations.js';
import type { UserRefRow } from '../../../db/repositories/users.js';
import { fullPath } from '../../../services/projects/lookup.js';
import type { LabelRow, MilestoneRow, MrBundle, MrRow, ProjectInfo } from '../../../services/merge-requests/rows.js';
import { headPipelineOf } from '../../../services/merge-requests/rows.js';
import { detailedMergeStatus, discussionsResolved, squashOnMerge } from '../../../services/merge-requests/status.js';
import { renderMarkdown } from '../../../services/merge-requests/markdown.js';
import { presentUserBasic, presentUserRefs } from './user.js';
import { presentPipelineBasic, presentPipelineDetailed } from './pipeline.js';
import { todayUtc } from '../../../services/personal-access-tokens.js';

export interface MrPresentCtx {
  base: string;
  bundle: MrBundle;
  /** Group whose list this is: references are relative to it (reference §5.2). */
  group?: { id: number; full_path: string } | null;
  /** Project endpoints: references relative to the project. */
  projectContext?: boolean;
  withLabelsDetails?: boolean;
  renderHtml?: boolean;
}

export interface MrDetailCtx extends MrPresentCtx {
  canMerge: boolean;
  canReadPipelines: boolean;
  divergedCommitsCount?: number;
  includeRebaseInProgress?: boolean;
  firstContribution?: boolean;
  firstDeployedToProductionAt?: string | null;
  /** Whether the caller is subscribed (an explicit choice, else being a participant); false without a caller. */
  subscribed?: boolean;
}

function b(v: number | null | undefined): boolean {
  return v === 1;
}

function nullableBool(v: number | null | undefined): boolean | null {
  return v === null || v === undefined ? null : v === 1;
}

function userRef(u: UserRefRow | undefined, base: string) {
  return u ? presentUserBasic(u, { base }) : null;
}

function authorRef(u: UserRefRow | undefined, base: string) {
  if (!u) return null;
  // A property store, not `{ ...basic, bot }` (object spread followed by members is slow on Node 20).
  const o = presentUserBasic(u, { base }) as ReturnType<typeof presentUserBasic> & { bot: boolean };
  o.bot = u.user_type !== 'human';
  return o;
}

export function presentLabelDetails(l: LabelRow) {
  return {
    id: l.id,
    name: l.title,
    color: l.color,
    text_color: textColor(l.color),
    description: l.description,
    description_html: l.description ? renderMarkdown(l.description) : '',
    archived: b(l.archived),
  };
}

/** GitLab picks black or white text by the label colour's luminance. */
export function textColor(color: string): string {
  const m = /^#?([0-9a-f]{6})$/i.exec(color);
  if (!m) return '#FFFFFF';
  const n = parseInt(m[1], 16);
  const [r, g, bl] = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  return r * 0.299 + g * 0.587 + bl * 0.114 > 186 ? '#1F1E24' : '#FFFFFF';
}

export function presentMilestone(m: MilestoneRow, base: string, projects: Map<number, ProjectInfo>, groupPath?: string | null) {
  const today = todayUtc();
  let webUrl: string;
  if (m.project_id !== null) {
    const p = projects.get(m.project_id);
    webUrl = p ? `${base}/${fullPath(p.project, p.namespace)}/-/milestones/${m.iid}` : `${base}/-/milestones/${m.iid}`;
  } else {
    webUrl = `${base}/groups/${groupPath ?? ''}/-/milestones/${m.iid}`;
  }
  return {
    id: m.id,
    iid: m.iid,
    ...(m.project_id !== null ? { project_id: m.project_id } : { group_id: m.group_id }),
    title: m.title,
    description: m.description,
    state: m.state,
    created_at: m.created_at,
    updated_at: m.updated_at,
    due_date: m.due_date,
    start_date: m.start_date,
    expired: m.due_date !== null && m.due_date < today,
    web_url: webUrl,
  };
}

export { humanDuration };

export function taskCompletion(description: string | null) {
  const text = description ?? '';
  const all = text.match(/^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[[ xX]\]/gm) ?? [];
  const done = all.filter((t) => /\[[xX]\]$/.test(t)).length;
  return { count: all.length, completed_count: done };
}

function relativeReference(mr: MrRow, info: ProjectInfo, ctx: MrPresentCtx): string {
  if (!ctx.group) return `!${mr.iid}`;
  if (info.namespace.id === ctx.group.id) return `${info.project.path}!${mr.iid}`;
  return `${fullPath(info.project, info.namespace)}!${mr.iid}`;
}

export function mrWebUrl(base: string, info: ProjectInfo, iid: number): string {
  return `${base}/${fullPath(info.project, info.namespace)}/-/merge_requests/${iid}`;
}


/** The fields every merge request entity starts with (Basic, Simple, approvals). */
export function presentMergeRequestHead(mr: MrRow): Record<string, unknown> {
  return {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.project_id,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: mr.created_at,
    updated_at: mr.updated_at,
  };
}

/** MergeRequestBasic, in GitLab's field order. */
export function presentMergeRequestBasic(mr: MrRow, ctx: MrPresentCtx): Record<string, unknown> {
  const { bundle, base } = ctx;
  const info = bundle.projects.get(mr.project_id)!;
  const users = bundle.users;
  const assignees = presentUserRefs(bundle.assignees.get(mr.id), users, base);
  const reviewers = presentUserRefs(bundle.reviewers.get(mr.id), users, base);
  const labels = bundle.labels.get(mr.id) ?? [];
  const milestone = mr.milestone_id !== null ? bundle.milestones.get(mr.milestone_id) : undefined;
  const mergeUser = mr.merge_user_id !== null ? userRef(users.get(mr.merge_user_id), base) : null;
  const mergedBy = mr.merged_by_id !== null ? userRef(users.get(mr.merged_by_id), base) : null;
  const closedBy = mr.closed_by_id !== null ? userRef(users.get(mr.closed_by_id), base) : null;
  const full = `${fullPath(info.project, info.namespace)}!${mr.iid}`;
  const out: Record<string, unknown> = presentMergeRequestHead(mr);
  out.merged_by = mergedBy;
  out.merge_user = mergeUser;
  out.merged_at = mr.merged_at;
  out.closed_by = closedBy;
  out.closed_at = mr.closed_at;
  if (ctx.renderHtml) {
    out.title_html = renderMarkdown(mr.title, { inline: true });
    out.description_html = renderMarkdown(mr.description ?? '');
  }
  out.target_branch = mr.target_branch;
  out.source_branch = mr.source_branch;
  out.user_notes_count = mr.user_notes_count;
  out.upvotes = mr.upvotes;
  out.downvotes = mr.downvotes;
  out.author = authorRef(users.get(mr.author_id), base);
  out.assignees = assignees;
  out.assignee = assignees[0] ?? null;
  out.reviewers = reviewers;
  out.source_project_id = mr.source_project_id;
  out.target_project_id = mr.project_id;
  out.labels = ctx.withLabelsDetails ? labels.map(presentLabelDetails) : labels.map((l) => l.title);
  out.draft = b(mr.draft);
  out.imported = false;
  out.imported_from = 'none';
  out.work_in_progress = b(mr.draft);
  out.milestone = milestone ? presentMilestone(milestone, base, bundle.projects, groupPathOf(milestone, ctx)) : null;
  out.merge_when_pipeline_succeeds = b(mr.merge_when_pipeline_succeeds);
  out.merge_status = mr.merge_status;
  out.detailed_merge_status = detailedMergeStatus(mr, { project: info.project, pipeline: headPipelineOf(mr, bundle), blocked: bundle.blocked.has(mr.id) });
  out.merge_after = mr.merge_after;
  out.sha = mr.head_sha;
  out.merge_commit_sha = mr.merge_commit_sha;
  out.squash_commit_sha = mr.squash_commit_sha;
  out.discussion_locked = nullableBool(mr.discussion_locked);
  out.should_remove_source_branch = nullableBool(mr.should_remove_source_branch);
  out.force_remove_source_branch = nullableBool(mr.force_remove_source_branch);
  out.prepared_at = mr.prepared_at;
  if (mr.source_project_id !== mr.project_id) {
    out.allow_collaboration = b(mr.allow_collaboration);
    out.allow_maintainer_to_push = b(mr.allow_collaboration);
  }
  out.reference = `!${mr.iid}`;
  out.references = { short: `!${mr.iid}`, relative: relativeReference(mr, info, ctx), full };
  out.web_url = mrWebUrl(base, info, mr.iid);
  out.time_stats = {
    time_estimate: mr.time_estimate,
    total_time_spent: mr.total_time_spent,
    human_time_estimate: humanDuration(mr.time_estimate),
    human_total_time_spent: humanDuration(mr.total_time_spent),
  };
  out.squash = b(mr.squash);
  out.squash_on_merge = squashOnMerge(info.project, b(mr.squash));
  out.task_completion_status = taskCompletion(mr.description);
  out.has_conflicts = mr.merge_status === 'cannot_be_merged';
  out.blocking_discussions_resolved = discussionsResolved(mr, info.project);
  out.approvals_before_merge = mr.approvals_before_merge;
  return out;
}

function groupPathOf(m: MilestoneRow, ctx: MrPresentCtx): string | null {
  return m.group_id === null ? null : (ctx.bundle.groupPaths.get(m.group_id) ?? null);
}

/** MergeRequest: the single-object entity. */
export function presentMergeRequest(mr: MrRow, ctx: MrDetailCtx): Record<string, unknown> {
  const out = presentMergeRequestBasic(mr, ctx);
  const pipeline = headPipelineOf(mr, ctx.bundle);
  const info = ctx.bundle.projects.get(mr.project_id)!;
  // From a fork, the pipeline may be the fork's: its links are there.
  const pipelineInfo = (pipeline && ctx.bundle.projects.get(pipeline.project_id)) || info;
  const pipelineUser = pipeline?.user_id != null ? ctx.bundle.users.get(pipeline.user_id) : undefined;
  const buildsEnabled = info.project.builds_access_level !== 'disabled';
  out.subscribed = ctx.subscribed ?? false;
  out.changes_count = mr.changes_count;
  if (buildsEnabled) {
    out.latest_build_started_at = pipeline?.started_at ?? null;
    out.latest_build_finished_at = pipeline?.finished_at ?? null;
    out.first_deployed_to_production_at = ctx.firstDeployedToProductionAt ?? null;
    out.pipeline = ctx.canReadPipelines && pipeline ? presentPipelineBasic(pipeline, pipelineInfo, ctx.base) : null;
  }
  if (ctx.canReadPipelines) {
    out.head_pipeline = pipeline ? presentPipelineDetailed(pipeline, pipelineInfo, ctx.base, pipelineUser) : null;
  }
  out.diff_refs = mr.base_sha && mr.start_sha && mr.head_sha ? { base_sha: mr.base_sha, head_sha: mr.head_sha, start_sha: mr.start_sha } : null;
  out.merge_error = mr.merge_error;
  if (ctx.includeRebaseInProgress) out.rebase_in_progress = false;
  if (ctx.divergedCommitsCount !== undefined) out.diverged_commits_count = ctx.divergedCommitsCount;
  if (ctx.firstContribution !== undefined) out.first_contribution = ctx.firstContribution;
  out.user = { can_merge: ctx.canMerge };
  return out;
}

/** MergeRequestSimple (view=simple). */
export function presentMergeRequestSimple(mr: MrRow, ctx: MrPresentCtx) {
  const info = ctx.bundle.projects.get(mr.project_id)!;
  const out = presentMergeRequestHead(mr);
  out.web_url = mrWebUrl(ctx.base, info, mr.iid);
  return out;
}
