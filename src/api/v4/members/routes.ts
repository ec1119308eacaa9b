// Project and group members (GitLab's lib/api/members.rb): the same routes for both sources.
import type { FastifyInstance } from 'fastify';
import { forbidden, notFound } from '../../../http/errors.js';
import { resolveId } from '../../../http/ids.js';
import { paginateArray, paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { ACCESS_LEVEL_VALUES, AccessLevel, PROJECT_ACCESS_LEVEL_VALUES, namespaceAccess } from '../../../services/access.js';
import { addMember, allMembers, directMembersQuery, findDirectMember, removeMember, updateMember, type MemberFilters, type MemberSource } from '../../../services/members.js';
import { findProject } from '../../../services/projects/lookup.js';
import { canReadGroup } from '../../../services/groups/visibility.js';
import { presentMembers } from '../entities/member.js';
import { registerAccessRequestHooks, registerAccessRequestRoutes } from './access-requests.js';

type Kind = 'projects' | 'groups';

interface Resolved {
  source: MemberSource;
  /** The caller's effective level on the source (administrators count as Owner). */
  access: number;
  /** Level needed to add, change and remove others: Maintainer on projects, Owner on groups. */
  manageLevel: number;
  levels: readonly number[];
}

async function findGroupSource(c: Ctx, rawId: string): Promise<Resolved> {
  const id = await resolveId(c, 'Namespace', rawId, { allowTopLevelPath: true });
  const ns = id === null ? undefined : await c.app.db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
  if (!ns || ns.kind !== 'group' || !(await canReadGroup(c.app.db, c.user, ns))) throw notFound('Group');
  const access = c.user?.is_admin ? AccessLevel.OWNER : await namespaceAccess(c.app.db, c.user, ns);
  return { source: { type: 'Namespace', id: ns.id, namespace: ns }, access, manageLevel: AccessLevel.OWNER, levels: ACCESS_LEVEL_VALUES };
}

async function resolveSource(c: Ctx, kind: Kind): Promise<Resolved> {
  const rawId = c.params.raw.id as string;
  if (kind === 'groups') return findGroupSource(c, rawId);
  const { project, namespace, access } = await findProject(c, rawId);
  return { source: { type: 'Project', id: project.id, project, namespace }, access, manageLevel: AccessLevel.MAINTAINER, levels: PROJECT_ACCESS_LEVEL_VALUES };
}

function readFilters(c: Ctx): MemberFilters {
  return {
    query: c.params.string('query') || undefined,
    userIds: c.params.intArray('user_ids', { comma: true }),
    skipUsers: c.params.intArray('skip_users', { comma: true }),
  };
}

function userIdParam(c: Ctx): number {
  const id = c.params.int('user_id', { required: true });
  if (id === undefined || id <= 0) throw notFound('Member');
  return id;
}

/** The user to add: `user_id`, or (as newer GitLab accepts) `username`. */
async function memberUserId(c: Ctx): Promise<number> {
  const userId = c.params.int('user_id');
  if (userId !== undefined) return userId;
  c.params.requireAtLeastOne(['user_id', 'username']);
  const username = c.params.string('username', { required: true })!;
  const u = await c.app.db
    .selectFrom('users')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
    .executeTakeFirst();
  if (!u) throw notFound('User');
  return u.id;
}

function registerFor(app: FastifyInstance, kind: Kind): void {
  const base = `/${kind}/:id/members`;

  // GET /projects/:id/members and GET /groups/:id/members
  route(app, 'GET', base, async (c) => {
    const r = await resolveSource(c, kind);
    const rows = await paginateOffset(c, directMembersQuery(c.app.db, r.source, readFilters(c)));
    return presentMembers(c.app.db, rows, { base: c.base, viewer: c.user });
  });

  // GET /projects/:id/members/all and GET /groups/:id/members/all
  route(app, 'GET', `${base}/all`, async (c) => {
    const r = await resolveSource(c, kind);
    const rows = paginateArray(c, await allMembers(c.app.db, r.source, readFilters(c), c.user));
    return presentMembers(c.app.db, rows, { base: c.base, viewer: c.user });
  });

  // GET /projects/:id/members/all/:user_id and GET /groups/:id/members/all/:user_id
  route(app, 'GET', `${base}/all/:user_id`, async (c) => {
    const r = await resolveSource(c, kind);
    const userId = userIdParam(c);
    const rows = await allMembers(c.app.db, r.source, { userIds: [userId] }, c.user);
    if (!rows.length) throw notFound('Member');
    return (await presentMembers(c.app.db, rows, { base: c.base, viewer: c.user }))[0];
  });

  // GET /projects/:id/members/:user_id and GET /groups/:id/members/:user_id
  route(app, 'GET', `${base}/:user_id`, async (c) => {
    const r = await resolveSource(c, kind);
    const member = await findDirectMember(c.app.db, r.source, userIdParam(c));
    if (!member) throw notFound('Member');
    return (await presentMembers(c.app.db, [member], { base: c.base, viewer: c.user }))[0];
  });

  // POST /projects/:id/members and POST /groups/:id/members
  route(app, 'POST', base, async (c) => {
    const r = await resolveSource(c, kind);
    const actor = c.requireUser();
    if (r.access < r.manageLevel) throw forbidden();
    const accessLevel = c.params.intEnum('access_level', r.levels, { required: true })!;
    const userId = await memberUserId(c);
    const member = await addMember(c.app, actor, r.access, r.source, userId, { accessLevel, expiresAt: c.params.date('expires_at') ?? null }, { ip: c.req.ip });
    return (await presentMembers(c.app.db, [member], { base: c.base, viewer: c.user }))[0];
  });

  // PUT /projects/:id/members/:user_id and PUT /groups/:id/members/:user_id
  route(app, 'PUT', `${base}/:user_id`, async (c) => {
    const r = await resolveSource(c, kind);
    const actor = c.requireUser();
    if (r.access < r.manageLevel) throw forbidden();
    const userId = userIdParam(c);
    const accessLevel = c.params.intEnum('access_level', r.levels, { required: true })!;
    const expiresAt = c.params.has('expires_at') ? (c.params.date('expires_at') ?? null) : undefined;
    const member = await updateMember(c.app, r.access, r.source, userId, { accessLevel, expiresAt }, { actor, ip: c.req.ip });
    return (await presentMembers(c.app.db, [member], { base: c.base, viewer: c.user }))[0];
  });

  // DELETE /projects/:id/members/:user_id and DELETE /groups/:id/members/:user_id
  route(app, 'DELETE', `${base}/:user_id`, async (c) => {
    const r = await resolveSource(c, kind);
    const actor = c.requireUser();
    await removeMember(c.app, actor, r.access, r.manageLevel, r.source, userIdParam(c), { ip: c.req.ip });
    return undefined;
  });
}

export function registerMemberRoutes(app: FastifyInstance): void {
  registerAccessRequestHooks();
  registerAccessRequestRoutes(app, resolveSource);
  registerFor(app, 'projects');
  registerFor(app, 'groups');
}
