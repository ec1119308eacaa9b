// Group and project access tokens: POST/GET/DELETE /groups/:id/access_tokens[/:token_id],
// the same under /projects/:id, and POST …/:token_id/rotate.
import type { FastifyInstance } from 'fastify';
import { apiError, notFound } from '../../../http/errors.js';
import { paginateArray } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import {
  createResourceToken,
  findResourceToken,
  listResourceTokens,
  presentResourceToken,
  RESOURCE_ACCESS_LEVELS,
  revokeResourceToken,
  validateResourceScopes,
  type ResourceRef,
} from '../../../services/groups/access-tokens.js';
import { findGroup } from '../../../services/groups/lookup.js';
import { addDays, rotatePersonalAccessToken, todayUtc } from '../../../services/personal-access-tokens.js';
import { findProject } from '../../../services/projects/lookup.js';
import { fullPath } from '../../../services/projects/lookup.js';

/** The group (Owner needed) or project (Maintainer needed) named by `:id`, and the caller's level. */
async function resource(c: Ctx, kind: 'groups' | 'projects'): Promise<{ ref: ResourceRef; access: number }> {
  c.requireUser();
  if (kind === 'groups') {
    const { group, access } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
    return { ref: { type: 'Namespace', id: group.id, path: group.full_path }, access };
  }
  const { project, namespace, access } = await findProject(c, String(c.params.raw.id ?? ''), { minAccess: AccessLevel.MAINTAINER });
  return { ref: { type: 'Project', id: project.id, path: fullPath(project, namespace) }, access };
}

function tokenId(c: Ctx): number {
  const id = c.params.int('token_id');
  if (id === undefined) throw notFound();
  return id;
}

function register(app: FastifyInstance, kind: 'groups' | 'projects'): void {
  const base = `/${kind}/:id/access_tokens`;
  const label = kind === 'groups' ? 'Group' : 'Project';

  // POST /groups/:id/access_tokens, POST /projects/:id/access_tokens
  route(app, 'POST', base, async (c) => {
    const actor = c.requireUser();
    const { ref, access } = await resource(c, kind);
    const name = c.params.string('name', { required: true, allowBlank: false, max: 255 })!;
    const scopes = c.params.stringArray('scopes', { required: true, comma: true })!;
    validateResourceScopes(scopes);
    const accessLevel = c.params.intEnum('access_level', RESOURCE_ACCESS_LEVELS) ?? AccessLevel.MAINTAINER;
    // A token may not have more access than the person creating it.
    if (accessLevel > access) throw apiError(400, "Access level of the token can't be greater the access level of the user who created the token");
    const expiresAt = c.params.date('expires_at') ?? addDays(todayUtc(), 365);
    if (expiresAt <= todayUtc()) throw apiError(400, 'Expiration date must be in the future');
    if (expiresAt > addDays(todayUtc(), 400)) throw apiError(400, 'Expiration date must be before ' + addDays(todayUtc(), 400));
    const description = c.params.string('description', { max: 255 }) ?? null;
    const { token, record } = await createResourceToken(c.app, actor, ref, { name, description, scopes, accessLevel, expiresAt });
    return presentResourceToken(record, token);
  });

  // GET /groups/:id/access_tokens, GET /projects/:id/access_tokens
  route(app, 'GET', base, async (c) => {
    const { ref } = await resource(c, kind);
    const state = c.params.enum('state', ['active', 'inactive'] as const);
    const tokens = await listResourceTokens(c.app.db, ref, state === undefined ? undefined : state === 'active');
    return paginateArray(c, tokens).map((t) => presentResourceToken(t));
  });

  // GET /groups/:id/access_tokens/:token_id
  route(app, 'GET', `${base}/:token_id`, async (c) => {
    const { ref } = await resource(c, kind);
    const t = await findResourceToken(c.app.db, ref, tokenId(c));
    if (!t) throw notFound(`${label} Access Token`);
    return presentResourceToken(t);
  });

  // DELETE /groups/:id/access_tokens/:token_id
  route(app, 'DELETE', `${base}/:token_id`, async (c) => {
    const actor = c.requireUser();
    const { ref } = await resource(c, kind);
    const t = await findResourceToken(c.app.db, ref, tokenId(c));
    if (!t) throw notFound(`${label} Access Token`);
    await revokeResourceToken(c.app, actor, t);
    return undefined;
  });

  // POST /groups/:id/access_tokens/:token_id/rotate
  route(app, 'POST', `${base}/:token_id/rotate`, async (c) => {
    const { ref } = await resource(c, kind);
    const t = await findResourceToken(c.app.db, ref, tokenId(c));
    if (!t) throw notFound(`${label} Access Token`);
    const rotated = await rotatePersonalAccessToken(c.app, t.row.id, c.params.date('expires_at'));
    if (rotated === 'not_active') throw apiError(400, 'Token already revoked or expired');
    await c.app.db
      .updateTable('members')
      .set({ expires_at: rotated.row.expires_at })
      .where('user_id', '=', t.row.user_id)
      .where('source_type', '=', ref.type)
      .where('source_id', '=', ref.id)
      .execute();
    c.status(200);
    return presentResourceToken(Object.assign({}, t, { row: rotated.row }), rotated.token);
  });
}

export function registerAccessTokenRoutes(app: FastifyInstance): void {
  register(app, 'groups');
  register(app, 'projects');
}
