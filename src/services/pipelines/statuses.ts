// Pipelines without a runner: external CI systems report commit statuses, which create and update a
// pipeline per sha and ref. The pipeline's status is the composite of its statuses; when it turns
// to success, waiting auto-merges run in the same request.
import { emitEvent } from '../events.js';
import type { Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { notFound } from '../../http/errors.js';
import { repoFor } from '../merge-requests/git-ops.js';
import { runAutoMerges } from '../merge-requests/merge.js';
import type { PipelineRow, ProjectInfo } from '../merge-requests/rows.js';

export const STATUS_STATES = ['pending', 'running', 'success', 'failed', 'canceled', 'skipped'] as const;
export type StatusState = (typeof STATUS_STATES)[number];

export interface StatusInput {
  sha: string;
  state: StatusState;
  ref?: string;
  name: string;
  targetUrl?: string;
  description?: string;
  coverage?: number;
  pipelineId?: number;
}

const FINISHED = ['success', 'failed', 'canceled', 'skipped'];

/** GitLab's composite status of a set of statuses (allow_failure ones count as success when failed). */
export function compositeStatus(statuses: Array<{ status: string; allow_failure: number }>): string {
  const s = statuses.map((x) => (x.status === 'failed' && x.allow_failure ? 'success' : x.status));
  if (!s.length) return 'created';
  if (s.every((x) => x === 'skipped')) return 'skipped';
  if (s.some((x) => x === 'running')) return 'running';
  if (s.some((x) => x === 'pending' || x === 'created')) return s.some((x) => FINISHED.includes(x)) ? 'running' : 'pending';
  if (s.some((x) => x === 'failed')) return 'failed';
  if (s.some((x) => x === 'canceled')) return 'canceled';
  return 'success';
}

async function nextPipelineIid(trx: Transaction<DB>, projectId: number): Promise<number> {
  const row = await trx.selectFrom('ci_pipelines').select((eb) => eb.fn.max<number>('iid').as('m')).where('project_id', '=', projectId).executeTakeFirst();
  return Number(row?.m ?? 0) + 1;
}

/** Locks the project row on PostgreSQL so iids of one project are handed out one at a time. */
async function lockProject(app: AppContext, trx: Transaction<DB>, projectId: number): Promise<void> {
  await app.database.forUpdate(trx.selectFrom('projects').select('id').where('id', '=', projectId)).execute();
}

export async function createPipeline(
  app: AppContext,
  trx: Transaction<DB>,
  values: { projectId: number; sha: string; ref: string; source: string; status: string; userId: number | null; mergeRequestId?: number | null; tag?: boolean; committedAt?: string | null },
): Promise<PipelineRow> {
  await lockProject(app, trx, values.projectId);
  const now = nowIso();
  const row = {
    iid: await nextPipelineIid(trx, values.projectId),
    project_id: values.projectId,
    sha: values.sha,
    before_sha: '0000000000000000000000000000000000000000',
    ref: values.ref,
    tag: values.tag ? 1 : 0,
    source: values.source,
    status: values.status,
    user_id: values.userId,
    merge_request_id: values.mergeRequestId ?? null,
    coverage: null,
    started_at: null,
    finished_at: null,
    committed_at: values.committedAt ?? null,
    created_at: now,
    updated_at: now,
  };
  const ins = await trx.insertInto('ci_pipelines').values(row).returning('id').executeTakeFirstOrThrow();
  return Object.assign({}, row, { id: ins.id });
}

/** The ref a status belongs to when the caller names none: a branch at that sha, else the default branch. */
async function defaultRef(app: AppContext, info: ProjectInfo, sha: string): Promise<string> {
  const branches = await repoFor(app, info.project.id).listBranches();
  const at = branches.filter((b) => b.sha === sha).map((b) => b.name);
  if (info.project.default_branch && at.includes(info.project.default_branch)) return info.project.default_branch;
  return at[0] ?? info.project.default_branch ?? 'main';
}

export async function reportStatus(app: AppContext, info: ProjectInfo, user: UserRow, input: StatusInput) {
  const repo = repoFor(app, info.project.id);
  const commit = /^[0-9a-f]{4,64}$/i.test(input.sha) ? await repo.getCommit(input.sha).catch(() => null) : null;
  if (!commit) throw notFound('Commit');
  const sha = commit.id;
  const ref = input.ref ?? (await defaultRef(app, info, sha));
  const now = nowIso();
  const result = await app.database.transaction(async (trx) => {
    let pipeline: PipelineRow | undefined;
    if (input.pipelineId !== undefined) {
      pipeline = await trx.selectFrom('ci_pipelines').selectAll().where('id', '=', input.pipelineId).where('project_id', '=', info.project.id).where('sha', '=', sha).executeTakeFirst();
      if (!pipeline) throw notFound('Pipeline');
    } else {
      pipeline = await trx
        .selectFrom('ci_pipelines')
        .selectAll()
        .where('project_id', '=', info.project.id)
        .where('sha', '=', sha)
        .where('ref', '=', ref)
        .orderBy('id', 'desc')
        .executeTakeFirst();
      if (!pipeline) {
        pipeline = await createPipeline(app, trx, { projectId: info.project.id, sha, ref, source: 'external', status: 'created', userId: user.id, committedAt: commit.committed_date });
      }
    }
    const existing = await trx.selectFrom('commit_statuses').selectAll().where('pipeline_id', '=', pipeline.id).where('name', '=', input.name).executeTakeFirst();
    const started = input.state === 'running' || FINISHED.includes(input.state) ? (existing?.started_at ?? now) : null;
    const finished = FINISHED.includes(input.state) ? now : null;
    const values = {
      status: input.state,
      target_url: input.targetUrl ?? existing?.target_url ?? null,
      description: input.description ?? existing?.description ?? null,
      coverage: input.coverage !== undefined ? String(input.coverage) : (existing?.coverage ?? null),
      ref,
      started_at: started,
      finished_at: finished,
      updated_at: now,
      author_id: user.id,
    };
    let statusId: number;
    if (existing) {
      await trx.updateTable('commit_statuses').set(values).where('id', '=', existing.id).execute();
      statusId = existing.id;
    } else {
      const ins = await trx
        .insertInto('commit_statuses')
        .values(Object.assign({}, values, { project_id: info.project.id, pipeline_id: pipeline.id, sha, name: input.name, stage: 'external', allow_failure: 0, created_at: now }))
        .returning('id')
        .executeTakeFirstOrThrow();
      statusId = ins.id;
    }
    const all = await trx.selectFrom('commit_statuses').select(['status', 'allow_failure', 'coverage']).where('pipeline_id', '=', pipeline.id).execute();
    const status = compositeStatus(all);
    const coverages = all.map((s) => (s.coverage === null ? null : Number(s.coverage))).filter((x): x is number => x !== null);
    const pipelineSet = {
      status,
      updated_at: now,
      started_at: pipeline.started_at ?? (status !== 'pending' && status !== 'created' ? now : null),
      finished_at: FINISHED.includes(status) ? now : null,
      coverage: coverages.length ? (coverages.reduce((a, b) => a + b, 0) / coverages.length).toFixed(2) : null,
    };
    await trx.updateTable('ci_pipelines').set(pipelineSet).where('id', '=', pipeline.id).execute();
    const statusRow = await trx.selectFrom('commit_statuses').selectAll().where('id', '=', statusId).executeTakeFirstOrThrow();
    return { statusRow, pipeline: Object.assign({}, pipeline, { ...pipelineSet }), previousStatus: pipeline.status, becameSuccess: status === 'success' && pipeline.status !== 'success' };
  });
  // Every change of the pipeline's status is an event (GitLab's pipeline state machine: hooks on each transition).
  if (result.pipeline.status !== result.previousStatus) await emitEvent(app, { kind: 'pipeline', projectId: info.project.id, pipelineId: result.pipeline.id });
  if (result.becameSuccess) await runAutoMerges(app, info, sha);
  return result;
}
