// Project and group memberships: listing (direct, and with inherited members), adding, changing
// and removing, with GitLab's rules on who may grant what.
import type { Kysely, Selectable } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { UserRow } from '../db/repositories/users.js';
import type { MembersTable } from '../db/tables/core.js';
import type { DB } from '../db/types.js';
import { conflict, forbidden, notFound, validationError } from '../http/errors.js';
import { AccessLevel, ancestorIds } from './access.js';
import type { NamespaceRow, ProjectRow } from './projects/lookup.js';
import { resolveAccessRequestTodos } from './todos.js';
import { onUniqueViolation } from './projects/unique.js';
import { recordAudit } from './audit.js';
import { insertEvents } from './event-rows.js';
import { containsCi } from '../db/sql-helpers.js';
import { todayUtc } from './personal-access-tokens.js';

export type MemberRow = Selectable<MembersTable>;

/** What a membership belongs to: a project (with its namespace) or a group. */
export type MemberSource =
  | { type: 'Project'; id: number; project: ProjectRow; namespace: NamespaceRow }
  | { type: 'Namespace'; id: number; namespace: NamespaceRow };

export const ACCESS_LEVEL_NAMES: Record<number, string> = {
  5: 'Minimal Access',
  10: 'Guest',
  15: 'Planner',
  20: 'Reporter',
  25: 'Security Manager',
  30: 'Developer',
  40: 'Maintainer',
  50: 'Owner',
};

