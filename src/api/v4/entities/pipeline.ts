// Pipeline presenters (GitLab's PipelineBasic and Pipeline) and the commit status entity.
// Pipelines are records of statuses reported by external CI systems (no runner).
import type { Selectable } from 'kysely';
import type { UserRefRow, UserRow } from '../../../db/repositories/users.js';
import type { CommitStatusesTable } from '../../../db/tables/merge-requests.js';
import { fullPath } from '../../../services/projects/lookup.js';
import type { PipelineRow, ProjectInfo } from '../../../services/merge-requests/rows.js';
import { presentUserBasic } from './user.js';

export function pipelineWebUrl(p: PipelineRow, info: ProjectInfo, base: string): string {
  return `${base}/${fullPath(info.project, info.namespace)}/-/pipelines/${p.id}`;
}

export function presentPipelineBasic(p: PipelineRow, info: ProjectInfo, base: string) {
  return {
    id: p.id,
    iid: p.iid,
    project_id: p.project_id,
    sha: p.sha,
    ref: p.ref,
    status: p.status,
    source: p.source,
    created_at: p.created_at,
    updated_at: p.updated_at,
    web_url: pipelineWebUrl(p, info, base),
  };
}

function seconds(from: string | null, to: string | null): number | null {
  if (!from || !to) return null;
  return Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));
}

const STATUS_TEXT: Record<string, [string, string, string]> = {
  // status: [text, label, icon]
  created: ['Created', 'created', 'status_created'],
  pending: ['Pending', 'pending', 'status_pending'],
  running: ['Running', 'running', 'status_running'],
  success: ['Passed', 'passed', 'status_success'],
  failed: ['Failed', 'failed', 'status_failed'],
  canceled: ['Canceled', 'canceled', 'status_canceled'],
  skipped: ['Skipped', 'skipped', 'status_skipped'],
  manual: ['Blocked', 'manual action', 'status_manual'],
  scheduled: ['Scheduled', 'scheduled', 'status_scheduled'],
};

export function detailedStatus(p: PipelineRow, info: ProjectInfo) {
  const [text, label, icon] = STATUS_TEXT[p.status] ?? [p.status, p.status, `status_${p.status}`];
  const path = `/${fullPath(info.project, info.namespace)}/-/pipelines/${p.id}`;
  return {
    icon,
    text,
    label,
    group: p.status,
    tooltip: label,
    has_details: true,
    details_path: path,
    illustration: null,
    favicon: `/assets/ci_favicons/favicon_${icon}.png`,
  };
}

export function presentPipelineDetailed(p: PipelineRow, info: ProjectInfo, base: string, user: UserRefRow | undefined) {
  return Object.assign({}, presentPipelineBasic(p, info, base), {
    before_sha: p.before_sha,
    tag: p.tag === 1,
    yaml_errors: null,
    user: user ? presentUserBasic(user, { base }) : null,
    started_at: p.started_at,
    finished_at: p.finished_at,
    committed_at: p.committed_at,
    duration: seconds(p.started_at, p.finished_at),
    queued_duration: seconds(p.created_at, p.started_at),
    coverage: p.coverage,
    detailed_status: detailedStatus(p, info),
    archived: false,
  });
}

/** `GET …/merge_requests/:iid/pipelines` entries (spec §2.5 plus GitLab's PipelineBasic fields). */
export const presentMrPipeline = presentPipelineBasic;

export function presentCommitStatus(s: Selectable<CommitStatusesTable>, author: UserRow | undefined, base: string) {
  return {
    id: s.id,
    sha: s.sha,
    ref: s.ref,
    status: s.status,
    name: s.name,
    target_url: s.target_url,
    description: s.description,
    created_at: s.created_at,
    started_at: s.started_at,
    finished_at: s.finished_at,
    allow_failure: s.allow_failure === 1,
    coverage: s.coverage === null ? null : Number(s.coverage),
    pipeline_id: s.pipeline_id,
    author: author ? presentUserBasic(author, { base }) : null,
  };
}
