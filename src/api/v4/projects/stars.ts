// Stars (GitLab's lib/api/projects.rb): star, unstar, the starrers of a project, and the lists of a
// user's projects and starred projects.
import type { FastifyInstance } from 'fastify';
import { findUserById, findUserByUsername, isDbId, USER_REF_COLUMNS, type UserRow } from '../../../db/repositories/users.js';
import { containsCi } from '../../../db/sql-helpers.js';
import { notFound } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { findProject, loadProjectById } from '../../../services/projects/lookup.js';
import { registerStarHooks, starProject, starredBy, unstarProject } from '../../../services/projects/stars.js';
import { presentProjectFor } from '../entities/project.js';
import { presentUserBasic } from '../entities/user.js';
import { listProjects } from './list.js';

/** POST /projects/:id/star and …/unstar: 201 with the project, or 304 when nothing changes. */
function starRoute(star: boolean) {
  return async function toggleStar(c: Ctx) {
    const user = c.requireUser();
    const found = await findProject(c, c.params.raw.id as string);
    const changed = star ? await starProject(c.app, user.id, found.project.id) : await unstarProject(c.app, user.id, found.project.id);
    if (!changed) {
      c.status(304);
      return undefined;
    }
    const fresh = (await loadProjectById(c.app.db, found.project.id)) ?? found;
    return presentProjectFor(c.app.db, fresh.project, fresh.namespace, { base: c.base, user, access: found.access });
  };
}

/**
 * Whether the caller may see a user's profile lists (GitLab's read_user_profile): private
 * profiles and blocked or banned users' only to themselves and administrators.
 */
export function profileVisible(c: Ctx, user: Pick<UserRow, 'id' | 'private_profile' | 'state'>): boolean {
  if (c.user?.id === user.id || c.user?.is_admin === 1) return true;
  return user.private_profile !== 1 && !HIDDEN_STATES.has(user.state);
}

const HIDDEN_STATES = new Set(['blocked', 'banned', 'blocked_pending_approval', 'ldap_blocked']);

// GET /projects/:id/starrers
async function starrers(c: Ctx) {
  const found = await findProject(c, c.params.raw.id as string);
  const search = c.params.string('search') || undefined;
  let q = c.app.db
    .selectFrom('users_star_projects as s')
    .innerJoin('users', 'users.id', 's.user_id')
    .select(USER_REF_COLUMNS.map((k) => `users.${k}` as const))
    .select(['s.id as star_id', 's.created_at as starred_since', 'users.private_profile'])
    .where('s.project_id', '=', found.project.id);
  // Private profiles are listed to themselves and administrators only (UsersStarProjectsFinder).
  if (!c.user?.is_admin) q = q.where((eb) => eb.or([eb('users.private_profile', '=', 0), eb('users.id', '=', c.user?.id ?? -1)]));
  if (search) q = q.where((eb) => eb.or([containsCi('users.name', search), containsCi('users.username', search)]));
  const rows = await paginateOffset(c, q.orderBy('s.id', 'desc'));
  return rows.map((r) => ({ starred_since: r.starred_since, user: presentUserBasic(r, { base: c.base }) }));
}

/** `:user_id` (or another path parameter), a numeric id or a username; 404 `User Not Found`. */
export async function userParam(c: Ctx, name = 'user_id'): Promise<UserRow> {
  const raw = String(c.params.raw[name] ?? '');
  const user = /^\d+$/.test(raw) && isDbId(Number(raw)) ? await findUserById(c.app.db, Number(raw)) : await findUserByUsername(c.app.db, raw);
  if (!user) throw notFound('User');
  return user;
}

export function registerProjectStarRoutes(app: FastifyInstance): void {
  registerStarHooks();
  route(app, 'POST', '/projects/:id/star', starRoute(true));
  route(app, 'POST', '/projects/:id/unstar', starRoute(false));
  route(app, 'GET', '/projects/:id/starrers', starrers);
  // GET /users/:user_id/projects: the visible projects of the user's personal namespace.
  route(app, 'GET', '/users/:user_id/projects', async (c) => {
    const user = await userParam(c);
    // GitLab's PersonalProjectsFinder: nothing when the caller may not read the user's profile.
    if (!profileVisible(c, user)) return listProjects(c, (q) => q.where('projects.id', '<', 0));
    return listProjects(c, (q) => q.where('projects.namespace_id', 'in', c.app.db.selectFrom('namespaces').select('id').where('kind', '=', 'user').where('owner_id', '=', user.id)));
  });
  // GET /users/:user_id/starred_projects: the visible projects the user starred (none when the caller may not read their profile).
  route(app, 'GET', '/users/:user_id/starred_projects', async (c) => {
    const user = await userParam(c);
    const visible = profileVisible(c, user);
    return listProjects(c, (q) => (visible ? q.where('projects.id', 'in', starredBy(c.app.db, user.id)) : q.where('projects.id', '<', 0)));
  });
}
