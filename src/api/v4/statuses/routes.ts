// Commit statuses reported by external CI systems, and the pipelines they make
// (POST /projects/:id/statuses/:sha as in GitLab's commit status API).
import type { FastifyInstance } from 'fastify';
import { route } from '../../../http/route.js';
import { forbidden, notFound, notGiven, paramError } from '../../../http/errors.js';
import { paginateArray, paginateOffset } from '../../../http/pagination.js';
import { findUsersByIds } from '../../../db/repositories/users.js';
import { AccessLevel } from '../../../services/access.js';
import { findProject } from '../../../services/projects/lookup.js';
import { reportStatus, STATUS_STATES } from '../../../services/pipelines/statuses.js';
import { dbId, pathId } from '../../../services/merge-requests/rows.js';
import { presentCommitStatus, presentPipelineBasic, presentPipelineDetailed } from '../entities/pipeline.js';

export function registerStatusRoutes(app: FastifyInstance): void {
  // POST /projects/:id/statuses/:sha
  route(app, 'POST', '/projects/:id/statuses/:sha', async function postStatus(c) {
    const user = c.requireUser();
    const found = await findProject(c, String(c.params.raw.id));
    if (found.access < AccessLevel.DEVELOPER) throw forbidden();
    if (!c.params.has('state')) throw notGiven('state');
    const state = c.params.enum('state', STATUS_STATES)!;
    const name = c.params.string('name') || c.params.string('context') || 'default';
    const coverage = c.params.has('coverage') ? Number(c.params.string('coverage')) : undefined;
    if (coverage !== undefined && !Number.isFinite(coverage)) throw paramError('coverage is invalid');
    const info = { project: found.project, namespace: found.namespace };
    const { statusRow } = await reportStatus(c.app, info, user, {
      sha: String(c.params.raw.sha),
      state,
      ref: c.params.string('ref') || undefined,
      name,
      targetUrl: c.params.string('target_url'),
      description: c.params.string('description'),
      coverage,
      pipelineId: c.params.has('pipeline_id') ? dbId(c.params.int('pipeline_id')!) : undefined,
    });
    return presentCommitStatus(statusRow, user, c.base);
  });

  // GET /projects/:id/repository/commits/:sha/statuses
  route(app, 'GET', '/projects/:id/repository/commits/:sha/statuses', async function listStatuses(c) {
    const found = await findProject(c, String(c.params.raw.id));
    if (found.project.builds_access_level === 'disabled' || (found.project.visibility !== 'public' && found.access < AccessLevel.REPORTER && !c.user?.is_admin)) throw forbidden();
    let q = c.app.db.selectFrom('commit_statuses').selectAll().where('project_id', '=', found.project.id).where('sha', '=', String(c.params.raw.sha));
    const ref = c.params.string('ref');
    if (ref) q = q.where('ref', '=', ref);
    const name = c.params.string('name');
    if (name) q = q.where('name', '=', name);
    const rows = await paginateOffset(c, q.orderBy('id', 'asc'));
    const users = await findUsersByIds(c.app.db, rows.map((r) => r.author_id).filter((x): x is number => x !== null));
    return rows.map((r) => presentCommitStatus(r, r.author_id !== null ? users.get(r.author_id) : undefined, c.base));
  });

  // GET /projects/:id/pipelines
  route(app, 'GET', '/projects/:id/pipelines', async function listPipelines(c) {
    const found = await findProject(c, String(c.params.raw.id));
    if (found.project.builds_access_level === 'disabled' || (found.project.visibility !== 'public' && found.access < AccessLevel.REPORTER && !c.user?.is_admin)) throw forbidden();
    let q = c.app.db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', found.project.id);
    const sha = c.params.string('sha');
    if (sha) q = q.where('sha', '=', sha);
    const ref = c.params.string('ref');
    if (ref) q = q.where('ref', '=', ref);
    const status = c.params.string('status');
    if (status) q = q.where('status', '=', status);
    const sort = c.params.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
    const rows = await paginateOffset(c, q.orderBy('id', sort));
    const info = { project: found.project, namespace: found.namespace };
    return rows.map((p) => presentPipelineBasic(p, info, c.base));
  });

  // GET /projects/:id/pipelines/:pipeline_id
  route(app, 'GET', '/projects/:id/pipelines/:pipeline_id', async function getPipeline(c) {
    const found = await findProject(c, String(c.params.raw.id));
    if (found.project.builds_access_level === 'disabled' || (found.project.visibility !== 'public' && found.access < AccessLevel.REPORTER && !c.user?.is_admin)) throw forbidden();
    const id = pathId(c.params.raw.pipeline_id);
    const p = await c.app.db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', found.project.id).where('id', '=', id).executeTakeFirst();
    if (!p) throw notFound();
    const users = await findUsersByIds(c.app.db, p.user_id !== null ? [p.user_id] : []);
    return presentPipelineDetailed(p, { project: found.project, namespace: found.namespace }, c.base, p.user_id !== null ? users.get(p.user_id) : undefined);
  });
  void paginateArray;
}
