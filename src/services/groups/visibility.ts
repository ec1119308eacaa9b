// Who can see and act on which groups: grants from memberships (inherited down the tree) and from
// group sharing, and the SQL filter lists use so an outsider never sees a private group.
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { AccessLevel, ancestorIds, namespaceAccess, namespaceAccessExtensions, type NamespaceLike } from '../access.js';
import { todayUtc } from '../personal-access-tokens.js';
import { sharedMemberGroups } from '../members.js';

export interface Grant {
  /** Traversal prefix ('/1/5/'): the group and everything below it. */
  traversal: string;
  level: number;
}

/**
 * Every traversal prefix the user holds a level on: direct group memberships, and groups shared
 * with a group the user belongs to (the lower of the link's level and the member's).
 */
export async function userGrants(db: Kysely<DB>, userId: number): Promise<Grant[]> {
  const direct = await db
    .selectFrom('members')
    .innerJoin('namespaces', 'namespaces.id', 'members.source_id')
    .select(['namespaces.traversal', 'members.access_level'])
    .where('members.source_type', '=', 'Namespace')
    .where('members.user_id', '=', userId)
    .where('namespaces.kind', '=', 'group')
    .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', todayUtc())]))
    .execute();
  const grants: Grant[] = direct.map((d) => ({ traversal: d.traversal, level: d.access_level }));
  if (grants.length === 0) return grants;
  const links = await db
    .selectFrom('group_group_links')
    .innerJoin('namespaces as shared', 'shared.id', 'group_group_links.shared_group_id')
    .innerJoin('namespaces as with', 'with.id', 'group_group_links.shared_with_group_id')
    .select(['shared.traversal as shared_traversal', 'with.traversal as with_traversal', 'group_group_links.group_access'])
    .where((eb) => eb.or([eb('group_group_links.expires_at', 'is', null), eb('group_group_links.expires_at', '>', todayUtc())]))
    .where((eb) => eb.or(coveringPrefixes(grants).map((t) => eb('with.traversal', 'like', `${t}%`))))
    .execute();
  for (const l of links) {
    const memberLevel = Math.max(...grants.filter((g) => l.with_traversal.startsWith(g.traversal)).map((g) => g.level));
    grants.push({ traversal: l.shared_traversal, level: Math.min(l.group_access, memberLevel) });
  }
  return grants;
}

/**
 * The traversal prefixes of the grants without those under another one: the same subtrees in
 * fewer LIKE terms (a member of a group and of its 250 subgroups needs one term, not 251).
 */
export function coveringPrefixes(grants: Grant[]): string[] {
  const sorted = [...new Set(grants.map((g) => g.traversal))].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const t of sorted) if (!kept.some((k) => t.startsWith(k))) kept.push(t);
  return kept;
}

export function grantedLevel(grants: Grant[], traversal: string): number {
  let level = 0;
  for (const g of grants) if (traversal.startsWith(g.traversal) && g.level > level) level = g.level;
  return level;
}

/** Ids of the ancestors of granted groups: a member of a subgroup may see its parents. */
export function ancestorIdsOfGrants(grants: Grant[]): number[] {
  const ids = new Set<number>();
  for (const g of grants) for (const id of g.traversal.split('/').filter(Boolean)) ids.add(Number(id));
  return [...ids];
}

type NsEB = ExpressionBuilder<DB, 'namespaces'>;

/** Condition: the namespace lies under one of the grants with at least `minLevel`. */
export function underGrants(eb: NsEB, grants: Grant[], minLevel = 1): Expression<SqlBool> {
  const ok = grants.filter((g) => g.level >= minLevel);
  if (ok.length === 0) return sql<SqlBool>`1 = 0`;
  return eb.or(coveringPrefixes(ok).map((t) => eb('namespaces.traversal', 'like', `${t}%`)));
}

/** Condition: the caller can see this group (admins see all; callers pass grants of the user). */
export function visibleGroups(eb: NsEB, user: UserRow | null, grants: Grant[]): Expression<SqlBool> {
  if (user?.is_admin) return sql<SqlBool>`1 = 1`;
  const ors: Expression<SqlBool>[] = [eb('namespaces.visibility', '=', 'public')];
  if (user && !user.external) ors.push(eb('namespaces.visibility', '=', 'internal'));
  if (grants.length) {
    ors.push(underGrants(eb, grants));
    ors.push(eb('namespaces.id', 'in', ancestorIdsOfGrants(grants)));
  }
  return eb.or(ors);
}

/**
 * Whether the caller can see group `g` (the rule of visibleGroups, for a row in hand): by its
 * visibility alone, else by the caller's grants, which `grants` reads only when they are needed.
 */
export async function groupVisibleTo(
  user: UserRow | null | undefined,
  g: { id: number; visibility: string; traversal: string },
  grants: () => Promise<Grant[]>,
): Promise<boolean> {
  if (user?.is_admin || g.visibility === 'public') return true;
  if (!user) return false;
  if (g.visibility === 'internal' && !user.external) return true;
  const held = await grants();
  return grantedLevel(held, g.traversal) > 0 || ancestorIdsOfGrants(held).includes(g.id);
}

