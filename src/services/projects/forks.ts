// Forks (GitLab's Projects::ForkService and UnlinkForkService): a fork is a project whose repository
// started as a copy of another's, linked to it (`forked_from_project_id`) and to the root of their
// fork network (`fork_network_root_id`); merge requests may go between any two projects of one
// network. A project leaves its network when unlinked or deleted; its open merge requests to and
// from the others are closed then, as GitLab does.
import { sql, type Kysely, type Transaction } from 'kysely';
import { isPostgres } from '../../db/batch.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import type { DB } from '../../db/types.js';
import { ApiError, apiError, notFound } from '../../http/errors.js';
import { AccessLevel, VISIBILITY_LEVEL, visibleWithoutMembership, type Visibility } from '../access.js';
import { canReadRepository } from '../repository/project-repo.js';
import { createProject, projectDeletionHooks, uncountFork } from './create.js';
import { loadProjectById, type FoundProject, type NamespaceRow, type ProjectRow } from './lookup.js';
import { findMrById } from '../merge-requests/rows.js';
import { updateMergeRequest } from '../merge-requests/write.js';

/** The advisory lock that hands out new fork network ids one at a time. */
const NETWORK_ID_LOCK = 7_190_019;

/** GitLab's fork_project ability: who may read the code and, by the forking feature's level, fork it. */
export function canFork(user: UserRow | null, project: ProjectRow, access: number): boolean {
  if (!user || project.forking_access_level === 'disabled') return false;
  if (user.is_admin) return true;
  if (!canReadRepository(project, user, access)) return false;
  if (project.forking_access_level === 'private' && access < AccessLevel.GUEST) return false;
  return access >= AccessLevel.REPORTER || visibleWithoutMembership(project.visibility, user);
}

/** Whether two projects are of one fork network (merge requests may go between them). */
export function sameForkNetwork(a: Pick<ProjectRow, 'fork_network_root_id'>, b: Pick<ProjectRow, 'fork_network_root_id'>): boolean {
  return a.fork_network_root_id !== null && a.fork_network_root_id === b.fork_network_root_id;
}

export interface ForkOptions {
  namespace: NamespaceRow;
  name?: string;
  path?: string;
  description?: string;
  visibility?: Visibility;
  mrDefaultTargetSelf?: boolean;
  branch?: string;
}

/** The visibility of a new fork: the lowest of the source's, the namespace's and the one asked for. */
function forkVisibility(source: ProjectRow, ns: NamespaceRow, asked: Visibility | undefined): Visibility {
  const levels = [VISIBILITY_LEVEL[source.visibility as Visibility] ?? 0];
  if (ns.kind === 'group') levels.push(VISIBILITY_LEVEL[ns.visibility as Visibility] ?? 0);
  if (asked !== undefined) levels.push(VISIBILITY_LEVEL[asked]);
  const level = Math.min(...levels);
  return (Object.keys(VISIBILITY_LEVEL) as Visibility[]).find((v) => VISIBILITY_LEVEL[v] === level) ?? 'private';
}

/** `{"name": ["has already been taken"]}` as Rails' full messages (`Name has already been taken`). */
function fullMessages(body: unknown): unknown {
  const message = (body as { message?: unknown } | null)?.message;
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return message;
  const out: string[] = [];
  for (const [attr, msgs] of Object.entries(message as Record<string, unknown>)) {
    const human = attr.charAt(0).toUpperCase() + attr.slice(1).replace(/_/g, ' ');
    for (const m of Array.isArray(msgs) ? msgs : [msgs]) out.push(`${human} ${String(m)}`);
  }
  return out;
}

/**
 * POST /projects/:id/fork: a new project in `opts.namespace` (checked by the caller) with a copy of
 * the source's repository, its feature levels and commit templates. Every refusal of the creation
 * is GitLab's 409 with the full messages.
 */
