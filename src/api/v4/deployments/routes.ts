// Deployments recorded by external tooling (GitLab's deployments API). A successful deployment
// links the merged requests whose merge commit it contains, which the `environment` and
// `deployed_before/after` list filters read.
import type { FastifyInstance } from 'fastify';
import type { Selectable } from 'kysely';
import type { Ctx } from '../../../http/route.js';
import { route } from '../../../http/route.js';
import { forbidden, missingAttributes, notFound, notGiven, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { nowIso } from '../../../db/database.js';
import type { DeploymentsTable } from '../../../db/tables/merge-requests.js';
import { findUsersByIds, type UserRow } from '../../../db/repositories/users.js';
import { AccessLevel } from '../../../services/access.js';
import { environmentsByName, findOrCreateEnvironment, startEnvironment, type EnvironmentRow } from '../../../services/deployments.js';
import { emitEvent } from '../../../services/events.js';
import { lockOwnerRow } from '../../../services/owner-lock.js';
import { findProject, type FoundProject } from '../../../services/projects/lookup.js';
import { repoFor } from '../../../services/merge-requests/git-ops.js';
import { loadBundle, pathId } from '../../../services/merge-requests/rows.js';
import { presentMergeRequestBasic } from '../entities/merge-request.js';
import { presentUserBasic } from '../entities/user.js';

type DeploymentRow = Selectable<DeploymentsTable>;
const STATUSES = ['created', 'running', 'success', 'failed', 'canceled', 'blocked'] as const;

/** Entities::EnvironmentBasic. */
export function presentEnvironmentBasic(env: EnvironmentRow) {
  return { id: env.id, name: env.name, slug: env.slug, external_url: env.external_url, created_at: env.created_at, updated_at: env.updated_at };
}

/** Entities::Deployment (`environment` left out where GitLab nests it in its environment). */
export function presentDeployment(d: DeploymentRow, user: UserRow | undefined, base: string, env: EnvironmentRow | undefined, opts: { withEnvironment?: boolean } = {}) {
  return {
    id: d.id,
    iid: d.iid,
    ref: d.ref,
    sha: d.sha,
    created_at: d.created_at,
    updated_at: d.updated_at,
    user: user ? presentUserBasic(user, { base }) : null,
    ...(opts.withEnvironment === false ? {} : { environment: env ? presentEnvironmentBasic(env) : null }),
    deployable: null,
    status: d.status,
  };
}

async function presentDeployments(c: Ctx, projectId: number, rows: DeploymentRow[]) {
  const [users, envs] = await Promise.all([
    findUsersByIds(c.app.db, rows.map((r) => r.user_id).filter((x): x is number => x !== null)),
    environmentsByName(c.app.db, projectId, rows.map((r) => r.environment)),
  ]);
  return rows.map((d) => presentDeployment(d, d.user_id !== null ? users.get(d.user_id) : undefined, c.base, envs.get(d.environment)));
}

/** read_deployment: as reading environments (Reporters, or anyone while CI/CD and the repository are open to all). */
async function readable(c: Ctx): Promise<FoundProject> {
  const found = await findProject(c, String(c.params.raw.id));
  const p = found.project;
  if (p.builds_access_level === 'disabled' || p.repository_access_level === 'disabled') throw forbidden();
  const openToAll = p.builds_access_level !== 'private' && p.repository_access_level !== 'private';
  if (!(openToAll && p.visibility === 'public') && found.access < AccessLevel.REPORTER && !c.user?.is_admin) throw forbidden();
  return found;
}

/** create_deployment / update_deployment: Developers, while CI/CD and the repository are on and the project is not archived. */
async function writable(c: Ctx): Promise<FoundProject> {
  const found = await findProject(c, String(c.params.raw.id));
  const p = found.project;
  if (found.access < AccessLevel.DEVELOPER && !c.user?.is_admin) throw forbidden();
  if (p.builds_access_level === 'disabled' || p.repository_access_level === 'disabled' || p.archived) throw forbidden();
  return found;
}

/** Links merged requests whose merge commit the deployed sha contains (once per environment). */
async function linkMergeRequests(c: Ctx, found: FoundProject, d: DeploymentRow): Promise<void> {
  const candidates = await c.app.db
    .selectFrom('merge_requests')
    .select(['id', 'merge_commit_sha'])
    .where('project_id', '=', found.project.id)
    .where('state', '=', 'merged')
    .where('target_branch', '=', d.ref)
    .where('merge_commit_sha', 'is not', null)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('deployment_merge_requests as dm').select('dm.id').whereRef('dm.merge_request_id', '=', 'merge_requests.id').where('dm.environment', '=', d.environment))))
    .orderBy('id', 'desc')
    .limit(500)
    .execute();
  const repo = repoFor(c.app, found.project.id);
  const linked: number[] = [];
  for (const mr of candidates) {
    if (await repo.isAncestor(mr.merge_commit_sha!, d.sha).catch(() => false)) linked.push(mr.id);
  }
  if (linked.length) {
    const at = d.finished_at ?? nowIso();
    await c.app.db.insertInto('deployment_merge_requests').values(linked.map((id) => ({ deployment_id: d.id, merge_request_id: id, environment: d.environment, deployed_at: at }))).onConflict((oc) => oc.doNothing()).execute();
  }
}

