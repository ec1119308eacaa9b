// /user and /users: the current user, listing, admin management, block/unblock.
import type { FastifyInstance } from 'fastify';
import { findUserById, type UserRow } from '../../../db/repositories/users.js';
import { containsCi } from '../../../db/sql-helpers.js';
import { forbidden, notFound, paramError } from '../../../http/errors.js';
import { paginateKeyset, paginateOffset, wantsKeyset } from '../../../http/pagination.js';
import { MAX_DB_INT } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import { generateToken } from '../../../services/secrets.js';
import { adminUserParamHooks, createUser, decorateAdminUser, decorateAdminUsers, deleteUser, personalNamespaceId, setUserState, updateUser, type UserChanges } from '../../../services/users.js';
import { presentUser, presentUserBasic, presentUserPublic, presentUserWithAdmin } from '../entities/user.js';

const USER_SCOPES = { extraScopes: ['read_user'] };
const CACHED_USER_SCOPES = { ...USER_SCOPES, cache: true };
const ORDERS = ['id', 'name', 'username', 'created_at', 'updated_at'] as const;

async function loadUser(c: Ctx, name = 'id'): Promise<UserRow> {
  const raw = c.params.raw[name];
  const id = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  const user = Number.isSafeInteger(id) && id <= MAX_DB_INT ? await findUserById(c.app.db, id) : undefined;
  if (!user) throw notFound('User');
  return user;
}

/** What the caller sees of another user: admins everything, the user itself its own view. */
async function presentFor(c: Ctx, u: UserRow) {
  if (c.user?.is_admin) return decorateAdminUser(c.app, u.id, presentUserWithAdmin(u, { base: c.base, namespaceId: await personalNamespaceId(c.app.database, u.id) }));
  if (c.user?.id === u.id) return presentUserPublic(u, c);
  return presentUser(u, c);
}

function readChanges(c: Ctx, admin: boolean): UserChanges {
  const p = c.params;
  return {
    username: p.string('username', { max: 255 }),
    name: p.string('name', { max: 255 }),
    email: p.string('email', { max: 255 }),
    password: p.string('password'),
    isAdmin: admin ? p.bool('admin') : undefined,
    bio: p.string('bio', { max: 255 }),
    location: p.string('location', { max: 255 }),
    publicEmail: p.nullableString('public_email', { max: 255 }),
    websiteUrl: p.string('website_url', { max: 255 }),
    organization: p.string('organization', { max: 255 }),
    jobTitle: p.string('job_title', { max: 255 }),
    pronouns: p.nullableString('pronouns', { max: 50 }),
    canCreateGroup: p.bool('can_create_group'),
    projectsLimit: p.int('projects_limit', { min: 0, max: 2147483647 }),
    external: p.bool('external'),
    privateProfile: p.bool('private_profile'),
  };
}

