// Environments (GitLab's lib/api/environments.rb): list, create, read (with the last successful
// deployment), update, stop, delete stopped ones, stop stale ones, and delete stopped review apps.
// Reporters read, Developers write, Maintainers stop stale environments. Labwright runs no jobs, so
// an environment has no stop actions: a stop stops it at once (unless its auto_stop_setting waits
// for an action), as GitLab does for environments without a stop job.
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { escapeLike } from '../../../db/sql-helpers.js';
import { apiError, badRequest, forbidden, notGiven, paramError } from '../../../http/errors.js';
import { lockOwnerRow, lockOwnerRows } from '../../../services/owner-lock.js';
import { charLength } from '../../../services/ruby-text.js';
import { paginateOffset } from '../../../http/pagination.js';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import { nowIso } from '../../../db/database.js';
import { findUsersByIds } from '../../../db/repositories/users.js';
import { AccessLevel, canReadProject } from '../../../services/access.js';
import { AUTO_STOP_SETTINGS, insertEnvironment, TIERS, updateEnvironment, type EnvironmentInput, type EnvironmentRow } from '../../../services/deployments.js';
import { findProject, type FoundProject } from '../../../services/projects/lookup.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { presentProjectSimple } from '../entities/project.js';
import { presentDeployment, presentEnvironmentBasic } from '../deployments/routes.js';
import { integerPathParam, pathParam } from '../repository/common.js';

/**
 * read_environment: Reporters, or anyone the project's visibility lets read it while CI/CD and the
 * repository are open to everyone (members only: Reporters); none of the environment abilities
 * while either is turned off. Writes: Developers, never in an archived project (GitLab blocks
 * environments and deployments there). Anonymous callers were refused before (401).
 */
export function environmentAccess(c: Ctx, found: FoundProject, minAccess: number, write: boolean): void {
  const p = found.project;
  const admin = Boolean(c.user?.is_admin);
  if (p.builds_access_level === 'disabled' || p.repository_access_level === 'disabled') throw forbidden();
  const openToAll = p.builds_access_level !== 'private' && p.repository_access_level !== 'private';
  const readsPublicly = openToAll && p.visibility !== 'private' && canReadProject(c.user, p, found.access);
  if (!admin && found.access < AccessLevel.REPORTER && !(readsPublicly && minAccess <= AccessLevel.REPORTER)) throw forbidden();
  if (!admin && minAccess > AccessLevel.REPORTER && found.access < minAccess) throw forbidden();
  if (write && p.archived) throw forbidden();
}

async function projectFor(c: Ctx, minAccess: number, write = false): Promise<FoundProject> {
  c.requireUser();
  const found = await findProject(c, pathParam(c, 'id'));
  environmentAccess(c, found, minAccess, write);
  return found;
}

/** `environment_id`: an Integer (Grape's 400); an unknown one 404 `{"message":"404 Not found"}`. */
async function environmentOf(c: Ctx, found: FoundProject): Promise<EnvironmentRow> {
  const id = integerPathParam(c, 'environment_id');
  const env = id > 0 ? await c.app.db.selectFrom('environments').selectAll().where('project_id', '=', found.project.id).where('id', '=', id).executeTakeFirst() : undefined;
  if (!env) throw apiError(404, '404 Not found');
  return env;
}

/** Entities::Environment: with `project` (lists and writes), or with `last_deployment` instead (a single read). */
function presentEnvironment(env: EnvironmentRow, extra: { project?: unknown; lastDeployment?: unknown }) {
  return {
    id: env.id,
    name: env.name,
    slug: env.slug,
    external_url: env.external_url,
    created_at: env.created_at,
    updated_at: env.updated_at,
    tier: env.tier,
    ...('project' in extra ? { project: extra.project } : {}),
    ...('lastDeployment' in extra ? { last_deployment: extra.lastDeployment } : {}),
    state: env.state,
    auto_stop_at: env.auto_stop_at,
    description: env.description,
    auto_stop_setting: env.auto_stop_setting,
  };
}

function projectOf(c: Ctx, found: FoundProject) {
  return presentProjectSimple(found.project, found.namespace, { base: c.base });
}

/** The attributes a create or an update may set (`slug` is refused: it is made from the name). */
function readAttrs(c: Ctx): EnvironmentInput & { clusterAgent?: true } {
  if (c.params.has('slug')) throw paramError('slug is automatically generated and cannot be changed');
  const attrs: EnvironmentInput & { clusterAgent?: true } = {};
  if (c.params.has('external_url')) attrs.external_url = c.params.nullableString('external_url') ?? null;
  if (c.params.has('description')) attrs.description = c.params.nullableString('description') ?? null;
  const tier = c.params.enum('tier', TIERS);
  if (tier !== undefined) attrs.tier = tier;
  const autoStop = c.params.enum('auto_stop_setting', AUTO_STOP_SETTINGS);
  if (autoStop !== undefined) attrs.auto_stop_setting = autoStop;
  if (c.params.has('cluster_agent_id') && c.params.raw.cluster_agent_id !== null) {
    c.params.int('cluster_agent_id');
    attrs.clusterAgent = true;
  }
  return attrs;
}