/** Memberships that still count: no expiry date, or one in the future. */
export function activeOnly<Q extends { where: (...args: any[]) => Q }>(q: Q): Q {
  return q.where((eb: any) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', todayUtc())]));
}

/** The groups above a source whose members are inherited (for a group: its ancestors, not itself). */
function inheritedNamespaceIds(source: MemberSource): number[] {
  if (source.type === 'Project') return source.namespace.kind === 'group' ? ancestorIds(source.namespace) : [];
  return ancestorIds(source.namespace).filter((id) => id !== source.namespace.id);
}

export interface MemberFilters {
  query?: string;
  userIds?: number[];
  skipUsers?: number[];
}

/** Direct memberships of a source as a query (for offset pagination). */
export function directMembersQuery(db: Kysely<DB>, source: MemberSource, f: MemberFilters) {
  let q = activeOnly(db.selectFrom('members').selectAll('members').where('members.source_type', '=', source.type).where('members.source_id', '=', source.id));
  q = applyMemberFilters(db, q, f);
  return q.orderBy('members.id', 'asc');
}

function applyMemberFilters<Q extends { where: (...args: any[]) => Q }>(db: Kysely<DB>, q: Q, f: MemberFilters): Q {
  let out = q;
  if (f.userIds?.length) out = out.where('members.user_id', 'in', f.userIds);
  if (f.skipUsers?.length) out = out.where('members.user_id', 'not in', f.skipUsers);
  if (f.query) {
    // containsCi adds `ESCAPE '\'`: SQLite has no default LIKE escape, so '_' and '%' matched anything.
    const needle = f.query;
    out = out.where('members.user_id', 'in', (db as Kysely<DB>)
      .selectFrom('users')
      .select('users.id')
      .where((eb) => eb.or([containsCi('users.name', needle), containsCi('users.username', needle)])));
  }
  return out;
}

/**
 * Groups whose members reach a source through a share, each with the highest level the share
 * grants (GitLab's `invited_groups` and `shared_into_ancestors` for a project, `shared_from_groups`
 * for a group). The sharing modules register these beside their access rules, so `/members/all`
 * lists who has access through a share, at the level the access rules give them. As in GitLab, a
 * group the viewer cannot see is left out (for a project's own shares, unless the viewer is a
 * member of the project), so the list does not tell who belongs to a hidden group.
 */
export const sharedMemberGroups: Array<(db: Kysely<DB>, source: MemberSource, viewer: UserRow | null) => Promise<Array<{ groupIds: number[]; cap: number }>>> = [];

/**
 * Direct, inherited and shared members, one row per user with the highest access level (GitLab's
 * /members/all). Inherited and shared rows keep their own source; a shared row's access level is
 * capped at what its share grants, and Minimal Access members of a shared group are left out (as
 * GitLab does: that level reads nothing here). On equal levels a direct row wins, then an
 * inherited one.
 */
export async function allMembers(db: Kysely<DB>, source: MemberSource, f: MemberFilters, viewer: UserRow | null): Promise<MemberRow[]> {
  const groups = inheritedNamespaceIds(source);
  let q = activeOnly(db.selectFrom('members').selectAll('members')).where((eb) =>
    eb.or([
      eb.and([eb('members.source_type', '=', source.type), eb('members.source_id', '=', source.id)]),
      ...(groups.length ? [eb.and([eb('members.source_type', '=', 'Namespace'), eb('members.source_id', 'in', groups)])] : []),
    ]),
  );
  q = applyMemberFilters(db, q, f);
  const rows = await q.orderBy('members.id', 'asc').execute();
  const best = new Map<number, { row: MemberRow; rank: number }>();
  const consider = (row: MemberRow, rank: number) => {
    const prev = best.get(row.user_id);
    if (!prev || row.access_level > prev.row.access_level || (row.access_level === prev.row.access_level && rank < prev.rank)) best.set(row.user_id, { row, rank });
  };
  for (const r of rows) consider(r, r.source_type === source.type && r.source_id === source.id ? 0 : 1);
  const shares = (await Promise.all(sharedMemberGroups.map((find) => find(db, source, viewer)))).flat();
  if (shares.some((sh) => sh.groupIds.length > 0)) {
    // The highest cap per group whose members a share reaches.
    const caps = new Map<number, number>();
    for (const s of shares) for (const id of s.groupIds) caps.set(id, Math.max(caps.get(id) ?? 0, s.cap));
    const sharedQuery = db.selectFrom('members').selectAll('members').where('members.source_type', '=', 'Namespace').where('members.source_id', 'in', [...caps.keys()]);
    const shared = await applyMemberFilters(db, activeOnly(sharedQuery.where('members.access_level', '>=', AccessLevel.GUEST)), f)
      .orderBy('members.id', 'asc')
      .execute();
    for (const r of shared) consider({ ...r, access_level: Math.min(r.access_level, caps.get(r.source_id) ?? 0) }, 2);
  }
  return [...best.values()].map((b) => b.row).sort((a, b) => a.id - b.id);
}

export async function findDirectMember(db: Kysely<DB>, source: MemberSource, userId: number): Promise<MemberRow | undefined> {
  return activeOnly(db.selectFrom('members').selectAll('members').where('members.source_type', '=', source.type).where('members.source_id', '=', source.id).where('members.user_id', '=', userId)).executeTakeFirst();
}

/** Highest level the user inherits from the groups above the source (0 when none). */
async function inheritedLevel(db: Kysely<DB>, source: MemberSource, userId: number): Promise<{ level: number; group: string | null }> {
  const groups = inheritedNamespaceIds(source);
  if (!groups.length) return { level: 0, group: null };
  const rows = await activeOnly(db.selectFrom('members').select(['members.access_level', 'members.source_id']).where('members.source_type', '=', 'Namespace').where('members.source_id', 'in', groups).where('members.user_id', '=', userId)).execute();
  let best = { level: 0, group: null as string | null, id: 0 };
  for (const r of rows) if (r.access_level > best.level) best = { level: r.access_level, group: null, id: r.source_id };
  if (best.id) {
    const ns = await db.selectFrom('namespaces').select('name').where('id', '=', best.id).executeTakeFirst();
    best.group = ns?.name ?? null;
  }
  return best;
}

/** The personal namespace's owner always stays Owner of the projects in it. */
function isPersonalOwner(source: MemberSource, userId: number): boolean {
  return source.type === 'Project' && source.namespace.kind === 'user' && source.namespace.owner_id === userId;
}

function assertMayGrant(actorAccess: number, level: number): void {
  // Only Owners (and administrators, who act as Owner) may hand out or take back Owner.
  if (level >= AccessLevel.OWNER && actorAccess < AccessLevel.OWNER) throw forbidden();
}

function assertExpiry(expiresAt: string | null | undefined): void {
  if (expiresAt && expiresAt <= todayUtc()) throw validationError({ expires_at: ['cannot be a date in the past or today'] });
}

async function assertInheritance(db: Kysely<DB>, source: MemberSource, userId: number, level: number): Promise<void> {
  const inherited = await inheritedLevel(db, source, userId);
  if (inherited.level > level) {
    throw validationError({
      access_level: [`should be greater than or equal to ${ACCESS_LEVEL_NAMES[inherited.level]} inherited membership from group ${inherited.group ?? ''}`.trim()],
    });
  }
}

/**
 * Serialises membership changes of one source: the source's own row is locked first (PostgreSQL;
 * SQLite's BEGIN IMMEDIATE already serialises), so two changes never lock member rows in opposite
 * orders (a deadlock) nor both pass the last-Owner check.
 */
async function lockSource(app: AppContext, trx: Kysely<DB>, source: MemberSource): Promise<void> {
  const table = source.type === 'Project' ? 'projects' : 'namespaces';
  await app.database.forUpdate(trx.selectFrom(table).select('id').where('id', '=', source.id)).execute();
}

/** A group must keep at least one Owner. */
async function assertNotLastOwner(db: Kysely<DB>, source: MemberSource, member: MemberRow): Promise<void> {
  if (source.type !== 'Namespace' || member.access_level < AccessLevel.OWNER) return;
  // Callers hold the source's lock (lockSource), so the count cannot change under us.
  const owners = await activeOnly(db.selectFrom('members').select('members.id').where('members.source_type', '=', 'Namespace').where('members.source_id', '=', source.id).where('members.access_level', '>=', AccessLevel.OWNER)).execute();
  if (owners.length <= 1) throw forbidden();
}

export interface MemberChange {
  accessLevel: number;
  expiresAt?: string | null;
}

/** Who made a membership change and from where, for its audit event. */
export interface MemberAuditCtx {
  actor?: UserRow | null;
  ip?: string | null;
}

/** Records a membership change against the project or group, in the change's transaction. */
async function auditMember(trx: Kysely<DB>, source: MemberSource, actor: UserRow | null | undefined, ip: string | null | undefined, userId: number, eventName: string, details: Record<string, unknown>): Promise<void> {
  const user = await trx.selectFrom('users').select(['username']).where('id', '=', userId).executeTakeFirst();
  const entity = source.type === 'Project'
    ? { entityType: 'Project' as const, entityPath: `${source.namespace.full_path}/${source.project.path}` }
    : { entityType: 'Group' as const, entityPath: source.namespace.full_path };
  await recordAudit(trx, { author: actor ?? null, ...entity, entityId: source.id, eventName, targetType: 'User', targetId: userId, targetDetails: user?.username ?? null, details, ipAddress: ip ?? null });
}

export async function addMember(app: AppContext, actor: UserRow, actorAccess: number, source: MemberSource, userId: number, change: MemberChange, audit: MemberAuditCtx = {}): Promise<MemberRow> {
  assertMayGrant(actorAccess, change.accessLevel);
  assertExpiry(change.expiresAt);
  const user = await app.db.selectFrom('users').select(['id']).where('id', '=', userId).executeTakeFirst();
  if (!user) throw notFound('User');
  await assertInheritance(app.db, source, userId, change.accessLevel);
  return onUniqueViolation(() => app.database.transaction(async (trx) => {
    const existing = await app.database
      .forUpdate(trx.selectFrom('members').selectAll().where('source_type', '=', source.type).where('source_id', '=', source.id).where('user_id', '=', userId))
      .executeTakeFirst();
    if (existing) {
      // An expired membership is gone for every purpose, so it does not block a new one.
      if (existing.expires_at === null || existing.expires_at > todayUtc()) throw conflict('Member already exists');
      await trx.deleteFrom('members').where('id', '=', existing.id).execute();
    }
    const now = nowIso();
    const row = await trx
      .insertInto('members')
      .values({ source_type: source.type, source_id: source.id, user_id: userId, access_level: change.accessLevel, expires_at: change.expiresAt ?? null, created_by_id: actor.id, member_role_id: null, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    // A pending access request is answered by the membership (GitLab keeps both in one row).
    await trx.deleteFrom('access_requests').where('source_type', '=', source.type).where('source_id', '=', source.id).where('user_id', '=', userId).execute();
    await resolveAccessRequestTodos(trx, { type: source.type, id: source.id }, userId);
    // GitLab's join_project: a project's new member "joined" it (the member is the event's author).
    if (source.type === 'Project') await insertEvents(trx, [{ projectId: source.id, authorId: userId, action: 'joined', targetType: 'Project', targetId: source.id }]);
    await auditMember(trx, source, actor, audit.ip, userId, 'member_created', { add: 'user_access', as: ACCESS_LEVEL_NAMES[change.accessLevel] ?? String(change.accessLevel), expires_at: change.expiresAt ?? null });
    return row;
  }), () => conflict('Member already exists'));
}

export async function updateMember(app: AppContext, actorAccess: number, source: MemberSource, userId: number, change: Partial<MemberChange>, audit: MemberAuditCtx = {}): Promise<MemberRow> {
  // Read, check and write in one transaction: the last-Owner rule is a read-then-write.
  return app.database.transaction(async (trx) => {
    await lockSource(app, trx, source);
    const member = await app.database.forUpdate(activeOnly(trx.selectFrom('members').selectAll('members').where('members.source_type', '=', source.type).where('members.source_id', '=', source.id).where('members.user_id', '=', userId))).executeTakeFirst();
    if (!member) throw notFound('Member');
    // A Maintainer can neither change an Owner nor make someone Owner.
    assertMayGrant(actorAccess, member.access_level);
    if (change.accessLevel !== undefined) {
      assertMayGrant(actorAccess, change.accessLevel);
      if (change.accessLevel < member.access_level) {
        if (isPersonalOwner(source, userId)) throw forbidden();
        await assertNotLastOwner(trx, source, member);
      }
      await assertInheritance(trx, source, userId, change.accessLevel);
    }
    assertExpiry(change.expiresAt);
    await trx
      .updateTable('members')
      .set(Object.assign({}, (change.accessLevel !== undefined ? { access_level: change.accessLevel } : {}), Object.assign({}, (change.expiresAt !== undefined ? { expires_at: change.expiresAt } : {}), {
        updated_at: nowIso(),
      })))
      .where('id', '=', member.id)
      .execute();
    const level = change.accessLevel ?? member.access_level;
    await auditMember(trx, source, audit.actor, audit.ip, userId, 'member_updated', {
      change: 'access_level',
      from: ACCESS_LEVEL_NAMES[member.access_level] ?? String(member.access_level),
      to: ACCESS_LEVEL_NAMES[level] ?? String(level),
      expiry_from: member.expires_at,
      expiry_to: change.expiresAt !== undefined ? change.expiresAt : member.expires_at,
    });
    return (await trx.selectFrom('members').selectAll().where('id', '=', member.id).executeTakeFirst())!;
  });
}

/** Removes a membership. Members may leave on their own; managers need the source's manage level. */
export async function removeMember(app: AppContext, actor: UserRow, actorAccess: number, manageLevel: number, source: MemberSource, userId: number, audit: MemberAuditCtx = {}): Promise<void> {
  await app.database.transaction(async (trx) => {
    await lockSource(app, trx, source);
    const member = await app.database.forUpdate(activeOnly(trx.selectFrom('members').selectAll('members').where('members.source_type', '=', source.type).where('members.source_id', '=', source.id).where('members.user_id', '=', userId))).executeTakeFirst();
    if (!member) throw notFound('Member');
    const self = actor.id === userId;
    if (!self) {
      if (actorAccess < manageLevel) throw forbidden();
      assertMayGrant(actorAccess, member.access_level);
    }
    if (isPersonalOwner(source, userId)) throw forbidden();
    await assertNotLastOwner(trx, source, member);
    await trx.deleteFrom('members').where('id', '=', member.id).execute();
    if (source.type === 'Project') await insertEvents(trx, [{ projectId: source.id, authorId: userId, action: 'left', targetType: 'Project', targetId: source.id }]);
    await auditMember(trx, source, actor, audit.ip, userId, 'member_destroyed', { remove: 'user_access', as: ACCESS_LEVEL_NAMES[member.access_level] ?? String(member.access_level) });
  });
}
