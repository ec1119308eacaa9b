// Personal access tokens: admin creation for a user, self creation, listing, get, revoke, rotate.
import type { FastifyInstance } from 'fastify';
import type { Selectable, SelectQueryBuilder } from 'kysely';
import type { DB } from '../../../db/types.js';
import { findUserById } from '../../../db/repositories/users.js';
import { containsCi } from '../../../db/sql-helpers.js';
import { badRequest, notFound, paramError, unauthorized } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { MAX_DB_INT } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import {
  addDays,
  createPersonalAccessToken,
  revokePersonalAccessToken,
  rotatePersonalAccessToken,
  todayUtc,
  validateScopes,
  type PatRow,
} from '../../../services/personal-access-tokens.js';
import { presentImpersonationToken, presentImpersonationTokenWithToken, presentPersonalAccessToken, presentPersonalAccessTokenWithToken } from '../entities/personal-access-token.js';

function readNewToken(c: Ctx) {
  const name = c.params.string('name', { required: true, allowBlank: false, max: 255 })!;
  const scopes = c.params.stringArray('scopes', { required: true, comma: true })!;
  validateScopes(scopes);
  const expiresAt = c.params.date('expires_at') ?? null;
  if (expiresAt !== null && expiresAt <= todayUtc()) throw badRequest('expires_at must be in the future');
  if (expiresAt !== null && expiresAt > addDays(todayUtc(), 400)) {
    throw badRequest('expires_at must be less than 400 days from now');
  }
  const description = c.params.string('description', { max: 255 }) ?? null;
  return { name, scopes, expiresAt, description };
}

/** The token named by `:id`, or the current one for `self`; 404 when the caller may not see it. */
async function loadToken(c: Ctx): Promise<PatRow> {
  const user = c.requireUser();
  const raw = String(c.params.raw.id);
  if (raw === 'self') {
    if (!c.auth.token || c.auth.token.kind !== 'personal') throw unauthorized();
    const row = await c.app.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', c.auth.token.id).executeTakeFirst();
    if (!row) throw unauthorized();
    return row;
  }
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_DB_INT) throw paramError('id is invalid');
  const row = await c.app.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', Number(raw)).executeTakeFirst();
  if (!row || (row.user_id !== user.id && !user.is_admin)) throw notFound('Personal Access Token');
  return row;
}

type TokenQuery = SelectQueryBuilder<DB, 'personal_access_tokens', Selectable<DB['personal_access_tokens']>>;

/** Tokens `active` (not revoked, not expired) or `inactive`; any other state (`all`, none) leaves the query as it is. */
function inState(q: TokenQuery, state: string | undefined): TokenQuery {
  const today = todayUtc();
  if (state === 'active') return q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today)]));
  if (state === 'inactive') return q.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', today)]));
  return q;
}

/** The user of `:user_id` for an administrator (404 `User Not Found`). */
async function targetUser(c: Ctx) {
  c.requireAdmin();
  const raw = String(c.params.raw.user_id);
  const target = /^\d+$/.test(raw) && Number(raw) <= MAX_DB_INT ? await findUserById(c.app.db, Number(raw)) : undefined;
  if (!target) throw notFound('User');
  return target;
}

/** The user's impersonation token of `:impersonation_token_id` (404 `Impersonation Token Not Found`). */
async function impersonationToken(c: Ctx): Promise<PatRow> {
  const target = await targetUser(c);
  const raw = String(c.params.raw.impersonation_token_id);
  if (!/^\d+$/.test(raw)) throw paramError('impersonation_token_id is invalid');
  const row = Number(raw) <= MAX_DB_INT
    ? await c.app.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', Number(raw)).where('user_id', '=', target.id).where('impersonation', '=', 1).executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Impersonation Token');
  return row;
}