export async function forkProject(app: AppContext, user: UserRow, source: FoundProject, opts: ForkOptions) {
  const { project } = source;
  try {
    return await createProject(app, user, {
      namespace: opts.namespace,
      name: opts.name ?? project.name,
      path: opts.path ?? project.path,
      description: opts.description ?? project.description ?? undefined,
      visibility: forkVisibility(project, opts.namespace, opts.visibility),
      settings: {},
      fork: { source: project, branch: opts.branch, mrDefaultTargetSelf: opts.mrDefaultTargetSelf },
    });
  } catch (err) {
    if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 404) throw apiError(409, fullMessages(err.body));
    throw err;
  }
}

/**
 * POST /projects/:id/fork/:forked_from_id: records that an existing project is a fork of `source`.
 * Projects of the linked project's own network (if it was a root) join the new one with it.
 */
export async function linkFork(app: AppContext, project: ProjectRow, source: ProjectRow): Promise<void> {
  if (project.forked_from_project_id !== null) throw apiError(409, 'Project already forked');
  if (project.id === source.id) throw apiError(400, 'Target project cannot be equal to source project');
  // A fork is never more visible than its source (GitLab's visibility_level_allowed_as_fork).
  if ((VISIBILITY_LEVEL[project.visibility as Visibility] ?? 0) > (VISIBILITY_LEVEL[source.visibility as Visibility] ?? 0)) {
    throw apiError(400, [`Visibility level ${project.visibility} is not allowed since the fork source project has lower visibility.`]);
  }
  await app.database.transaction(async (trx) => {
    const from = await app.database.forUpdate(trx.selectFrom('projects').selectAll().where('id', '=', source.id)).executeTakeFirst();
    const me = await app.database.forUpdate(trx.selectFrom('projects').selectAll().where('id', '=', project.id)).executeTakeFirst();
    if (!from || !me) throw notFound('Project');
    // Already in a network: a fork (GitLab's 409), or the root of forks of its own
    // (GITLAB-COMPAT: GitLab would move it alone; Labwright keeps networks whole and refuses).
    if (me.forked_from_project_id !== null || (me.fork_network_root_id !== null && (me.fork_network_root_id !== me.id || (await othersInNetwork(trx, me))))) {
      throw apiError(409, 'Project already forked');
    }
    const root = from.fork_network_root_id ?? from.id;
    await trx.updateTable('projects').set({ forked_from_project_id: from.id, fork_network_root_id: root }).where('id', '=', me.id).execute();
    await trx
      .updateTable('projects')
      .set((eb) => ({ forks_count: eb('forks_count', '+', 1), fork_network_root_id: root }))
      .where('id', '=', from.id)
      .execute();
  });
}

async function othersInNetwork(trx: Transaction<DB>, me: ProjectRow): Promise<boolean> {
  const other = await trx.selectFrom('projects').select('id').where('fork_network_root_id', '=', me.fork_network_root_id).where('id', '!=', me.id).limit(1).executeTakeFirst();
  return other !== undefined;
}

/**
 * Takes a project out of its fork network: no longer a fork, its direct forks no longer forks of
 * it (they stay in the network), the upstream's fork count less one. Runs in `trx`.
 */
async function leaveNetwork(trx: Transaction<DB> | Kysely<DB>, project: ProjectRow): Promise<void> {
  await trx.updateTable('projects').set({ forked_from_project_id: null }).where('forked_from_project_id', '=', project.id).execute();
  if (project.fork_network_root_id === project.id) {
    // The root leaves: the others keep a network of their own under a new id (GitLab's network
    // outlives its root), so the old root rejoins nothing when it is forked again.
    // Serialised on PostgreSQL (SQLite runs one writer at a time): two roots leaving at once must not take the same id.
    if (isPostgres(trx as Kysely<DB>)) await sql`select pg_advisory_xact_lock(${NETWORK_ID_LOCK})`.execute(trx);
    const low = await trx.selectFrom('projects').select((eb) => eb.fn.min<number>('fork_network_root_id').as('m')).executeTakeFirst();
    const fresh = Math.min(Number(low?.m ?? 0), 0) - 1;
    await trx.updateTable('projects').set({ fork_network_root_id: fresh }).where('fork_network_root_id', '=', project.id).where('id', '!=', project.id).execute();
  }
  await trx.updateTable('projects').set({ forked_from_project_id: null, fork_network_root_id: null, forks_count: 0 }).where('id', '=', project.id).execute();
  if (project.forked_from_project_id !== null) await uncountFork(trx as Kysely<DB>, project.forked_from_project_id);
}

