// Enterprise users and the credential inventory (spec document 3 §4.2, §4.5, §7):
// GET /groups/:id/saml_users, /provisioned_users, and /groups/:id/manage/….
import type { FastifyInstance } from 'fastify';
import { containsCi } from '../../../db/sql-helpers.js';
import { apiError, notFound, unauthorized } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { MAX_DB_INT } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { findResourceToken, presentResourceToken, type ResourceRef } from '../../../services/groups/access-tokens.js';
import { identitiesOf, presentEnterpriseUser, readUserFilters, scimIdentitiesOf, enterpriseUserIds } from '../../../services/groups/enterprise.js';
import { findGroup, type LoadedGroup } from '../../../services/groups/lookup.js';
import { presentInventoryKey, deleteSshKey } from '../../../services/groups/ssh-keys.js';
import { hosted, tierAvailable } from '../../../services/groups/tiers.js';
import { isActive, revokePersonalAccessToken, rotatePersonalAccessToken, todayUtc, type PatRow } from '../../../services/personal-access-tokens.js';
import { presentPersonalAccessToken, presentPersonalAccessTokenWithToken } from '../entities/personal-access-token.js';

/** GITLAB-COMPAT: Premium-only routes are absent (404) on Free, as on GitLab's Free edition. */
function requirePremium(c: Ctx): void {
  if (!tierAvailable(c.app.config, 'PU')) throw notFound();
}

async function topLevelGroup(c: Ctx, minAccess: number): Promise<LoadedGroup> {
  c.requireUser();
  const g = await findGroup(c, c.params.raw.id, { minAccess });
  if (g.group.parent_id !== null) throw apiError(400, '400 Bad request - Must be a top-level group');
  return g;
}

async function listUsers(c: Ctx, ids: ReturnType<typeof enterpriseUserIds> | any, withScim: boolean, groupId: number) {
  const f = readUserFilters(c.params);
  let q = c.app.db.selectFrom('users').selectAll().where('id', 'in', ids);
  if (f.username) q = q.where((eb) => eb(eb.fn('lower', ['username']), '=', f.username!.toLowerCase()));
  if (f.search) {
    const s = f.search;
    q = q.where((eb) => eb.or([containsCi('name', s), containsCi('username', s), containsCi('email', s)]));
  }
  if (f.active === true) q = q.where('state', '=', 'active');
  if (f.blocked === true) q = q.where('state', '=', 'blocked');
  if (f.createdAfter) q = q.where('created_at', '>=', f.createdAfter);
  if (f.createdBefore) q = q.where('created_at', '<=', f.createdBefore);
  const rows = await paginateOffset(c, q.orderBy('id'));
  const identities = await identitiesOf(c.app.db, rows.map((r) => r.id));
  const scim = withScim ? await scimIdentitiesOf(c.app.db, rows.map((r) => r.id)) : undefined;
  return rows.map((u) => presentEnterpriseUser(u, c.base, identities.get(u.id) ?? [], scim?.get(u.id)?.filter((x) => x.group_id === groupId)));
}

// GET /groups/:id/saml_users
async function samlUsers(c: Ctx) {
  requirePremium(c);
  const { group } = await topLevelGroup(c, AccessLevel.OWNER);
  const ids = c.app.db.selectFrom('user_identities').select('user_id').where('saml_provider_id', '=', group.id);
  return listUsers(c, ids, true, group.id);
}

// GET /groups/:id/provisioned_users
async function provisionedUsers(c: Ctx) {
  requirePremium(c);
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.MAINTAINER });
  c.requireUser();
  const ids = c.app.db.selectFrom('user_group_provisions').select('user_id').where('provisioned_by_group_id', '=', group.id);
  return listUsers(c, ids, false, group.id);
}

// ---- credential inventory (PU, HOSTED, Owner) ----

async function inventoryGroup(c: Ctx): Promise<LoadedGroup> {
  // GITLAB-COMPAT: outside the hosted offering on Premium+ the routes do not exist (404).
  if (!tierAvailable(c.app.config, 'PU') || !hosted(c.app.config)) throw notFound();
  return topLevelGroup(c, AccessLevel.OWNER);
}

const SORTS = ['created_asc', 'created_desc', 'expires_asc', 'expires_desc', 'last_used_asc', 'last_used_desc', 'name_asc', 'name_desc'] as const;