export function registerPersonalAccessTokenRoutes(app: FastifyInstance): void {
  // GET /users/:user_id/impersonation_tokens (administrators): `state` all (default), active or inactive
  route(app, 'GET', '/users/:user_id/impersonation_tokens', async (c) => {
    const target = await targetUser(c);
    const state = c.params.enum('state', ['all', 'active', 'inactive'] as const) ?? 'all';
    const q = inState(c.app.db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', target.id).where('impersonation', '=', 1), state);
    const rows = await paginateOffset(c, q.orderBy('id', 'asc'));
    return rows.map(presentImpersonationToken);
  });

  // POST /users/:user_id/impersonation_tokens (administrators): a token that acts as the user
  route(app, 'POST', '/users/:user_id/impersonation_tokens', async (c) => {
    const target = await targetUser(c);
    const input = readNewToken(c);
    const { row, token } = await createPersonalAccessToken(c.app, { userId: target.id, ...input, impersonation: true });
    return presentImpersonationTokenWithToken(row, token);
  });

  // GET /users/:user_id/impersonation_tokens/:impersonation_token_id
  route(app, 'GET', '/users/:user_id/impersonation_tokens/:impersonation_token_id', async (c) => presentImpersonationToken(await impersonationToken(c)));

  // DELETE /users/:user_id/impersonation_tokens/:impersonation_token_id: revoked (204)
  route(app, 'DELETE', '/users/:user_id/impersonation_tokens/:impersonation_token_id', async (c) => {
    const row = await impersonationToken(c);
    await revokePersonalAccessToken(c.app, row.id);
    return undefined;
  });

  // POST /users/:user_id/personal_access_tokens
  route(app, 'POST', '/users/:user_id/personal_access_tokens', async (c) => {
    const target = await targetUser(c);
    const input = readNewToken(c);
    const { row, token } = await createPersonalAccessToken(c.app, { userId: target.id, ...input });
    return presentPersonalAccessTokenWithToken(row, token);
  });

  // POST /user/personal_access_tokens
  route(app, 'POST', '/user/personal_access_tokens', async (c) => {
    const user = c.requireUser();
    const input = readNewToken(c);
    if (!user.is_admin && input.scopes.some((s) => s !== 'k8s_proxy' && s !== 'self_rotate')) {
      throw paramError('scopes does not have a valid value');
    }
    const { row, token } = await createPersonalAccessToken(c.app, { userId: user.id, ...input });
    return presentPersonalAccessTokenWithToken(row, token);
  });

  // GET /personal_access_tokens
  route(app, 'GET', '/personal_access_tokens', async (c) => {
    const user = c.requireUser();
    const p = c.params;
    let q = c.app.db.selectFrom('personal_access_tokens').selectAll();
    const userId = p.int('user_id');
    if (user.is_admin) {
      if (userId !== undefined) q = q.where('user_id', '=', userId);
    } else {
      if (userId !== undefined && userId !== user.id) throw unauthorized();
      q = q.where('user_id', '=', user.id);
    }
    const revoked = p.bool('revoked');
    if (revoked !== undefined) q = q.where('revoked', '=', revoked ? 1 : 0);
    q = inState(q, p.enum('state', ['active', 'inactive'] as const));
    const bounds: Array<[string, 'created_at' | 'last_used_at', '>=' | '<=']> = [
      ['created_after', 'created_at', '>='],
      ['created_before', 'created_at', '<='],
      ['last_used_after', 'last_used_at', '>='],
      ['last_used_before', 'last_used_at', '<='],
    ];
    for (const [name, col, op] of bounds) {
      const v = p.datetime(name);
      if (v) q = q.where(col, op, v);
    }
    const expiresBefore = p.date('expires_before');
    if (expiresBefore) q = q.where('expires_at', '<', expiresBefore);
    const expiresAfter = p.date('expires_after');
    if (expiresAfter) q = q.where('expires_at', '>', expiresAfter);
    const search = p.string('search');
    if (search) q = q.where(containsCi('personal_access_tokens.name', search));
    const rows = await paginateOffset(c, q.orderBy('id', 'asc'));
    return rows.map(presentPersonalAccessToken);
  });

  // GET /personal_access_tokens/:id (and /self)
  route(app, 'GET', '/personal_access_tokens/:id', async (c) => presentPersonalAccessToken(await loadToken(c)));

  // DELETE /personal_access_tokens/:id (and /self)
  route(app, 'DELETE', '/personal_access_tokens/:id', async (c) => {
    const row = await loadToken(c);
    await revokePersonalAccessToken(c.app, row.id);
    return undefined;
  });

  // POST /personal_access_tokens/:id/rotate (and /self/rotate)
  route(app, 'POST', '/personal_access_tokens/:id/rotate', async (c) => {
    const row = await loadToken(c);
    const expiresAt = c.params.date('expires_at');
    const result = await rotatePersonalAccessToken(c.app, row.id, expiresAt);
    if (result === 'not_active') throw badRequest('Token already revoked');
    c.status(200);
    return presentPersonalAccessTokenWithToken(result.row, result.token);
  });

}