/** The caller's grants, read once, on first use. */
export function lazyGrants(db: Kysely<DB>, user: UserRow | null | undefined): () => Promise<Grant[]> {
  let read: Promise<Grant[]> | undefined;
  return () => (read ??= user ? userGrants(db, user.id) : Promise.resolve([]));
}

/** Which of these groups the caller can see (visibleGroups, for a list of ids). */
export async function visibleGroupIds(db: Kysely<DB>, user: UserRow | null, ids: number[]): Promise<Set<number>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Set();
  if (user?.is_admin) return new Set(unique);
  const grants = user ? await userGrants(db, user.id) : [];
  const rows = await db
    .selectFrom('namespaces')
    .select('namespaces.id')
    .where('namespaces.id', 'in', unique)
    .where('namespaces.kind', '=', 'group')
    .where((eb) => visibleGroups(eb, user, grants))
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Group-level access including sharing, for one group (admins are handled by callers). */
export async function groupAccess(db: Kysely<DB>, user: UserRow | null, ns: NamespaceLike): Promise<number> {
  return namespaceAccess(db, user, ns);
}

/** Read rule for one group: admin, public, internal for non-external users, granted, or ancestor of granted. */
export async function canReadGroup(db: Kysely<DB>, user: UserRow | null, ns: NamespaceLike): Promise<boolean> {
  if (user?.is_admin) return true;
  if (ns.visibility === 'public') return true;
  if (!user) return false;
  if (ns.visibility === 'internal' && !user.external) return true;
  if ((await namespaceAccess(db, user, ns)) >= AccessLevel.MINIMAL_ACCESS) return true;
  // Membership somewhere below makes the ancestors visible.
  const below = await db
    .selectFrom('members')
    .innerJoin('namespaces', 'namespaces.id', 'members.source_id')
    .select('members.id')
    .where('members.source_type', '=', 'Namespace')
    .where('members.user_id', '=', user.id)
    .where('namespaces.traversal', 'like', `${ns.traversal}%`)
    .executeTakeFirst();
  if (below) return true;
  return hasProjectBelow(db, user.id, ns.traversal);
}

async function hasProjectBelow(db: Kysely<DB>, userId: number, traversal: string): Promise<boolean> {
  const row = await db
    .selectFrom('members')
    .innerJoin('projects', 'projects.id', 'members.source_id')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select('members.id')
    .where('members.source_type', '=', 'Project')
    .where('members.user_id', '=', userId)
    .where('namespaces.traversal', 'like', `${traversal}%`)
    .executeTakeFirst();
  return row !== undefined;
}

/** The live shares of a group or of any of its ancestors: the group shared with, and the level granted. */
function groupSharesInto(db: Kysely<DB>, ns: NamespaceLike) {
  return db
    .selectFrom('group_group_links')
    .innerJoin('namespaces as with', 'with.id', 'group_group_links.shared_with_group_id')
    .select(['with.traversal', 'with.id', 'group_group_links.group_access'])
    .where('group_group_links.shared_group_id', 'in', ancestorIds(ns))
    .where((eb) => eb.or([eb('group_group_links.expires_at', 'is', null), eb('group_group_links.expires_at', '>', todayUtc())]))
    .execute();
}

let registered = false;

/** Registers group sharing with the access rules so shared access counts everywhere. */
export function registerGroupSharingAccess(): void {
  if (registered) return;
  registered = true;
  namespaceAccessExtensions.push(async function sharedGroupAccess(db, userId, ns) {
    if (ns.kind !== 'group') return 0;
    const links = await groupSharesInto(db, ns);
    let level = 0;
    for (const l of links) {
      const row = await db
        .selectFrom('members')
        .select((eb) => eb.fn.max<number>('access_level').as('level'))
        .where('source_type', '=', 'Namespace')
        .where('source_id', 'in', ancestorIds({ id: l.id, traversal: l.traversal }))
        .where('user_id', '=', userId)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', todayUtc())]))
        .executeTakeFirst();
      const member = Number(row?.level ?? 0);
      if (member > 0) level = Math.max(level, Math.min(member, l.group_access));
    }
    return level;
  });
  // /members/all of a group, or of a project in it, lists the members of the groups it (or an
  // ancestor) is shared with, and of their ancestors, as sharedGroupAccess grants them access.
  // Only the groups the viewer can see (GitLab's `public_or_visible_to_user`).
  sharedMemberGroups.push(async function groupShareMembers(db, source, viewer) {
    if (source.namespace.kind !== 'group') return [];
    const links = await groupSharesInto(db, source.namespace);
    if (links.length === 0) return [];
    const visible = await visibleGroupIds(db, viewer, links.flatMap((l) => ancestorIds({ id: l.id, traversal: l.traversal })));
    return links.map((l) => ({ groupIds: ancestorIds({ id: l.id, traversal: l.traversal }).filter((id) => visible.has(id)), cap: l.group_access }));
  });
}
