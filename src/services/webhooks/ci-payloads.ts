// Pipeline events (Gitlab::DataBuilder::Pipeline) for the pipelines commit statuses make: the
// pipeline, its merge request, user, project (without the backward-compatible keys) and commit.
// Commit statuses are not jobs, so `builds` is empty, as GitLab's for external pipelines. And
// deployment events (Gitlab::DataBuilder::Deployment) for deployments recorded through the API.
import type { AppContext } from '../../context.js';
import { findUserRefsByIds } from '../../db/repositories/users.js';
import { repoFor } from '../merge-requests/git-ops.js';
import { findMrById, type PipelineRow, type ProjectInfo } from '../merge-requests/rows.js';
import { detailedMergeStatus } from '../merge-requests/status.js';
import { environmentsByName, environmentSlug, environmentTier } from '../deployments.js';
import { loadBranchRules } from '../repository/protected-refs.js';
import { commitHookAttrs, projectHookAttrs, projectWebUrl, userHookAttrs } from './payloads.js';
import { loadProjectById } from '../projects/lookup.js';

/** GitLab's detailed status labels. */
const LABELS: Record<string, string> = {
  success: 'passed',
  manual: 'manual action',
  scheduled: 'delayed',
  waiting_for_resource: 'waiting',
};

function seconds(from: string | null, to: string | null): number | null {
  if (!from || !to) return null;
  return Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));
}

export async function pipelinePayload(app: AppContext, p: { base: string; info: ProjectInfo; pipeline: PipelineRow }): Promise<Record<string, unknown>> {
  const pl = p.pipeline;
  const web = projectWebUrl(p.base, p.info);
  const [stages, users, commit, mr, rules] = await Promise.all([
    app.db.selectFrom('commit_statuses').select('stage').where('pipeline_id', '=', pl.id).orderBy('id').execute(),
    pl.user_id === null ? Promise.resolve(new Map()) : findUserRefsByIds(app.db, [pl.user_id]),
    repoFor(app, pl.project_id).getCommit(pl.sha).catch(() => null),
    pl.merge_request_id === null ? Promise.resolve(undefined) : findMrById(app.db, pl.merge_request_id),
    loadBranchRules(app, pl.project_id),
  ]);
  // A request from a fork lives in the target project: its URL is there.
  const mrTarget = mr && mr.project_id !== p.info.project.id ? await loadProjectById(app.db, mr.project_id) : null;
  const mrProjectWeb = mrTarget ? projectWebUrl(p.base, mrTarget) : web;
  const user = pl.user_id === null ? undefined : users.get(pl.user_id);
  const ref = pl.tag ? pl.ref : pl.ref.replace(/^refs\/heads\//, '');
  return {
    object_kind: 'pipeline',
    object_attributes: {
      id: pl.id,
      iid: pl.iid,
      name: null,
      ref,
      tag: pl.tag === 1,
      sha: pl.sha,
      before_sha: pl.before_sha,
      source: pl.source,
      status: pl.status,
      detailed_status: LABELS[pl.status] ?? pl.status,
      stages: [...new Set(stages.map((s) => s.stage))],
      created_at: pl.created_at,
      finished_at: pl.finished_at,
      duration: seconds(pl.started_at, pl.finished_at),
      queued_duration: seconds(pl.created_at, pl.started_at),
      protected_ref: pl.tag ? rules.isProtectedTag(ref) : rules.isProtectedBranch(ref),
      variables: [],
      url: `${web}/-/pipelines/${pl.id}`,
    },
    merge_request: mr
      ? {
          id: mr.id,
          iid: mr.iid,
          title: mr.title,
          source_branch: mr.source_branch,
          source_project_id: mr.source_project_id,
          target_branch: mr.target_branch,
          target_project_id: mr.project_id,
          state: mr.state,
          merge_status: mr.merge_status,
          detailed_merge_status: detailedMergeStatus(mr, { project: p.info.project, pipeline: pl, blocked: false }),
          url: `${mrProjectWeb}/-/merge_requests/${mr.iid}`,
        }
      : null,
    user: user ? userHookAttrs(p.base, user) : null,
    project: projectHookAttrs(p.base, p.info, false),
    commit: commit ? commitHookAttrs(web, commit) : null,
    builds: [],
  };
}

export interface DeploymentRow {
  id: number;
  environment: string;
  sha: string;
  ref: string;
  status: string;
  user_id: number | null;
  updated_at: string;
}

/** A deployment event: no job deployed it (deployments come from the API), so no deployable. */
export async function deploymentPayload(app: AppContext, p: { base: string; info: ProjectInfo; deployment: DeploymentRow }): Promise<Record<string, unknown>> {
  const d = p.deployment;
  const web = projectWebUrl(p.base, p.info);
  const [users, commit, envs] = await Promise.all([
    d.user_id === null ? Promise.resolve(new Map()) : findUserRefsByIds(app.db, [d.user_id]),
    repoFor(app, p.info.project.id).getCommit(d.sha).catch(() => null),
    environmentsByName(app.db, p.info.project.id, [d.environment]),
  ]);
  const env = envs.get(d.environment);
  const user = d.user_id === null ? undefined : users.get(d.user_id);
  return {
    object_kind: 'deployment',
    status: d.status,
    status_changed_at: d.updated_at,
    deployment_id: d.id,
    deployable_id: null,
    deployable_url: null,
    environment: d.environment,
    environment_tier: env?.tier ?? environmentTier(d.environment),
    environment_slug: env?.slug ?? environmentSlug(d.environment),
    environment_external_url: env?.external_url ?? null,
    project: projectHookAttrs(p.base, p.info),
    short_sha: d.sha.slice(0, 8),
    user: user ? userHookAttrs(p.base, user) : null,
    user_url: user ? `${p.base}/${user.username}` : null,
    commit_url: `${web}/-/commit/${d.sha}`,
    commit_title: commit ? commit.title : null,
    ref: d.ref,
  };
}
