// Access levels (spec document 3 §2.2) and visibility: who may see and do what on namespaces and
// projects. Membership is inherited down the namespace tree; a personal namespace's owner is Owner.
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { UserRow } from '../db/repositories/users.js';
import { todayUtc } from './personal-access-tokens.js';

export const AccessLevel = {
  NO_ACCESS: 0,
  MINIMAL_ACCESS: 5,
  GUEST: 10,
  PLANNER: 15,
  REPORTER: 20,
  SECURITY_MANAGER: 25,
  DEVELOPER: 30,
  MAINTAINER: 40,
  OWNER: 50,
} as const;

export const ACCESS_LEVEL_VALUES = [5, 10, 15, 20, 25, 30, 40, 50] as const;
/** Project memberships cannot be Minimal Access. */
export const PROJECT_ACCESS_LEVEL_VALUES = [10, 15, 20, 25, 30, 40, 50] as const;

export type Visibility = 'public' | 'internal' | 'private';
export const VISIBILITY_LEVEL: Record<Visibility, number> = { private: 0, internal: 10, public: 20 };

export interface NamespaceLike {
  id: number;
  kind: string;
  owner_id: number | null;
  traversal: string;
  visibility: string;
}

export interface ProjectLike {
  id: number;
  namespace_id: number;
  visibility: string;
}

/** Ids from the root to this namespace, parsed from its traversal string ('/1/5/9/'). */
export function ancestorIds(ns: Pick<NamespaceLike, 'id' | 'traversal'>): number[] {
  const ids = ns.traversal.split('/').filter(Boolean).map(Number);
  return ids.length ? ids : [ns.id];
}

/**
 * Extension points for sharing: a module that adds group-to-group or project-to-group links
 * registers a function returning the extra access those links give.
 */
export const namespaceAccessExtensions: Array<(db: Kysely<DB>, userId: number, ns: NamespaceLike) => Promise<number>> = [];
export const projectAccessExtensions: Array<(db: Kysely<DB>, userId: number, project: ProjectLike) => Promise<number>> = [];

/** The user's highest access level on a namespace, inherited from its ancestors. */
export async function namespaceAccess(db: Kysely<DB>, user: UserRow | null, ns: NamespaceLike): Promise<number> {
  if (!user) return 0;
  if (ns.kind === 'user') return ns.owner_id === user.id ? AccessLevel.OWNER : 0;
  const row = await db
    .selectFrom('members')
    .select((eb) => eb.fn.max<number>('access_level').as('level'))
    .where('source_type', '=', 'Namespace')
    .where('source_id', 'in', ancestorIds(ns))
    .where('user_id', '=', user.id)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', todayUtc())]))
    .executeTakeFirst();
  let level = Number(row?.level ?? 0);
  for (const ext of namespaceAccessExtensions) level = Math.max(level, await ext(db, user.id, ns));
  return level;
}

/** The user's highest access level on a project: its own members, then its namespace's. */
export async function projectAccess(db: Kysely<DB>, user: UserRow | null, project: ProjectLike, ns: NamespaceLike): Promise<number> {
  if (!user) return 0;
  const own = await db
    .selectFrom('members')
    .select('access_level')
    .where('source_type', '=', 'Project')
    .where('source_id', '=', project.id)
    .where('user_id', '=', user.id)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', todayUtc())]))
    .executeTakeFirst();
  let level = Math.max(own?.access_level ?? 0, await namespaceAccess(db, user, ns));
  for (const ext of projectAccessExtensions) level = Math.max(level, await ext(db, user.id, project));
  return level;
}

/** Whether a visibility level lets this caller read, before membership is considered. */
export function visibleWithoutMembership(visibility: string, user: UserRow | null): boolean {
  if (visibility === 'public') return true;
  if (visibility === 'internal') return user !== null && user.external !== 1;
  return false;
}

/** Read rule for projects: admins, public, internal for signed-in non-external users, members. */
export function canReadProject(user: UserRow | null, project: ProjectLike, level: number): boolean {
  if (user?.is_admin) return true;
  if (visibleWithoutMembership(project.visibility, user)) return true;
  return level >= AccessLevel.GUEST;
}
