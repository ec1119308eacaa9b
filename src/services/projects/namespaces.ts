// Namespaces as project containers: finding the one a project is created in or moved to, and
// whether the caller may put projects there.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { isDbId, type UserRow } from '../../db/repositories/users.js';
import { notFound, validationError } from '../../http/errors.js';
import { AccessLevel, VISIBILITY_LEVEL, namespaceAccess, type Visibility } from '../access.js';
import { canReadGroup } from '../groups/visibility.js';
import type { NamespaceRow } from './lookup.js';

/** A namespace by numeric id or full path (case-insensitive, following redirects of groups). */
export async function namespaceByRef(db: Kysely<DB>, ref: string): Promise<NamespaceRow | undefined> {
  if (/^\d+$/.test(ref)) {
    const id = Number(ref);
    if (!isDbId(id)) return undefined;
    return db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
  }
  const lower = ref.toLowerCase();
  const route = await db.selectFrom('routes').select(['source_id']).where('path_lower', '=', lower).where('source_type', '=', 'Namespace').executeTakeFirst();
  const redirect = route
    ? undefined
    : await db.selectFrom('redirect_routes').select(['source_id']).where('path_lower', '=', lower).where('source_type', '=', 'Namespace').executeTakeFirst();
  const id = route?.source_id ?? redirect?.source_id;
  if (id === undefined) return undefined;
  return db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function canReadNamespace(db: Kysely<DB>, user: UserRow | null, ns: NamespaceRow): Promise<boolean> {
  if (user?.is_admin) return true;
  if (ns.kind === 'user') return true; // personal namespaces are public; their projects are checked one by one
  // The groups module owns the group read rule (public, internal, members, members of anything below).
  return canReadGroup(db, user, ns);
}

/** Finds a namespace the caller can see, or 404 `Namespace Not Found`. */
export async function findReadableNamespace(db: Kysely<DB>, user: UserRow | null, ref: string): Promise<NamespaceRow> {
  const ns = await namespaceByRef(db, ref);
  if (!ns || !(await canReadNamespace(db, user, ns))) throw notFound('Namespace');
  return ns;
}

/** Who may create (or move) projects into a namespace: its owner, Developers+ of a group, admins. */
export async function canCreateProjectIn(db: Kysely<DB>, user: UserRow, ns: NamespaceRow): Promise<boolean> {
  if (user.is_admin) return true;
  if (ns.kind === 'user') return ns.owner_id === user.id;
  return (await namespaceAccess(db, user, ns)) >= AccessLevel.DEVELOPER;
}

/** A project may not be more visible than the group that holds it (GitLab's visibility_level check). */
export function assertVisibilityAllowed(visibility: string, ns: NamespaceRow): void {
  if (ns.kind !== 'group') return;
  const mine = VISIBILITY_LEVEL[visibility as Visibility] ?? 0;
  const theirs = VISIBILITY_LEVEL[ns.visibility as Visibility] ?? 0;
  if (mine > theirs) {
    throw validationError({ visibility_level: [`${visibility} is not allowed in a ${ns.visibility} group.`] });
  }
}
