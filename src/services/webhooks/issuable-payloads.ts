// Merge request, note and release payloads (GitLab's Gitlab::HookData::MergeRequestBuilder,
// NoteBuilder and ReleaseBuilder, and Gitlab::DataBuilder::Note). Timestamps are ISO 8601 with
// milliseconds, as GitLab's newest payloads (Gitlab::WebHooks.normalize_dates).
import type { Selectable } from 'kysely';
import type { AppContext } from '../../context.js';
import type { UserRefRow } from '../../db/repositories/users.js';
import { findUserRefsByIds } from '../../db/repositories/users.js';
import type { NotesTable } from '../../db/tables/merge-requests.js';
import { humanDuration } from '../durations.js';
import type { MrAction, MrAssociations } from '../events.js';
import { repoFor } from '../merge-requests/git-ops.js';
import { loadProjectById } from '../projects/lookup.js';
import { headPipelineOf, loadBundle, type LabelRow, type MrBundle, type MrRow, type ProjectInfo } from '../merge-requests/rows.js';
import { detailedMergeStatus, discussionsResolved } from '../merge-requests/status.js';
import { AccessLevel } from '../access.js';
import { linksOf, releaseSources, SOURCE_FORMATS, type ReleaseRow } from '../releases.js';
import { commitHookAttrs, projectHookAttrs, projectWebUrl, repositoryAttrs, userHookAttrs } from './payloads.js';

const STATE_IDS: Record<string, number> = { opened: 1, closed: 2, merged: 3, locked: 4 };

/** Label#hook_attrs (merge request and issue events). */
export function labelHookAttrs(l: LabelRow) {
  return {
    id: l.id,
    title: l.title,
    color: l.color,
    project_id: l.project_id,
    created_at: l.created_at,
    updated_at: l.updated_at,
    template: false,
    description: l.description,
    type: l.group_id !== null ? 'GroupLabel' : 'ProjectLabel',
    group_id: l.group_id,
  };
}