function tokenFilters(c: Ctx, q: any) {
  const p = c.params;
  const createdAfter = p.datetime('created_after');
  const createdBefore = p.datetime('created_before');
  const lastUsedAfter = p.datetime('last_used_after');
  const lastUsedBefore = p.datetime('last_used_before');
  const revoked = p.bool('revoked');
  const search = p.string('search');
  const state = p.enum('state', ['active', 'inactive'] as const);
  const sort = p.enum('sort', SORTS) ?? 'created_desc';
  if (createdAfter) q = q.where('personal_access_tokens.created_at', '>=', createdAfter);
  if (createdBefore) q = q.where('personal_access_tokens.created_at', '<=', createdBefore);
  if (lastUsedAfter) q = q.where('personal_access_tokens.last_used_at', '>=', lastUsedAfter);
  if (lastUsedBefore) q = q.where('personal_access_tokens.last_used_at', '<=', lastUsedBefore);
  if (revoked !== undefined) q = q.where('personal_access_tokens.revoked', '=', revoked ? 1 : 0);
  if (search) q = q.where(containsCi('personal_access_tokens.name', search));
  const today = todayUtc();
  if (state === 'active') {
    q = q.where('personal_access_tokens.revoked', '=', 0).where((eb: any) => eb.or([eb('personal_access_tokens.expires_at', 'is', null), eb('personal_access_tokens.expires_at', '>', today)]));
  } else if (state === 'inactive') {
    q = q.where((eb: any) => eb.or([eb('personal_access_tokens.revoked', '=', 1), eb('personal_access_tokens.expires_at', '<=', today)]));
  }
  const [field, dir] = sort.split('_') as [string, 'asc' | 'desc'];
  const col = field === 'created' ? 'created_at' : field === 'expires' ? 'expires_at' : field === 'last' ? 'last_used_at' : 'name';
  const direction = (sort.endsWith('desc') ? 'desc' : 'asc') as 'asc' | 'desc';
  void dir;
  return q.orderBy(`personal_access_tokens.${col}`, direction).orderBy('personal_access_tokens.id', direction);
}

function enterprisePats(c: Ctx, groupId: number) {
  return c.app.db
    .selectFrom('personal_access_tokens')
    .selectAll('personal_access_tokens')
    .where('personal_access_tokens.user_id', 'in', enterpriseUserIds(c.app.db, groupId))
    .where('personal_access_tokens.user_id', 'not in', c.app.db.selectFrom('resource_access_bots').select('user_id'));
}

/** Bots of the group, its subgroups and their projects. */
function hierarchyBots(c: Ctx, traversal: string) {
  const db = c.app.db;
  return db
    .selectFrom('resource_access_bots')
    .select('resource_access_bots.user_id')
    .where((eb) =>
      eb.or([
        eb.and([eb('resource_access_bots.source_type', '=', 'Namespace'), eb('resource_access_bots.source_id', 'in', db.selectFrom('namespaces').select('id').where('traversal', 'like', `${traversal}%`))]),
        eb.and([
          eb('resource_access_bots.source_type', '=', 'Project'),
          eb('resource_access_bots.source_id', 'in', db.selectFrom('projects').innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id').select('projects.id').where('namespaces.traversal', 'like', `${traversal}%`)),
        ]),
      ]),
    );
}

async function resourceRecord(c: Ctx, row: PatRow) {
  const bot = await c.app.db.selectFrom('resource_access_bots').selectAll().where('user_id', '=', row.user_id).executeTakeFirst();
  if (!bot) return null;
  const ref: ResourceRef = { type: bot.source_type as 'Namespace' | 'Project', id: bot.source_id, path: '' };
  return (await findResourceToken(c.app.db, ref, row.id)) ?? { row, accessLevel: 0, resource: ref };
}

/** The token named by :token_id (or `self`), within `scope`; §7's 401/404 rules. */
async function inventoryToken(c: Ctx, scope: any): Promise<{ row: PatRow; self: boolean }> {
  const raw = String(c.params.raw.token_id ?? '');
  let id: number;
  let self = false;
  if (raw === 'self') {
    if (!c.auth.token || c.auth.token.kind !== 'personal') throw unauthorized();
    id = c.auth.token.id;
    self = true;
  } else if (/^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) && Number(raw) <= MAX_DB_INT) {
    id = Number(raw);
  } else {
    throw notFound();
  }
  const row = await scope.where('personal_access_tokens.id', '=', id).executeTakeFirst();
  if (!row) {
    if (self) throw unauthorized();
    throw notFound();
  }
  return { row, self };
}

