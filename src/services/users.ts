// Users and their personal namespaces: create, update, delete, block.
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso, rawSql, type Database } from '../db/database.js';
import { findUserById, type UserRow } from '../db/repositories/users.js';
import type { UsersTable } from '../db/tables/core.js';
import type { DB } from '../db/types.js';
import { conflict, validationError } from '../http/errors.js';
import { hashPassword } from './passwords.js';
import { pathError } from './paths.js';
import { claimRoute, movePrefix, pathTaken, releaseRoute } from './routes.js';

/**
 * Extra parameters of the admin user API other modules own (SAML identities, provisioning group):
 * each hook validates the request before the user is written and returns what to apply after.
 */
export const adminUserParamHooks: Array<(app: AppContext, params: unknown) => Promise<(userId: number) => Promise<void>>> = [];

/** Fields other modules add to one user as administrators see it (identities, provisioning group). */
export const adminUserPresentHooks: Array<(app: AppContext, userId: number, out: Record<string, unknown>) => Promise<void>> = [];

/** Runs adminUserPresentHooks on a presented user; returns it. */
export async function decorateAdminUser<T extends object>(app: AppContext, userId: number, out: T): Promise<T> {
  for (const hook of adminUserPresentHooks) await hook(app, userId, out as Record<string, unknown>);
  return out;
}

/**
 * The list form of adminUserPresentHooks (GET /users for administrators): each hook gets a whole
 * page, keyed by user id, and loads what it adds in a fixed number of queries. A module that adds
 * fields to one user registers both forms, so lists and single responses show the same fields.
 */
export const adminUsersPresentHooks: Array<(app: AppContext, outs: Map<number, Record<string, unknown>>) => Promise<void>> = [];

/** Runs adminUsersPresentHooks on a page of presented users; returns them in the same order. */
export async function decorateAdminUsers<T extends object>(app: AppContext, items: Array<{ id: number; out: T }>): Promise<T[]> {
  const outs = new Map(items.map((i) => [i.id, i.out as Record<string, unknown>]));
  if (items.length > 0) for (const hook of adminUsersPresentHooks) await hook(app, outs);
  return items.map((i) => i.out);
}