function mergeParams(mr: MrRow): unknown {
  try {
    const v = JSON.parse(mr.merge_params) as unknown;
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

/** GitLab's first_contribution?: the author is no more than a Guest and has had nothing merged here. */
async function firstContribution(app: AppContext, mr: MrRow): Promise<boolean> {
  const member = await app.db
    .selectFrom('members')
    .select('access_level')
    .where('user_id', '=', mr.author_id)
    .where('source_type', '=', 'Project')
    .where('source_id', '=', mr.project_id)
    .executeTakeFirst();
  if (member && member.access_level > AccessLevel.GUEST) return false;
  const merged = await app.db.selectFrom('merge_requests').select('id').where('project_id', '=', mr.project_id).where('author_id', '=', mr.author_id).where('state', '=', 'merged').limit(1).executeTakeFirst();
  return !merged;
}

interface MrContext {
  base: string;
  info: ProjectInfo;
  bundle: MrBundle;
}

/** MergeRequestBuilder#build: the merge request's object_attributes (without `action`). */
async function mergeRequestAttrs(app: AppContext, ctx: MrContext, mr: MrRow): Promise<Record<string, unknown>> {
  const { base, info, bundle } = ctx;
  const assignees = bundle.assignees.get(mr.id) ?? [];
  const reviewers = bundle.reviewers.get(mr.id) ?? [];
  const web = projectWebUrl(base, info);
  const last = mr.head_sha ? await repoFor(app, mr.project_id).getCommit(mr.head_sha).catch(() => null) : null;
  const pipeline = headPipelineOf(mr, bundle);
  // From a fork, `source` is the fork (as long as it exists).
  const source = mr.source_project_id !== mr.project_id ? ((await loadProjectById(app.db, mr.source_project_id)) ?? info) : info;
  return {
    assignee_id: assignees[0] ?? null,
    author_id: mr.author_id,
    created_at: mr.created_at,
    description: mr.description,
    draft: mr.draft === 1,
    head_pipeline_id: pipeline?.id ?? null,
    id: mr.id,
    iid: mr.iid,
    last_edited_at: null,
    last_edited_by_id: null,
    merge_commit_sha: mr.merge_commit_sha,
    merge_error: mr.merge_error,
    merge_params: mergeParams(mr),
    merge_status: mr.merge_status,
    merge_user_id: mr.merge_user_id,
    merge_when_pipeline_succeeds: mr.merge_when_pipeline_succeeds === 1,
    milestone_id: mr.milestone_id,
    source_branch: mr.source_branch,
    source_project_id: mr.source_project_id,
    state_id: STATE_IDS[mr.state] ?? 1,
    target_branch: mr.target_branch,
    target_project_id: mr.project_id,
    time_estimate: mr.time_estimate,
    title: mr.title,
    updated_at: mr.updated_at,
    updated_by_id: null,
    prepared_at: mr.prepared_at,
    assignee_ids: assignees,
    blocking_discussions_resolved: discussionsResolved(mr, info.project),
    detailed_merge_status: detailedMergeStatus(mr, { project: info.project, pipeline, blocked: bundle.blocked.has(mr.id) }),
    first_contribution: await firstContribution(app, mr),
    human_time_change: null,
    human_time_estimate: humanDuration(mr.time_estimate),
    human_total_time_spent: humanDuration(mr.total_time_spent),
    labels: (bundle.labels.get(mr.id) ?? []).map(labelHookAttrs),
    last_commit: last ? commitHookAttrs(web, last) : null,
    reviewer_ids: reviewers,
    source: projectHookAttrs(base, source),
    state: mr.state,
    target: projectHookAttrs(base, info),
    time_change: 0,
    total_time_spent: mr.total_time_spent,
    url: `${web}/-/merge_requests/${mr.iid}`,
    work_in_progress: mr.draft === 1,
  };
}

async function mrContext(app: AppContext, base: string, info: ProjectInfo, mr: MrRow): Promise<MrContext> {
  return { base, info, bundle: await loadBundle(app.db, [mr], [info]) };
}

/** The attributes whose change an update reports (GitLab's safe_hook_attributes that Labwright keeps). */
const CHANGED_ATTRIBUTES = ['title', 'description', 'draft', 'target_branch', 'milestone_id', 'time_estimate', 'merge_status', 'updated_at'] as const;

async function usersHookAttrs(app: AppContext, base: string, ids: number[]): Promise<Array<ReturnType<typeof userHookAttrs>>> {
  const users = await findUserRefsByIds(app.db, ids);
  return ids.map((id) => users.get(id)).filter((u): u is UserRefRow => !!u).map((u) => userHookAttrs(base, u));
}

function sameList(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** `changes`: each attribute an update changed, as {previous, current}. */
async function mrChanges(app: AppContext, ctx: MrContext, previous: { row: MrRow; associations?: MrAssociations }, mr: MrRow): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of CHANGED_ATTRIBUTES) {
    const before = key === 'draft' ? previous.row.draft === 1 : previous.row[key];
    const after = key === 'draft' ? mr.draft === 1 : mr[key];
    if (before !== after) out[key] = { previous: before, current: after };
  }
  if (previous.row.state !== mr.state) out.state_id = { previous: STATE_IDS[previous.row.state] ?? 1, current: STATE_IDS[mr.state] ?? 1 };
  const was = previous.associations;
  // A merge or state change alone: the people and labels did not move.
  if (!was) return out;
  const assignees = ctx.bundle.assignees.get(mr.id) ?? [];
  const reviewers = ctx.bundle.reviewers.get(mr.id) ?? [];
  const labels = (ctx.bundle.labels.get(mr.id) ?? []).map((l) => l.id);
  if (!sameList(was.assigneeIds, assignees)) {
    out.assignees = { previous: await usersHookAttrs(app, ctx.base, was.assigneeIds), current: await usersHookAttrs(app, ctx.base, assignees) };
  }
  if (!sameList(was.reviewerIds, reviewers)) {
    out.reviewers = { previous: await usersHookAttrs(app, ctx.base, was.reviewerIds), current: await usersHookAttrs(app, ctx.base, reviewers) };
  }
  if (!sameList([...was.labelIds].sort((a, b) => a - b), [...labels].sort((a, b) => a - b))) {
    const old = was.labelIds.length ? await app.db.selectFrom('labels').selectAll().where('id', 'in', was.labelIds).orderBy('title').execute() : [];
    out.labels = { previous: old.map(labelHookAttrs), current: (ctx.bundle.labels.get(mr.id) ?? []).map(labelHookAttrs) };
  }
  return out;
}

export interface MrPayloadInput {
  base: string;
  info: ProjectInfo;
  mr: MrRow;
  user: UserRefRow;
  action?: MrAction;
  oldrev?: string;
  previous?: { row: MrRow; associations?: MrAssociations };
}

/** A merge request event (`action` left out for the test payload, as GitLab's to_hook_data). */
export async function mergeRequestPayload(app: AppContext, p: MrPayloadInput): Promise<Record<string, unknown>> {
  const ctx = await mrContext(app, p.base, p.info, p.mr);
  const attrs = await mergeRequestAttrs(app, ctx, p.mr);
  if (p.action) attrs.action = p.action;
  if (p.oldrev) attrs.oldrev = p.oldrev;
  const assignees = await usersHookAttrs(app, p.base, ctx.bundle.assignees.get(p.mr.id) ?? []);
  const reviewers = await usersHookAttrs(app, p.base, ctx.bundle.reviewers.get(p.mr.id) ?? []);
  return {
    object_kind: 'merge_request',
    event_type: 'merge_request',
    user: userHookAttrs(p.base, p.user),
    project: projectHookAttrs(p.base, p.info),
    object_attributes: attrs,
    labels: (ctx.bundle.labels.get(p.mr.id) ?? []).map(labelHookAttrs),
    changes: p.previous ? await mrChanges(app, ctx, p.previous, p.mr) : {},
    repository: repositoryAttrs(p.base, p.info, 'issuable'),
    ...(assignees.length ? { assignees } : {}),
    ...(reviewers.length ? { reviewers } : {}),
  };
}

type NoteRow = Selectable<NotesTable>;

/** Note#hook_attrs (NoteBuilder): the note's attributes and its URL. */
function noteHookAttrs(n: NoteRow, url: string): Record<string, unknown> {
  return {
    attachment: null,
    author_id: n.author_id,
    change_position: null,
    commit_id: n.commit_id,
    created_at: n.created_at,
    discussion_id: n.discussion_id,
    id: n.id,
    internal: n.internal === 1,
    line_code: n.line_code,
    note: n.body,
    noteable_id: n.noteable_id,
    noteable_type: n.noteable_type,
    original_position: n.position ? JSON.parse(n.position) : null,
    position: n.position ? JSON.parse(n.position) : null,
    project_id: n.project_id,
    resolved_at: n.resolved_at,
    resolved_by_id: n.resolved_by_id,
    resolved_by_push: null,
    st_diff: null,
    system: n.system === 1,
    type: n.type,
    updated_at: n.updated_at,
    updated_by_id: n.updated_by_id,
    description: n.body,
    url,
  };
}

/** An issue's hook attributes and iid, for events on it or its notes. */
export interface IssueHookRef {
  iid: number;
  attrs: Record<string, unknown>;
}

/** A note event on a merge request (`mr`), an issue or a commit (Gitlab::DataBuilder::Note: `merge_request`, `issue` or `commit`). */
export async function notePayload(app: AppContext, p: { base: string; info: ProjectInfo; mr: MrRow | null; issue?: IssueHookRef & { confidential?: boolean }; note: NoteRow; user: UserRefRow; action?: 'create' | 'update' }): Promise<Record<string, unknown> | null> {
  const n = p.note;
  const web = projectWebUrl(p.base, p.info);
  let noteable: Record<string, unknown>;
  let url: string;
  if (p.issue) {
    noteable = { issue: p.issue.attrs };
    url = `${web}/-/issues/${p.issue.iid}#note_${n.id}`;
  } else if (p.mr) {
    noteable = { merge_request: await mergeRequestAttrs(app, await mrContext(app, p.base, p.info, p.mr), p.mr) };
    url = `${web}/-/merge_requests/${p.mr.iid}#note_${n.id}`;
  } else {
    const commit = n.commit_id ? await repoFor(app, p.info.project.id).getCommit(n.commit_id).catch(() => null) : null;
    if (!commit) return null;
    noteable = { commit: commitHookAttrs(web, commit) };
    url = `${web}/-/commit/${commit.id}#note_${n.id}`;
  }
  return {
    object_kind: 'note',
    // An internal note, or any note on a confidential issue (GitLab's note.confidential?(include_noteable: true)).
    event_type: n.internal === 1 || p.issue?.confidential ? 'confidential_note' : 'note',
    user: userHookAttrs(p.base, p.user),
    project_id: p.info.project.id,
    project: projectHookAttrs(p.base, p.info),
    object_attributes: { ...noteHookAttrs(n, url), ...(p.action ? { action: p.action } : {}) },
    repository: repositoryAttrs(p.base, p.info, 'issuable'),
    ...noteable,
  };
}

/** A release event (ReleaseBuilder): no user, no event_type. */
export async function releasePayload(app: AppContext, p: { base: string; info: ProjectInfo; release: ReleaseRow; action?: 'create' | 'update' | 'delete' }): Promise<Record<string, unknown>> {
  const r = p.release;
  const web = projectWebUrl(p.base, p.info);
  const links = (await linksOf(app.db, [r.id])).get(r.id) ?? [];
  const commit = r.sha ? await repoFor(app, p.info.project.id).getCommit(r.sha).catch(() => null) : null;
  return {
    id: r.id,
    created_at: r.created_at,
    description: r.description,
    name: r.name,
    released_at: r.released_at,
    tag: r.tag,
    object_kind: 'release',
    project: projectHookAttrs(p.base, p.info),
    url: `${web}/-/releases/${encodeURIComponent(r.tag)}`,
    ...(p.action ? { action: p.action } : {}),
    assets: {
      count: links.length + SOURCE_FORMATS.length,
      links: links.map((l) => ({ id: l.id, external: !l.url.startsWith(web), link_type: l.link_type, name: l.name, url: l.url })),
      sources: releaseSources(web, p.info.project.path, r.tag),
    },
    commit: commit ? commitHookAttrs(web, commit) : null,
  };
}

export interface AwardAttrs {
  id: number;
  name: string;
  user_id: number;
  awardable_type: string;
  awardable_id: number;
  created_at: string;
  updated_at: string;
}

/**
 * An emoji event (Gitlab::DataBuilder::Emoji): the award, the URL of what it was given to, and the
 * merge request or issue (with the note, for an award on a note).
 */
export async function emojiPayload(
  app: AppContext,
  p: { base: string; info: ProjectInfo; award: AwardAttrs; user: UserRefRow; action: 'award' | 'revoke'; mr: MrRow | null; issue?: IssueHookRef; note: NoteRow | null },
): Promise<Record<string, unknown>> {
  const web = projectWebUrl(p.base, p.info);
  const mrUrl = p.issue ? `${web}/-/issues/${p.issue.iid}` : `${web}/-/merge_requests/${p.mr!.iid}`;
  const a = p.award;
  const out: Record<string, unknown> = {
    object_kind: 'emoji',
    event_type: p.action,
    user: userHookAttrs(p.base, p.user),
    project_id: p.info.project.id,
    project: projectHookAttrs(p.base, p.info),
    object_attributes: {
      user_id: a.user_id,
      created_at: a.created_at,
      id: a.id,
      name: a.name,
      awardable_type: a.awardable_type,
      awardable_id: a.awardable_id,
      updated_at: a.updated_at,
      awarded_on_url: p.note ? `${mrUrl}#note_${p.note.id}` : mrUrl,
    },
  };
  if (p.note) out.note = noteHookAttrs(p.note, `${mrUrl}#note_${p.note.id}`);
  if (p.issue) out.issue = p.issue.attrs;
  else out.merge_request = await mergeRequestAttrs(app, await mrContext(app, p.base, p.info, p.mr!), p.mr!);
  return out;
}