function registerInventory(app: FastifyInstance): void {
  // GET /groups/:id/manage/personal_access_tokens
  route(app, 'GET', '/groups/:id/manage/personal_access_tokens', async (c) => {
    const { group } = await inventoryGroup(c);
    const rows = await paginateOffset(c, tokenFilters(c, enterprisePats(c, group.id)));
    return (rows as PatRow[]).map(presentPersonalAccessToken);
  });

  // GET /groups/:id/manage/resource_access_tokens
  route(app, 'GET', '/groups/:id/manage/resource_access_tokens', async (c) => {
    const { group } = await inventoryGroup(c);
    const q = c.app.db.selectFrom('personal_access_tokens').selectAll('personal_access_tokens').where('personal_access_tokens.user_id', 'in', hierarchyBots(c, group.traversal));
    const rows = (await paginateOffset(c, tokenFilters(c, q))) as PatRow[];
    const out = [];
    for (const r of rows) {
      const rec = await resourceRecord(c, r);
      if (rec) out.push(presentResourceToken(rec));
    }
    return out;
  });

  // GET /groups/:id/manage/ssh_keys
  route(app, 'GET', '/groups/:id/manage/ssh_keys', async (c) => {
    const { group } = await inventoryGroup(c);
    const p = c.params;
    const createdAfter = p.datetime('created_after');
    const createdBefore = p.datetime('created_before');
    const expiresBefore = p.datetime('expires_before');
    const expiresAfter = p.datetime('expires_after');
    let q = c.app.db.selectFrom('ssh_keys').selectAll().where('user_id', 'in', enterpriseUserIds(c.app.db, group.id));
    if (createdAfter) q = q.where('created_at', '>=', createdAfter);
    if (createdBefore) q = q.where('created_at', '<=', createdBefore);
    if (expiresBefore) q = q.where('expires_at', '<=', expiresBefore);
    if (expiresAfter) q = q.where('expires_at', '>=', expiresAfter);
    const rows = await paginateOffset(c, q.orderBy('id'));
    return rows.map(presentInventoryKey);
  });

  // DELETE /groups/:id/manage/personal_access_tokens/:token_id
  route(app, 'DELETE', '/groups/:id/manage/personal_access_tokens/:token_id', async (c) => {
    const { group } = await inventoryGroup(c);
    const { row } = await inventoryToken(c, enterprisePats(c, group.id));
    if (row.revoked) throw apiError(400, '400 Bad request - Token already revoked');
    await revokePersonalAccessToken(c.app, row.id);
    return undefined;
  });

  // DELETE /groups/:id/manage/resource_access_tokens/:token_id
  route(app, 'DELETE', '/groups/:id/manage/resource_access_tokens/:token_id', async (c) => {
    const { group } = await inventoryGroup(c);
    const scope = c.app.db.selectFrom('personal_access_tokens').selectAll('personal_access_tokens').where('personal_access_tokens.user_id', 'in', hierarchyBots(c, group.traversal));
    const { row } = await inventoryToken(c, scope);
    if (row.revoked) throw apiError(400, '400 Bad request - Token already revoked');
    await revokePersonalAccessToken(c.app, row.id);
    return undefined;
  });

  // DELETE /groups/:id/manage/ssh_keys/:key_id
  route(app, 'DELETE', '/groups/:id/manage/ssh_keys/:key_id', async (c) => {
    const { group } = await inventoryGroup(c);
    const id = c.params.int('key_id');
    const key =
      id === undefined
        ? undefined
        : await c.app.db.selectFrom('ssh_keys').selectAll().where('id', '=', id).where('user_id', 'in', enterpriseUserIds(c.app.db, group.id)).executeTakeFirst();
    if (!key) throw notFound('Key');
    await deleteSshKey(c.app, key, c.user);
    return undefined;
  });

  // POST /groups/:id/manage/personal_access_tokens/:token_id/rotate
  route(app, 'POST', '/groups/:id/manage/personal_access_tokens/:token_id/rotate', async (c) => {
    const { group } = await inventoryGroup(c);
    const raw = String(c.params.raw.token_id ?? '');
    if (/^\d+$/.test(raw) && Number(raw) <= MAX_DB_INT) {
      // A group or project access token named here is not a personal access token: 405.
      const bot = await c.app.db
        .selectFrom('personal_access_tokens')
        .innerJoin('resource_access_bots', 'resource_access_bots.user_id', 'personal_access_tokens.user_id')
        .select('personal_access_tokens.id')
        .where('personal_access_tokens.id', '=', Number(raw))
        .where('resource_access_bots.user_id', 'in', hierarchyBots(c, group.traversal))
        .executeTakeFirst();
      if (bot) throw apiError(405, '405 Method Not Allowed');
    }
    const { row, self } = await inventoryToken(c, enterprisePats(c, group.id));
    return rotate(c, row, self, (r, token) => presentPersonalAccessTokenWithToken(r, token));
  });

  // POST /groups/:id/manage/resource_access_tokens/:token_id/rotate
  route(app, 'POST', '/groups/:id/manage/resource_access_tokens/:token_id/rotate', async (c) => {
    const { group } = await inventoryGroup(c);
    const scope = c.app.db.selectFrom('personal_access_tokens').selectAll('personal_access_tokens').where('personal_access_tokens.user_id', 'in', hierarchyBots(c, group.traversal));
    const { row, self } = await inventoryToken(c, scope);
    const rec = await resourceRecord(c, row);
    return rotate(c, row, self, (r, token) => presentResourceToken({ ...(rec ?? { accessLevel: 0, resource: { type: 'Namespace', id: group.id, path: '' } }), row: r }, token));
  });
}

async function rotate(c: Ctx, row: PatRow, self: boolean, present: (r: PatRow, token: string) => unknown) {
  // A token may not rotate itself through the inventory (403).
  if (self || (c.auth.token?.kind === 'personal' && c.auth.token.id === row.id)) throw apiError(403, '403 Forbidden');
  if (!isActive(row)) throw unauthorized();
  const result = await rotatePersonalAccessToken(c.app, row.id, c.params.date('expires_at'));
  if (result === 'not_active') throw apiError(400, '400 Bad request - Token could not be rotated');
  c.status(200);
  return present(result.row, result.token);
}

export function registerGroupEnterpriseRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/groups/:id/saml_users', samlUsers);
  route(app, 'GET', '/groups/:id/provisioned_users', provisionedUsers);
  registerInventory(app);
}

