// Group avatar, custom attributes (admin) and LDAP sync (spec document 3 §4.2, §4.3).
import type { FastifyInstance } from 'fastify';
import { nowIso } from '../../../db/database.js';
import { notFound } from '../../../http/errors.js';
import { MAX_DB_INT } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import { readAvatar } from '../../../services/groups/avatar.js';
import { findGroup, loadGroupById } from '../../../services/groups/lookup.js';
import { canReadGroup } from '../../../services/groups/visibility.js';
import { isUniqueViolation } from '../../../services/projects/unique.js';

// GET /groups/:id/avatar
async function avatarRoute(c: Ctx) {
  const { group } = await findGroup(c, c.params.raw.id);
  const file = group.avatar_path ? await readAvatar(c.app, group.id, group.avatar_path) : null;
  if (!file) throw notFound('Avatar');
  c.reply.header('Content-Type', file.mime);
  c.reply.header('Content-Disposition', `attachment; filename="${group.avatar_path}"`);
  return c.reply.send(file.data);
}

async function adminGroup(c: Ctx) {
  c.requireAdmin();
  return findGroup(c, c.params.raw.id);
}

// GET /groups/:id/custom_attributes
async function listAttributes(c: Ctx) {
  const { group } = await adminGroup(c);
  const rows = await c.app.db.selectFrom('namespace_custom_attributes').select(['key', 'value']).where('namespace_id', '=', group.id).orderBy('key').execute();
  return rows;
}

// GET /groups/:id/custom_attributes/:key
async function showAttribute(c: Ctx) {
  const { group } = await adminGroup(c);
  const key = String(c.params.raw.key ?? '');
  const row = await c.app.db.selectFrom('namespace_custom_attributes').select(['key', 'value']).where('namespace_id', '=', group.id).where('key', '=', key).executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

// PUT /groups/:id/custom_attributes/:key
async function setAttribute(c: Ctx) {
  const { group } = await adminGroup(c);
  const key = String(c.params.raw.key ?? '');
  const value = c.params.string('value', { required: true })!;
  const now = nowIso();
  const put = () =>
    c.app.database.transaction(async (trx) => {
      const existing = await trx.selectFrom('namespace_custom_attributes').select('id').where('namespace_id', '=', group.id).where('key', '=', key).executeTakeFirst();
      if (existing) await trx.updateTable('namespace_custom_attributes').set({ value, updated_at: now }).where('id', '=', existing.id).execute();
      else await trx.insertInto('namespace_custom_attributes').values({ namespace_id: group.id, key, value, created_at: now, updated_at: now }).execute();
    });
  try {
    await put();
  } catch (err) {
    // Another PUT of the same key inserted it meanwhile (PostgreSQL): this one is then an update.
    if (!isUniqueViolation(err)) throw err;
    await put();
  }
  return { key, value };
}

// DELETE /groups/:id/custom_attributes/:key
async function deleteAttribute(c: Ctx) {
  const { group } = await adminGroup(c);
  const key = String(c.params.raw.key ?? '');
  const res = await c.app.db.deleteFrom('namespace_custom_attributes').where('namespace_id', '=', group.id).where('key', '=', key).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound();
  return undefined;
}

// POST /groups/:id/ldap_sync
async function ldapSync(c: Ctx) {
  // No LDAP server is configured, and GitLab's ldap_sync starts with
  // `not_found! unless Gitlab::Auth::Ldap::Config.group_sync_enabled?`: 404 for everyone, before
  // the group is even looked up (so nothing is learnt about it either).
  c.requireUser();
  throw notFound();
}

// GET /uploads/-/system/group/avatar/:id/:file (the avatar_url of a group)
async function avatarUpload(c: Ctx) {
  const id = Number(c.params.raw.id);
  const group = Number.isSafeInteger(id) && id > 0 && id <= MAX_DB_INT ? await loadGroupById(c.app.db, id) : undefined;
  if (!group || !(await canReadGroup(c.app.db, c.user, group)) || group.avatar_path !== String(c.params.raw.file)) throw notFound();
  const file = await readAvatar(c.app, group.id, group.avatar_path);
  if (!file) throw notFound();
  c.reply.header('Content-Type', file.mime);
  return c.reply.send(file.data);
}

export function registerGroupExtraRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/groups/:id/avatar', avatarRoute);
  route(app, 'GET', '/groups/:id/custom_attributes', listAttributes);
  route(app, 'GET', '/groups/:id/custom_attributes/:key', showAttribute);
  route(app, 'PUT', '/groups/:id/custom_attributes/:key', setAttribute);
  route(app, 'DELETE', '/groups/:id/custom_attributes/:key', deleteAttribute);
  route(app, 'POST', '/groups/:id/ldap_sync', ldapSync);
}

/** The avatar_url of a group, outside /api/v4 (registered through src/modules.ts). */
export function registerGroupUploadRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/uploads/-/system/group/avatar/:id/:file', avatarUpload);
}