export function registerUserRoutes(app: FastifyInstance): void {
  // GET /user
  route(app, 'GET', '/user', (c) => {
    const u = c.requireUser();
    return c.user?.is_admin ? presentFor(c, u) : presentUserPublic(u, c);
  }, CACHED_USER_SCOPES);

  // GET /users
  route(app, 'GET', '/users', async (c) => {
    const p = c.params;
    const orderBy = p.enum('order_by', ORDERS) ?? 'id';
    const sort = p.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
    let q = c.app.db.selectFrom('users').selectAll();
    const username = p.string('username');
    if (username !== undefined) q = q.where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()));
    const search = p.string('search');
    if (search) {
      q = q.where((eb) => {
        const ors = [containsCi('users.name', search), containsCi('users.username', search)];
        if (c.user?.is_admin) ors.push(containsCi('users.email', search));
        else ors.push(eb(eb.fn('lower', ['email']), '=', search.toLowerCase()) as never);
        return eb.or(ors as never);
      });
    }
    if (p.bool('active')) q = q.where('state', '=', 'active');
    if (p.bool('blocked')) q = q.where('state', '=', 'blocked');
    if (p.bool('external')) q = q.where('external', '=', 1);
    if (p.bool('exclude_external')) q = q.where('external', '=', 0);
    const humans = p.bool('humans');
    if (humans) q = q.where('user_type', '=', 'human');
    if (p.bool('without_project_bots')) q = q.where('user_type', '!=', 'project_bot');
    const createdAfter = p.datetime('created_after');
    if (createdAfter) q = q.where('created_at', '>=', createdAfter);
    const createdBefore = p.datetime('created_before');
    if (createdBefore) q = q.where('created_at', '<=', createdBefore);
    if (p.has('admins') && p.bool('admins')) {
      if (!c.user?.is_admin) throw forbidden();
      q = q.where('is_admin', '=', 1);
    }
    let rows: UserRow[];
    if (wantsKeyset(c)) {
      const order = orderBy === 'id' ? [{ column: 'users.id', key: 'id' }] : [{ column: `users.${orderBy}`, key: orderBy }, { column: 'users.id', key: 'id' }];
      rows = await paginateKeyset(c, q, {
        order,
        direction: sort,
        mode: orderBy === 'id' ? 'id' : 'cursor',
        value: (r, k) => (r as Record<string, unknown>)[k],
      });
    } else {
      q = q.orderBy(`users.${orderBy}`, sort);
      if (orderBy !== 'id') q = q.orderBy('users.id', sort);
      rows = await paginateOffset(c, q, { keysetType: 'User' });
    }
    if (c.user?.is_admin) {
      const ns = await c.app.db
        .selectFrom('namespaces')
        .select(['id', 'owner_id'])
        .where('kind', '=', 'user')
        .where('owner_id', 'in', rows.length ? rows.map((r) => r.id) : [0])
        .execute();
      const byOwner = new Map(ns.map((n) => [n.owner_id, n.id]));
      return decorateAdminUsers(c.app, rows.map((u) => ({ id: u.id, out: presentUserWithAdmin(u, { base: c.base, namespaceId: byOwner.get(u.id) ?? null }) })));
    }
    return rows.map((u) => presentUserBasic(u, c));
  }, USER_SCOPES);

  // GET /users/:id
  route(app, 'GET', '/users/:id', async (c) => presentFor(c, await loadUser(c)), CACHED_USER_SCOPES);

  // POST /users
  route(app, 'POST', '/users', async (c) => {
    const admin = c.requireAdmin();
    const p = c.params;
    const email = p.string('email', { required: true })!;
    const username = p.string('username', { required: true })!;
    const name = p.string('name', { required: true })!;
    const given = ['password', 'reset_password', 'force_random_password'].filter((k) => p.has(k));
    if (given.length === 0) {
      throw paramError('password, reset_password, force_random_password are missing, exactly one parameter must be provided');
    }
    if (given.length > 1) throw paramError(`${given.join(', ')} are mutually exclusive`);
    const ch = readChanges(c, true);
    const extra = await Promise.all(adminUserParamHooks.map((h) => h(c.app, c.params)));
    const password = ch.password ?? (p.bool('force_random_password') || p.bool('reset_password') ? generateToken() : undefined);
    const user = await createUser(c.app, Object.assign({}, ch, {
      username,
      name,
      email,
      password,
      isAdmin: ch.isAdmin,
      createdById: admin.id,
    }));
    for (const apply of extra) await apply(user.id);
    return decorateAdminUser(c.app, user.id, presentUserWithAdmin(user, { base: c.base, namespaceId: await personalNamespaceId(c.app.database, user.id) }));
  });

  // PUT /users/:id
  route(app, 'PUT', '/users/:id', async (c) => {
    c.requireAdmin();
    const target = await loadUser(c);
    const extra = await Promise.all(adminUserParamHooks.map((h) => h(c.app, c.params)));
    const user = await updateUser(c.app, target.id, readChanges(c, true));
    for (const apply of extra) await apply(user.id);
    return decorateAdminUser(c.app, user.id, presentUserWithAdmin(user, { base: c.base, namespaceId: await personalNamespaceId(c.app.database, user.id) }));
  });

  // DELETE /users/:id
  route(app, 'DELETE', '/users/:id', async (c) => {
    const admin = c.requireAdmin();
    const target = await loadUser(c);
    c.params.bool('hard_delete');
    if (target.id === admin.id && !c.auth.sudoFrom) throw forbidden('You cannot delete yourself');
    await deleteUser(c.app, target.id);
    return undefined;
  });

  // POST /users/:id/block and /unblock
  for (const action of ['block', 'unblock'] as const) {
    route(app, 'POST', `/users/:id/${action}`, async (c) => {
      c.requireAdmin();
      const target = await loadUser(c);
      if (action === 'block' && target.state === 'blocked') return true;
      if (action === 'unblock' && target.state === 'active') return true;
      await setUserState(c.app, target.id, action === 'block' ? 'blocked' : 'active');
      return true;
    });
  }
}