/** Labwright has no Kubernetes agents: any id names one that does not exist (checked once the caller may write). */
function refuseClusterAgent(attrs: { clusterAgent?: true }): void {
  if (attrs.clusterAgent) throw badRequest("cluster agent doesn't exist or cannot be associated with this environment");
}

/** Stops an environment without stop actions (Environments::StopService): forced, or when its setting is `always`. */
async function stop(c: Ctx, env: EnvironmentRow, force: boolean): Promise<EnvironmentRow> {
  const stops = force ? env.state !== 'stopped' : env.state === 'available' && env.auto_stop_setting === 'always';
  if (!stops) return env;
  const set = { state: 'stopped', auto_stop_at: null, updated_at: nowIso() };
  await c.app.db.updateTable('environments').set(set).where('id', '=', env.id).execute();
  return { ...env, ...set };
}

export function registerEnvironmentRoutes(app: FastifyInstance): void {
  // GET /projects/:id/environments
  route(app, 'GET', '/projects/:id/environments', async function listEnvironments(c) {
    c.requireUser();
    // Declared with mutually_exclusive and its own message.
    if (c.params.has('name') && c.params.has('search')) throw paramError('name, search cannot be used together');
    const states = c.params.enum('states', ['available', 'stopping', 'stopped'] as const);
    const found = await projectFor(c, AccessLevel.REPORTER);
    let q = c.app.db.selectFrom('environments').selectAll().where('project_id', '=', found.project.id);
    const name = c.params.string('name');
    if (name !== undefined) q = q.where('name', '=', name);
    const search = c.params.string('search');
    if (search !== undefined) {
      if (charLength(search) < 3) throw badRequest('Search query is less than 3 characters');
      // A case-insensitive prefix, as GitLab's EnvironmentsFinder.
      q = q.where(sql<boolean>`lower(name) like ${`${escapeLike(search.toLowerCase())}%`} escape '\\'`);
    }
    if (states) q = q.where('state', '=', states);
    const rows = await paginateOffset(c, q.orderBy('id'));
    const project = projectOf(c, found);
    return rows.map((env) => presentEnvironment(env, { project }));
  });

  // POST /projects/:id/environments
  route(app, 'POST', '/projects/:id/environments', async function createEnvironment(c) {
    c.requireUser();
    if (!c.params.has('name') || c.params.raw.name === null) throw notGiven('name');
    const name = c.params.string('name')!;
    const attrs = readAttrs(c);
    const found = await projectFor(c, AccessLevel.DEVELOPER, true);
    refuseClusterAgent(attrs);
    const env = await c.app.database.transaction(async (trx) => {
      await lockOwnerRow(c.app, trx, 'projects', found.project.id);
      return insertEnvironment(trx, found.project.id, name, attrs);
    });
    return presentEnvironment(env, { project: projectOf(c, found) });
  });

  // DELETE /projects/:id/environments/review_apps
  route(app, 'DELETE', '/projects/:id/environments/review_apps', async function deleteReviewApps(c) {
    c.requireUser();
    const before = c.params.datetime('before') ?? new Date(Date.now() - 30 * 86_400_000).toISOString();
    const limit = c.params.int('limit', { min: 1, max: 1000 }) ?? 100;
    const dryRun = c.params.bool('dry_run') ?? true;
    const found = await projectFor(c, AccessLevel.REPORTER);
    if ((found.access < AccessLevel.DEVELOPER && !c.user!.is_admin) || found.project.archived) {
      throw apiError(401, { scheduled_entries: [], unprocessable_entries: [], message: 'You do not have permission to destroy environments in this project' });
    }
    const rows = await c.app.db
      .selectFrom('environments')
      .selectAll()
      .where('project_id', '=', found.project.id)
      .where('state', '=', 'stopped')
      .where('name', 'like', 'review/%')
      .where('created_at', '<', before)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    if (rows.length === 0) {
      throw apiError(400, {
        scheduled_entries: [],
        unprocessable_entries: [],
        message: 'Failed to authorize deletions for some or all of the environments. Ask someone with more permissions to delete the environments.',
      });
    }
    // GITLAB-COMPAT: GitLab schedules the deletions a week ahead; without a scheduler they are made now.
    if (!dryRun) await deleteEnvironments(c, found.project.id, rows.map((r) => r.id));
    c.status(200);
    return { scheduled_entries: rows.map(presentEnvironmentBasic), unprocessable_entries: [] };
  });

  // POST /projects/:id/environments/stop_stale
  route(app, 'POST', '/projects/:id/environments/stop_stale', async function stopStale(c) {
    c.requireUser();
    if (!c.params.has('before') || c.params.raw.before === null) throw notGiven('before');
    const before = c.params.datetime('before');
    if (before === undefined) throw paramError('before is invalid');
    const found = await projectFor(c, AccessLevel.MAINTAINER, true);
    const t = Date.parse(before);
    if (t < Date.now() - 10 * 365.25 * 86_400_000 || t > Date.now() - 7 * 86_400_000) throw badRequest('Invalid Date');
    // Available environments not updated since `before` and with no deployment since then.
    await c.app.db
      .updateTable('environments')
      .set({ state: 'stopped', auto_stop_at: null, updated_at: nowIso() })
      .where('project_id', '=', found.project.id)
      .where('state', '=', 'available')
      // Without stop actions only environments that stop always stop (Environments::StopService).
      .where('auto_stop_setting', '=', 'always')
      .where('updated_at', '<', before)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('deployments')
              .select('deployments.id')
              .where('deployments.project_id', '=', found.project.id)
              .whereRef('deployments.environment', '=', 'environments.name')
              .where('deployments.updated_at', '>=', before),
          ),
        ),
      )
      .execute();
    c.status(200);
    return { message: 'Successfully scheduled stale environments to stop' };
  });

  // GET /projects/:id/environments/:environment_id
  route(app, 'GET', '/projects/:id/environments/:environment_id', async function getEnvironment(c) {
    const found = await projectFor(c, AccessLevel.REPORTER);
    const env = await environmentOf(c, found);
    const last = await c.app.db
      .selectFrom('deployments')
      .selectAll()
      .where('project_id', '=', found.project.id)
      .where('environment', '=', env.name)
      .where('status', '=', 'success')
      .orderBy('finished_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    let lastDeployment: unknown = null;
    if (last) {
      const users = await findUsersByIds(c.app.db, last.user_id !== null ? [last.user_id] : []);
      lastDeployment = presentDeployment(last, last.user_id !== null ? users.get(last.user_id) : undefined, c.base, env, { withEnvironment: false });
    }
    return presentEnvironment(env, { lastDeployment });
  });

  // PUT /projects/:id/environments/:environment_id
  route(app, 'PUT', '/projects/:id/environments/:environment_id', async function updateEnvironmentRoute(c) {
    c.requireUser();
    const attrs = readAttrs(c);
    const found = await projectFor(c, AccessLevel.DEVELOPER, true);
    const env = await environmentOf(c, found);
    refuseClusterAgent(attrs);
    // `name` is no longer an update parameter (GitLab 16.0): ignored.
    return presentEnvironment(await updateEnvironment(c.app.db, env, attrs), { project: projectOf(c, found) });
  });

  // DELETE /projects/:id/environments/:environment_id
  route(app, 'DELETE', '/projects/:id/environments/:environment_id', async function deleteEnvironment(c) {
    const found = await projectFor(c, AccessLevel.REPORTER);
    const env = await environmentOf(c, found);
    // destroy_environment: Developers, and only once the environment is stopped.
    if ((found.access < AccessLevel.DEVELOPER && !c.user!.is_admin) || env.state !== 'stopped' || found.project.archived) throw forbidden();
    refuseIfModifiedSince(c, env.updated_at);
    // Still stopped when deleted: a deployment that started it meanwhile keeps it (403).
    if (!(await deleteEnvironments(c, found.project.id, [env.id]))) throw forbidden();
  });

  // POST /projects/:id/environments/:environment_id/stop
  route(app, 'POST', '/projects/:id/environments/:environment_id/stop', async function stopEnvironment(c) {
    const force = c.params.bool('force') ?? false;
    const found = await projectFor(c, AccessLevel.REPORTER);
    const env = await environmentOf(c, found);
    // stop_environment without stop actions: whoever may update it (Developers).
    if ((found.access < AccessLevel.DEVELOPER && !c.user!.is_admin) || found.project.archived) throw forbidden();
    c.status(200);
    return presentEnvironment(await stop(c, env, force), { project: projectOf(c, found) });
  });

  if (hooked) return;
  hooked = true;
  projectDeletionHooks.push(async function deleteProjectEnvironments(hookApp, trx, projectId) {
    // The project's row first (PostgreSQL): a deployment or environment being made for it either
    // committed already (and goes here) or finds the project gone.
    await lockOwnerRows(hookApp, trx, 'projects', [projectId]);
    const deployments = trx.selectFrom('deployments').select('id').where('project_id', '=', projectId);
    await trx.deleteFrom('deployment_merge_requests').where('deployment_id', 'in', deployments).execute();
    await trx.deleteFrom('deployments').where('project_id', '=', projectId).execute();
    await trx.deleteFrom('environments').where('project_id', '=', projectId).execute();
  });
}

let hooked = false;

/**
 * Deletes stopped environments with their deployments (a deployment belongs to its environment, as
 * in GitLab); the number deleted. One that was started meanwhile is left alone.
 */
async function deleteEnvironments(c: Ctx, projectId: number, ids: number[]): Promise<number> {
  return c.app.database.transaction(async (trx) => {
    const gone = await trx.deleteFrom('environments').where('project_id', '=', projectId).where('id', 'in', ids).where('state', '=', 'stopped').returning(['name']).execute();
    const names = gone.map((g) => g.name);
    if (names.length) {
      const deployments = trx.selectFrom('deployments').select('id').where('project_id', '=', projectId).where('environment', 'in', names);
      await trx.deleteFrom('deployment_merge_requests').where('deployment_id', 'in', deployments).execute();
      await trx.deleteFrom('deployments').where('project_id', '=', projectId).where('environment', 'in', names).execute();
    }
    return gone.length;
  });
}
