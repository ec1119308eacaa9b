// Access requests (GitLab's lib/api/access_requests.rb) for projects and groups: a signed-in user
// who is no member asks to join (where the source allows it); Maintainers (projects) or Owners
// (groups) list, approve (a membership, Developer by default) or deny them; the requester may
// withdraw theirs.
import type { FastifyInstance } from 'fastify';
import { nowIso } from '../../../db/database.js';
import { findUserRefsByIds } from '../../../db/repositories/users.js';
import { apiError, forbidden, notFound } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { loadSettings } from '../../../services/groups/lookup.js';
import { effectiveSettings } from '../../../services/groups/settings.js';
import { addMember, type MemberSource } from '../../../services/members.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { isUniqueViolation } from '../../../services/projects/unique.js';
import { accessRequestTodos, resolveAccessRequestTodos } from '../../../services/todos.js';
import { userDeletionHooks } from '../../../services/users.js';
import { presentMembers } from '../entities/member.js';
import { presentUserBasic } from '../entities/user.js';

type Kind = 'projects' | 'groups';

export interface ResolvedSource {
  source: MemberSource;
  access: number;
  manageLevel: number;
  levels: readonly number[];
}

type Resolve = (c: Ctx, kind: Kind) => Promise<ResolvedSource>;

function requests(c: Ctx, source: MemberSource) {
  return c.app.db.selectFrom('access_requests').selectAll().where('source_type', '=', source.type).where('source_id', '=', source.id);
}

/** Entities::AccessRequester: the user's basic fields, then requested_at. */
async function present(c: Ctx, rows: Array<{ user_id: number; requested_at: string }>): Promise<Record<string, unknown>[]> {
  const users = await findUserRefsByIds(c.app.db, rows.map((r) => r.user_id));
  return rows.flatMap((r) => {
    const u = users.get(r.user_id);
    if (!u) return [];
    const { public_email: _hidden, ...basic } = presentUserBasic(u, { base: c.base });
    return [{ ...basic, requested_at: r.requested_at }];
  });
}

function userIdParam(c: Ctx): number {
  const id = c.params.int('user_id', { required: true })!;
  return id;
}

async function requestOf(c: Ctx, source: MemberSource) {
  const row = await requests(c, source).where('user_id', '=', userIdParam(c)).executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

async function requestsEnabled(c: Ctx, source: MemberSource): Promise<boolean> {
  if (source.type === 'Project') return source.project.request_access_enabled === 1;
  return effectiveSettings((await loadSettings(c.app.db, source.id)).settings).request_access_enabled !== false;
}

export function registerAccessRequestRoutes(app: FastifyInstance, resolve: Resolve): void {
  for (const kind of ['projects', 'groups'] as const) {
    const base = `/${kind}/:id/access_requests`;

    // GET …/access_requests (Maintainers of a project, Owners of a group)
    route(app, 'GET', base, async function listAccessRequests(c) {
      c.requireUser();
      const r = await resolve(c, kind);
      if (r.access < r.manageLevel) throw forbidden();
      return present(c, await paginateOffset(c, requests(c, r.source).orderBy('id', 'asc')));
    });

    // POST …/access_requests: the caller asks to join
    route(app, 'POST', base, async function requestAccess(c) {
      const user = c.requireUser();
      const r = await resolve(c, kind);
      // Members (direct or through a group, administrators too) and sources that do not take requests: 403.
      if (r.access >= AccessLevel.GUEST || user.is_admin || !(await requestsEnabled(c, r.source))) throw forbidden();
      try {
        const row = await c.app.db
          .insertInto('access_requests')
          .values({ source_type: r.source.type, source_id: r.source.id, user_id: user.id, requested_at: nowIso() })
          .returningAll()
          .executeTakeFirstOrThrow();
        // The people who may approve it get a member_access_requested to-do (TodoService).
        await accessRequestTodos(c.app, { type: r.source.type, id: r.source.id }, user.id);
        return (await present(c, [row]))[0];
      } catch (err) {
        if (isUniqueViolation(err)) throw apiError(400, { user_id: ['already exists in source'] });
        throw err;
      }
    });

    // PUT …/access_requests/:user_id/approve (access_level, Developer by default): 201 with the member
    route(app, 'PUT', `${base}/:user_id/approve`, async function approveAccessRequest(c) {
      const actor = c.requireUser();
      const r = await resolve(c, kind);
      const request = await requestOf(c, r.source);
      if (r.access < r.manageLevel) throw forbidden();
      const accessLevel = c.params.intEnum('access_level', r.levels) ?? AccessLevel.DEVELOPER;
      const member = await addMember(c.app, actor, r.access, r.source, request.user_id, { accessLevel, expiresAt: null }, { ip: c.req.ip });
      c.status(201);
      return (await presentMembers(c.app.db, [member], { base: c.base, viewer: c.user }))[0];
    });

    // DELETE …/access_requests/:user_id: denied by a manager or withdrawn by the requester
    route(app, 'DELETE', `${base}/:user_id`, async function denyAccessRequest(c) {
      const actor = c.requireUser();
      const r = await resolve(c, kind);
      const request = await requestOf(c, r.source);
      if (request.user_id !== actor.id && r.access < r.manageLevel) throw forbidden();
      refuseIfModifiedSince(c, request.requested_at);
      await c.app.database.transaction(async (trx) => {
        await trx.deleteFrom('access_requests').where('id', '=', request.id).execute();
        await resolveAccessRequestTodos(trx, { type: r.source.type, id: r.source.id }, request.user_id);
      });
      return undefined;
    });
  }
}

let registered = false;

/** Requests go with their project (a group's in deleteGroup) and with their user. */
export function registerAccessRequestHooks(): void {
  if (registered) return;
  registered = true;
  projectDeletionHooks.push(async function deleteProjectAccessRequests(_app, trx, projectId) {
    await trx.deleteFrom('access_requests').where('source_type', '=', 'Project').where('source_id', '=', projectId).execute();
  });
  userDeletionHooks.push(async function deleteUserAccessRequests(_app, trx, user) {
    await trx.deleteFrom('access_requests').where('user_id', '=', user.id).execute();
  });
}