/** Open merge requests between the project and other projects, either way. */
function openCrossProject(db: Kysely<DB> | Transaction<DB>, projectId: number) {
  return db
    .selectFrom('merge_requests')
    .selectAll()
    .where('state', '=', 'opened')
    .where((eb) =>
      eb.or([
        eb.and([eb('source_project_id', '=', projectId), eb('project_id', '!=', projectId)]),
        eb.and([eb('project_id', '=', projectId), eb('source_project_id', '!=', projectId)]),
      ]),
    );
}

/**
 * DELETE /projects/:id/fork. False when the project is in no fork network (GitLab's 304). Open
 * merge requests between it and the network are closed first by `close` (as the caller).
 */
export async function unlinkFork(app: AppContext, project: ProjectRow, close: (mr: { id: number; project_id: number }) => Promise<void>): Promise<boolean> {
  if (project.fork_network_root_id === null && project.forked_from_project_id === null) return false;
  for (const mr of await openCrossProject(app.db, project.id).execute()) await close(mr);
  await app.database.transaction(async (trx) => {
    const me = await app.database.forUpdate(trx.selectFrom('projects').selectAll().where('id', '=', project.id)).executeTakeFirst();
    if (me) await leaveNetwork(trx, me);
  });
  // One opened meanwhile is closed too (nothing is fetched for it any more: it left the network).
  for (const mr of await openCrossProject(app.db, project.id).execute()) await close(mr);
  return true;
}

/** Takes a project out of its fork network, closing its open requests to and from the others as `user`. */
export function unlinkProject(app: AppContext, user: UserRow, project: ProjectRow): Promise<boolean> {
  return unlinkFork(app, project, async (row) => {
    const [info, mr] = await Promise.all([loadProjectById(app.db, row.project_id), findMrById(app.db, row.id)]);
    if (info && mr && mr.state === 'opened') await updateMergeRequest(app, info, mr, user, { stateEvent: 'close' });
  });
}

/**
 * As GitLab's UpdateService on a visibility decrease: projects made less visible (by an edit, a
 * transfer, or their group moving) leave their fork networks, so nothing of them keeps flowing
 * into forks that others may read.
 */
export async function unlinkLessVisible(app: AppContext, user: UserRow, projectIds: number[]): Promise<void> {
  for (const id of projectIds) {
    const found = await loadProjectById(app.db, id);
    if (found && (found.project.fork_network_root_id !== null || found.project.forked_from_project_id !== null)) await unlinkProject(app, user, found.project);
  }
}

let registered = false;

/**
 * A deleted project leaves its network in the deleting transaction: its forks stop being forks of
 * it, and its open merge requests into other projects are closed (those into it go with it).
 */
export function registerForkDeletionHook(): void {
  if (registered) return;
  registered = true;
  projectDeletionHooks.push(async function leaveForkNetwork(_app, trx, projectId) {
    const me = await trx.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
    if (!me || (me.fork_network_root_id === null && me.forked_from_project_id === null)) return;
    const now = nowIso();
    await trx
      .updateTable('merge_requests')
      .set({ state: 'closed', closed_at: now, updated_at: now, merge_when_pipeline_succeeds: 0 })
      .where('state', '=', 'opened')
      .where('source_project_id', '=', projectId)
      .where('project_id', '!=', projectId)
      .execute();
    await leaveNetwork(trx, me);
  });
}