export function registerDeploymentRoutes(app: FastifyInstance): void {
  // GET /projects/:id/deployments
  route(app, 'GET', '/projects/:id/deployments', async function listDeployments(c) {
    const found = await readable(c);
    let q = c.app.db.selectFrom('deployments').selectAll().where('project_id', '=', found.project.id);
    const env = c.params.string('environment');
    if (env) q = q.where('environment', '=', env);
    const status = c.params.enum('status', STATUSES);
    if (status) q = q.where('status', '=', status);
    const orderBy = c.params.enum('order_by', ['id', 'iid', 'created_at', 'updated_at', 'finished_at', 'ref'] as const) ?? 'id';
    const sort = c.params.enum('sort', ['asc', 'desc'] as const) ?? 'asc';
    const rows = await paginateOffset(c, q.orderBy(orderBy, sort).orderBy('id', sort));
    return presentDeployments(c, found.project.id, rows);
  });

  // GET /projects/:id/deployments/:deployment_id
  route(app, 'GET', '/projects/:id/deployments/:deployment_id', async function getDeployment(c) {
    const found = await readable(c);
    const d = await findDeployment(c, found);
    return (await presentDeployments(c, found.project.id, [d]))[0];
  });

  // POST /projects/:id/deployments
  route(app, 'POST', '/projects/:id/deployments', async function createDeployment(c) {
    const user = c.requireUser();
    const found = await writable(c);
    const missing = ['environment', 'sha', 'ref', 'tag', 'status'].filter((n) => !c.params.has(n));
    if (missing.length) throw missingAttributes(missing);
    const environment = c.params.string('environment', { allowBlank: false })!;
    const ref = c.params.string('ref', { allowBlank: false })!;
    const tag = c.params.bool('tag')!;
    const status = c.params.enum('status', ['running', 'success', 'failed', 'canceled'] as const)!;
    const commit = await repoFor(c.app, found.project.id).getCommit(c.params.string('sha', { allowBlank: false })!).catch(() => null);
    if (!commit) throw paramError('sha is invalid');
    const now = nowIso();
    const { d, env } = await c.app.database.transaction(async (trx) => {
      await lockOwnerRow(c.app, trx, 'projects', found.project.id);
      // project.environments.find_or_create_by(name:): a new name makes its environment.
      const env = await findOrCreateEnvironment(trx, found.project.id, environment);
      const max = await trx.selectFrom('deployments').select((eb) => eb.fn.max<number>('iid').as('m')).where('project_id', '=', found.project.id).executeTakeFirst();
      const row = { iid: Number(max?.m ?? 0) + 1, project_id: found.project.id, environment, ref, sha: commit.id, tag: tag ? 1 : 0, status, user_id: user.id, finished_at: status === 'running' ? null : now, created_at: now, updated_at: now };
      const ins = await trx.insertInto('deployments').values(row).returning('id').executeTakeFirstOrThrow();
      // A successful deployment starts a stopped environment, in the same transaction as it is recorded.
      if (status === 'success') await startEnvironment(trx, found.project.id, environment);
      return { d: Object.assign({}, row, { id: ins.id }), env };
    });
    if (d.status === 'success') await linkMergeRequests(c, found, d);
    await emitEvent(c.app, { kind: 'deployment', projectId: found.project.id, deploymentId: d.id });
    return presentDeployment(d, user, c.base, env);
  });

  // PUT /projects/:id/deployments/:deployment_id
  route(app, 'PUT', '/projects/:id/deployments/:deployment_id', async function updateDeployment(c) {
    const user = c.requireUser();
    const found = await writable(c);
    const d = await findDeployment(c, found);
    if (!c.params.has('status')) throw notGiven('status');
    const status = c.params.enum('status', ['running', 'success', 'failed', 'canceled'] as const)!;
    const now = nowIso();
    const set = { status, updated_at: now, finished_at: status === 'running' ? null : now };
    await c.app.database.transaction(async (trx) => {
      await trx.updateTable('deployments').set(set).where('id', '=', d.id).execute();
      if (status === 'success') await startEnvironment(trx, found.project.id, d.environment);
    });
    const fresh = Object.assign({}, d, { ...set });
    if (status === 'success') await linkMergeRequests(c, found, fresh);
    // A change of status is an event (GitLab's deployment hooks run on each transition).
    if (status !== d.status) await emitEvent(c.app, { kind: 'deployment', projectId: found.project.id, deploymentId: d.id });
    return presentDeployment(fresh, user, c.base, (await environmentsByName(c.app.db, found.project.id, [d.environment])).get(d.environment));
  });

  // GET /projects/:id/deployments/:deployment_id/merge_requests
  route(app, 'GET', '/projects/:id/deployments/:deployment_id/merge_requests', async function deploymentMrs(c) {
    const found = await readable(c);
    const d = await findDeployment(c, found);
    const q = c.app.db
      .selectFrom('merge_requests')
      .selectAll('merge_requests')
      .where('merge_requests.id', 'in', c.app.db.selectFrom('deployment_merge_requests').select('merge_request_id').where('deployment_id', '=', d.id))
      .orderBy('merge_requests.id', 'desc');
    const rows = await paginateOffset(c, q);
    const bundle = await loadBundle(c.app.db, rows, [{ project: found.project, namespace: found.namespace }]);
    return rows.map((r) => presentMergeRequestBasic(r, { base: c.base, bundle }));
  });
}

async function findDeployment(c: Ctx, found: FoundProject): Promise<DeploymentRow> {
  const raw = String(c.params.raw.deployment_id ?? '');
  const d = pathId(raw) > 0 ? await c.app.db.selectFrom('deployments').selectAll().where('project_id', '=', found.project.id).where('id', '=', pathId(raw)).executeTakeFirst() : undefined;
  if (!d) throw notFound('Deployment');
  return d;
}