export interface NewUser {
  username: string;
  name: string;
  email: string;
  password?: string | null;
  isAdmin?: boolean;
  userType?: string;
  bio?: string;
  location?: string;
  publicEmail?: string | null;
  websiteUrl?: string;
  organization?: string;
  jobTitle?: string;
  pronouns?: string | null;
  canCreateGroup?: boolean;
  projectsLimit?: number;
  external?: boolean;
  privateProfile?: boolean;
  createdById?: number | null;
  /** Bots get no personal namespace route visible to others, but still need one for projects. */
  namespaceVisibility?: string;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

export function validateUserFields(u: { username?: string; email?: string; password?: string | null; name?: string }): void {
  const errors: Record<string, string[]> = {};
  if (u.username !== undefined) {
    const e = pathError(u.username, { topLevel: true });
    if (e) errors.username = [e];
  }
  if (u.email !== undefined && !EMAIL_RE.test(u.email)) errors.email = ['is invalid'];
  if (u.name !== undefined && u.name.trim() === '') errors.name = ["can't be blank"];
  if (u.name !== undefined && u.name.length > 255) errors.name = ['is too long (maximum is 255 characters)'];
  if (u.password !== undefined && u.password !== null && u.password.length < 8) {
    errors.password = ['is too short (minimum is 8 characters)'];
  }
  if (u.password !== undefined && u.password !== null && u.password.length > 128) {
    errors.password = ['is too long (maximum is 128 characters)'];
  }
  if (Object.keys(errors).length > 0) throw validationError(errors);
}

async function assertFree(trx: Transaction<DB> | Kysely<DB>, username: string | undefined, email: string | undefined, exceptId?: number) {
  if (email !== undefined) {
    const row = await trx
      .selectFrom('users')
      .select('id')
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .executeTakeFirst();
    if (row && row.id !== exceptId) throw conflict('Email has already been taken');
  }
  if (username !== undefined) {
    const row = await trx
      .selectFrom('users')
      .select('id')
      .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
      .executeTakeFirst();
    if (row && row.id !== exceptId) throw conflict('Username has already been taken');
    if (exceptId === undefined && (await pathTaken(trx, username))) throw conflict('Username has already been taken');
  }
}

/** Creates a user with its personal namespace (kind `user`) in one transaction. */
export async function createUser(app: AppContext, input: NewUser, trxIn?: Transaction<DB>): Promise<UserRow> {
  validateUserFields({ username: input.username, email: input.email, password: input.password, name: input.name });
  const digest = input.password ? await hashPassword(input.password) : null;
  const run = async (trx: Transaction<DB>) => {
    await assertFree(trx, input.username, input.email);
    const now = nowIso();
    const user = await trx
      .insertInto('users')
      .values({
        username: input.username,
        name: input.name,
        email: input.email,
        password_digest: digest,
        state: 'active',
        is_admin: input.isAdmin ? 1 : 0,
        user_type: input.userType ?? 'human',
        bio: input.bio ?? '',
        location: input.location ?? '',
        public_email: input.publicEmail ?? null,
        website_url: input.websiteUrl ?? '',
        organization: input.organization ?? '',
        job_title: input.jobTitle ?? '',
        pronouns: input.pronouns ?? null,
        avatar_path: null,
        can_create_group: input.canCreateGroup === false ? 0 : 1,
        projects_limit: input.projectsLimit ?? 100000,
        external: input.external ? 1 : 0,
        private_profile: input.privateProfile ? 1 : 0,
        failed_attempts: 0,
        locked_until: null,
        last_sign_in_at: null,
        current_sign_in_at: null,
        last_activity_on: null,
        confirmed_at: now,
        created_by_id: input.createdById ?? null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const ns = await trx
      .insertInto('namespaces')
      .values({
        name: input.username,
        path: input.username,
        full_path: input.username,
        full_name: input.name,
        kind: 'user',
        parent_id: null,
        traversal: '',
        owner_id: user.id,
        visibility: input.namespaceVisibility ?? 'public',
        description: '',
        avatar_path: null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.updateTable('namespaces').set({ traversal: `/${ns.id}/` }).where('id', '=', ns.id).execute();
    await claimRoute(trx, 'Namespace', ns.id, input.username, input.name);
    return user;
  };
  try {
    return await (trxIn ? run(trxIn) : app.database.transaction(run));
  } catch (err) {
    throw takenConflict(err);
  }
}

/**
 * On PostgreSQL two concurrent requests can both pass assertFree; the unique indexes then decide.
 * Their violation is the same 409 the check would have given, never a 500.
 */
function takenConflict(err: unknown): unknown {
  const e = err as { code?: string; constraint?: string; message?: string };
  const unique = e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE';
  if (!unique) return err;
  const where = `${e.constraint ?? ''} ${e.message ?? ''}`;
  if (/email/i.test(where)) return conflict('Email has already been taken');
  if (/username|routes|namespaces/i.test(where)) return conflict('Username has already been taken');
  return err;
}

export interface UserChanges {
  username?: string;
  name?: string;
  email?: string;
  password?: string;
  isAdmin?: boolean;
  bio?: string;
  location?: string;
  publicEmail?: string | null;
  websiteUrl?: string;
  organization?: string;
  jobTitle?: string;
  pronouns?: string | null;
  canCreateGroup?: boolean;
  projectsLimit?: number;
  external?: boolean;
  privateProfile?: boolean;
}

/** Updates a user; a new username renames the personal namespace and leaves redirects. */
export async function updateUser(app: AppContext, id: number, ch: UserChanges): Promise<UserRow> {
  validateUserFields({ username: ch.username, email: ch.email, password: ch.password, name: ch.name });
  const digest = ch.password ? await hashPassword(ch.password) : undefined;
  try {
    return await updateUserRow(app, id, ch, digest);
  } catch (err) {
    throw takenConflict(err);
  }
}

async function updateUserRow(app: AppContext, id: number, ch: UserChanges, digest: string | undefined): Promise<UserRow> {
  return app.database.transaction(async (trx) => {
    const user = await app.database.forUpdate(trx.selectFrom('users').selectAll().where('id', '=', id)).executeTakeFirstOrThrow();
    await assertFree(trx, ch.username, ch.email, id);
    const set: Updateable<UsersTable> = { updated_at: nowIso() };
    if (ch.name !== undefined) set.name = ch.name;
    if (ch.email !== undefined) set.email = ch.email;
    if (digest !== undefined) set.password_digest = digest;
    if (ch.isAdmin !== undefined) set.is_admin = ch.isAdmin ? 1 : 0;
    if (ch.bio !== undefined) set.bio = ch.bio;
    if (ch.location !== undefined) set.location = ch.location;
    if (ch.publicEmail !== undefined) set.public_email = ch.publicEmail;
    if (ch.websiteUrl !== undefined) set.website_url = ch.websiteUrl;
    if (ch.organization !== undefined) set.organization = ch.organization;
    if (ch.jobTitle !== undefined) set.job_title = ch.jobTitle;
    if (ch.pronouns !== undefined) set.pronouns = ch.pronouns;
    if (ch.canCreateGroup !== undefined) set.can_create_group = ch.canCreateGroup ? 1 : 0;
    if (ch.projectsLimit !== undefined) set.projects_limit = ch.projectsLimit;
    if (ch.external !== undefined) set.external = ch.external ? 1 : 0;
    if (ch.privateProfile !== undefined) set.private_profile = ch.privateProfile ? 1 : 0;
    if (ch.username !== undefined && ch.username !== user.username) {
      const ns = await trx.selectFrom('namespaces').select(['id']).where('kind', '=', 'user').where('owner_id', '=', id).executeTakeFirstOrThrow();
      if (ch.username.toLowerCase() !== user.username.toLowerCase() && (await pathTaken(trx, ch.username))) {
        throw conflict('Username has already been taken');
      }
      set.username = ch.username;
      await movePrefix(trx, user.username, ch.username);
      await trx.updateTable('namespaces').set({ name: ch.username, path: ch.username }).where('id', '=', ns.id).execute();
    }
    if (ch.name !== undefined) {
      await trx.updateTable('namespaces').set({ full_name: ch.name }).where('kind', '=', 'user').where('owner_id', '=', id).execute();
    }
    await trx.updateTable('users').set(set).where('id', '=', id).execute();
    return (await trx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as UserRow;
  });
}

/**
 * Hooks other modules register to remove what a deleted user owns (personal projects, …). They run
 * inside the deletion transaction.
 */
export const userDeletionHooks: Array<(app: AppContext, trx: Transaction<DB>, user: UserRow, namespaceId: number | null) => Promise<void>> = [];

export async function deleteUser(app: AppContext, id: number): Promise<void> {
  await app.database.transaction(async (trx) => {
    const user = await trx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    if (!user) return;
    const ns = await trx.selectFrom('namespaces').select('id').where('kind', '=', 'user').where('owner_id', '=', id).executeTakeFirst();
    for (const hook of userDeletionHooks) await hook(app, trx, user as UserRow, ns?.id ?? null);
    await trx.deleteFrom('personal_access_tokens').where('user_id', '=', id).execute();
    await trx.updateTable('oauth_access_tokens').set({ revoked_at: nowIso() }).where('resource_owner_id', '=', id).where('revoked_at', 'is', null).execute();
    await trx.deleteFrom('members').where('user_id', '=', id).execute();
    if (ns) {
      await releaseRoute(trx, 'Namespace', ns.id);
      await trx.deleteFrom('namespaces').where('id', '=', ns.id).execute();
    }
    await trx.deleteFrom('users').where('id', '=', id).execute();
  });
}

export async function setUserState(app: AppContext, id: number, state: 'active' | 'blocked'): Promise<UserRow | undefined> {
  await app.db.updateTable('users').set({ state, updated_at: nowIso() }).where('id', '=', id).execute();
  return findUserById(app.db, id);
}

/** The personal namespace id of a user. */
const PERSONAL_NAMESPACE_SQL = rawSql("select id from namespaces where kind = 'user' and owner_id = ?");

/**
 * Personal namespace ids by user id, as read. The pair never changes while the user exists: the
 * namespace is created with the user (same transaction) and deleted with it, and ids are not
 * reused, so an entry can only be stale for a deleted user, whom no caller asks about. Per
 * database (tests open many in one process); bounded: cleared when full.
 */
const personalNamespaces = new WeakMap<Database, Map<number, number>>();
const MAX_PERSONAL_NAMESPACES = 10_000;

export async function personalNamespaceId(database: Database, userId: number): Promise<number | null> {
  let known = personalNamespaces.get(database);
  if (!known) personalNamespaces.set(database, (known = new Map()));
  const id = known.get(userId);
  if (id !== undefined) return id;
  const [row] = await database.read<{ id: number }>(PERSONAL_NAMESPACE_SQL, [userId]);
  if (!row) return null;
  if (known.size >= MAX_PERSONAL_NAMESPACES) known.clear();
  known.set(userId, row.id);
  return row.id;
}
