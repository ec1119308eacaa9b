// Creating, updating and deleting groups: POST /groups, PUT /groups/:id, DELETE /groups/:id.
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, notFound, validationError } from '../../../http/errors.js';
import { recordAudit } from '../../../services/audit.js';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { readAiSettings } from '../../../services/groups/ai-settings.js';
import { checkAvatar, removeAvatar, storeAvatar, uploadedFile } from '../../../services/groups/avatar.js';
import { findGroup, loadSettings, type GroupRow } from '../../../services/groups/lookup.js';
import { readSettings } from '../../../services/groups/settings.js';
import { hosted, tierAvailable } from '../../../services/groups/tiers.js';
import { deleteGroup } from '../../../services/groups/tree.js';
import { VISIBILITIES } from '../../../services/groups/validate.js';
import { canReadGroup, groupAccess } from '../../../services/groups/visibility.js';
import { createGroup, failedToSave, updateGroup, type GroupChanges } from '../../../services/groups/write.js';
import { presentGroupDetailFor } from './present.js';
import { loadGroupById } from '../../../services/groups/lookup.js';

const DESCRIPTION_MAX = 255;

/** The avatar of a request: a file (set), a blank value (remove), or absent. */
function readAvatar(c: Ctx): { data: Buffer; name: string } | null | undefined {
  if (!c.params.has('avatar')) return undefined;
  const raw = c.params.raw.avatar;
  const file = uploadedFile(raw);
  if (file) return { data: file, name: checkAvatar(file).name };
  if (raw === null || raw === '') return null;
  throw validationError({ avatar: ['file format is not supported. Please try one of the following supported formats: png, jpg, jpeg, gif, bmp, tiff, ico or webp'] });
}

// POST /groups
async function createGroupRoute(c: Ctx) {
  const user = c.requireUser();
  const name = c.params.string('name', { required: true })!;
  const path = c.params.string('path', { required: true })!;
  const parentId = c.params.int('parent_id');
  let visibility = c.params.enum('visibility', VISIBILITIES);
  const description = c.params.string('description') ?? '';
  let parent: GroupRow | null = null;
  if (parentId !== undefined) {
    const found = await loadGroupById(c.app.db, parentId);
    if (!found || !(await canReadGroup(c.app.db, user, found))) throw notFound('Group');
    const level = user.is_admin ? AccessLevel.OWNER : await groupAccess(c.app.db, user, found);
    const st = await loadSettings(c.app.db, found.id);
    const needed = (JSON.parse(st.settings || '{}').subgroup_creation_level ?? 'maintainer') === 'owner' ? AccessLevel.OWNER : AccessLevel.MAINTAINER;
    if (level < needed) throw forbidden();
    parent = found;
  } else if (!user.is_admin && !user.can_create_group) {
    throw forbidden();
  }
  // The instance default (private), never above the parent's visibility.
  if (visibility === undefined) visibility = 'private';
  const input = readSettings(c.params, c.app.config, { topLevel: parent === null, isAdmin: user.is_admin === 1 });
  if (description.length > DESCRIPTION_MAX) input.errors.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
  if (Object.keys(input.errors).length) throw failedToSave(input.errors);
  const avatar = readAvatar(c);
  const group = await createGroup(
    c.app,
    user,
    { name, path, parent, visibility, description, settings: input.values, avatarPath: avatar ? avatar.name : null },
    c.req.ip,
  );
  if (avatar) await storeAvatar(c.app, group.id, avatar.data, avatar.name);
  return presentGroupDetailFor(c, group, await loadSettings(c.app.db, group.id), AccessLevel.OWNER, { withProjects: true });
}

// PUT /groups/:id
async function updateGroupRoute(c: Ctx) {
  const user = c.requireUser();
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  const changes: GroupChanges = {};
  const name = c.params.string('name');
  if (name !== undefined) changes.name = name;
  const path = c.params.string('path');
  if (path !== undefined) changes.path = path;
  const description = c.params.string('description');
  if (description !== undefined) {
    if (description.length > DESCRIPTION_MAX) throw validationError({ description: [`is too long (maximum is ${DESCRIPTION_MAX} characters)`] });
    changes.description = description;
  }
  const visibility = c.params.enum('visibility', VISIBILITIES);
  if (visibility !== undefined) changes.visibility = visibility;
  const topLevel = group.parent_id === null;
  const input = readSettings(c.params, c.app.config, { topLevel, isAdmin: user.is_admin === 1 });
  const ai = c.params.hash('ai_settings_attributes');
  if (ai && tierAvailable(c.app.config, 'PU')) {
    // The assistant features must be enabled for the hash to apply; otherwise it is ignored.
    input.values.ai_settings = readAiSettings(ai, { topLevel, hostedOffering: hosted(c.app.config), premium: true }, input.errors);
  }
  if (Object.keys(input.errors).length) throw validationError(input.errors);
  changes.settings = input.values;
  const avatar = readAvatar(c);
  if (avatar !== undefined) changes.avatarPath = avatar ? avatar.name : null;
  await updateGroup(c.app, user, group, changes, c.req.ip);
  if (avatar) await storeAvatar(c.app, group.id, avatar.data, avatar.name);
  else if (avatar === null) await removeAvatar(c.app, group.id);
  const fresh = (await loadGroupById(c.app.db, group.id))!;
  return presentGroupDetailFor(c, fresh, await loadSettings(c.app.db, group.id), AccessLevel.OWNER, { withProjects: true });
}

// DELETE /groups/:id
async function deleteGroupRoute(c: Ctx) {
  const user = c.requireUser();
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  refuseIfModifiedSince(c, group.updated_at);
  await deleteGroup(c.app, user, group, c.req.ip);
  await removeAvatar(c.app, group.id);
  c.status(202);
  return { message: '202 Accepted' };
}

// POST /groups/:id/archive and /groups/:id/unarchive
function archiveRoute(archived: boolean) {
  return async function setGroupArchived(c: Ctx) {
    const user = c.requireUser();
    const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
    const st = await loadSettings(c.app.db, group.id);
    if ((st.archived === 1) === archived) throw apiError(422, archived ? 'Group is already archived' : 'Group is already unarchived');
    await c.app.database.transaction(async (trx) => {
      const now = new Date().toISOString();
      if (st.id) await trx.updateTable('group_settings').set({ archived: archived ? 1 : 0, updated_at: now }).where('namespace_id', '=', group.id).execute();
      else
        await trx
          .insertInto('group_settings')
          .values({ namespace_id: group.id, settings: '{}', archived: archived ? 1 : 0, marked_for_deletion_on: null, repository_storage: 'default', created_by_id: null, updated_at: now })
          .execute();
      await recordAudit(trx, {
        author: user,
        entityType: 'Group',
        entityId: group.id,
        entityPath: group.full_path,
        eventName: archived ? 'group_archived' : 'group_unarchived',
        targetType: 'Group',
        targetId: group.id,
        ipAddress: c.req.ip,
      });
    });
    return presentGroupDetailFor(c, group, await loadSettings(c.app.db, group.id), AccessLevel.OWNER, { withProjects: false });
  };
}

export function registerGroupWriteRoutes(app: FastifyInstance): void {
  route(app, 'POST', '/groups/:id/archive', archiveRoute(true));
  route(app, 'POST', '/groups/:id/unarchive', archiveRoute(false));
  route(app, 'POST', '/groups', createGroupRoute);
  route(app, 'PUT', '/groups/:id', updateGroupRoute);
  route(app, 'DELETE', '/groups/:id', deleteGroupRoute);
}

