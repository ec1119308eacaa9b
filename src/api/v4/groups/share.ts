// Sharing and transfer (spec document 3 §4.3): POST /groups/:id/transfer, /share,
// DELETE /groups/:id/share/:group_id, POST /groups/:id/projects/:project_id.
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, notFound, validationError } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel, ACCESS_LEVEL_VALUES } from '../../../services/access.js';
import { findGroup, loadGroupById, loadSettings } from '../../../services/groups/lookup.js';
import { shareGroup, unshareGroup } from '../../../services/groups/sharing.js';
import { selfManaged, tierAvailable } from '../../../services/groups/tiers.js';
import { transferGroup } from '../../../services/groups/tree.js';
import { canReadGroup, groupAccess } from '../../../services/groups/visibility.js';
import { findProject, loadProjectById } from '../../../services/projects/lookup.js';
import { unlinkLessVisible } from '../../../services/projects/forks.js';
import { transferProject } from '../../../services/projects/update.js';
import { presentProjectFor } from '../entities/project.js';
import { presentGroupDetailFor } from './present.js';
import { todayUtc } from '../../../services/personal-access-tokens.js';
import { transferFailedTodo } from '../../../services/todos.js';

// POST /groups/:id/transfer
async function transferRoute(c: Ctx) {
  const user = c.requireUser();
  const loaded = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  const targetId = c.params.int('group_id');
  let target = null;
  if (targetId !== undefined) {
    target = (await loadGroupById(c.app.db, targetId)) ?? null;
    if (!target || !(await canReadGroup(c.app.db, user, target))) throw notFound('Group');
  }
  // The response is the group as it was before the transfer (spec §4.3).
  const before = await presentGroupDetailFor(c, loaded.group, loaded.settings, loaded.access, { withProjects: true });
  try {
    if (target) {
      const level = user.is_admin ? AccessLevel.OWNER : await groupAccess(c.app.db, user, target);
      const st = await loadSettings(c.app.db, target.id);
      const needed = (JSON.parse(st.settings || '{}').subgroup_creation_level ?? 'maintainer') === 'owner' ? AccessLevel.OWNER : AccessLevel.MAINTAINER;
      if (level < needed) throw transferDenied();
    } else if (!user.is_admin && !user.can_create_group) {
      throw transferDenied();
    }
    await unlinkLessVisible(c.app, user, await transferGroup(c.app, user, loaded.group, target, c.req.ip));
  } catch (err) {
    // Spec §4.3: a failed transfer gives the requester a transfer_failed to-do (and here a 400 too).
    await transferFailedTodo(c.app, { type: 'Namespace', id: loaded.group.id }, user.id, loaded.group.full_path, target?.full_path ?? null, err);
    throw err;
  }
  c.status(201);
  return before;
}

function transferDenied() {
  return apiError(400, "Transfer failed: You don't have enough permissions.");
}

// POST /groups/:id/share
async function shareRoute(c: Ctx) {
  const user = c.requireUser();
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  const withId = c.params.int('group_id', { required: true })!;
  const access = c.params.intEnum('group_access', ACCESS_LEVEL_VALUES, { required: true })!;
  const expiresAt = c.params.date('expires_at') ?? null;
  if (expiresAt !== null && expiresAt <= todayUtc()) throw validationError({ expires_at: ['cannot be a date in the past'] });
  let memberRoleId: number | null = null;
  if (c.params.has('member_role_id')) {
    const id = c.params.int('member_role_id');
    // Custom roles are Ultimate only; none exist here, so any id names a missing role.
    if (id !== undefined && tierAvailable(c.app.config, 'U')) throw notFound('Member Role');
    memberRoleId = null;
  }
  const withGroup = await loadGroupById(c.app.db, withId);
  if (!withGroup || !(await canReadGroup(c.app.db, user, withGroup))) throw notFound('Group');
  await shareGroup(c.app, user, group, withGroup, access, expiresAt, memberRoleId, c.req.ip);
  c.status(200);
  const fresh = (await loadGroupById(c.app.db, group.id))!;
  return presentGroupDetailFor(c, fresh, await loadSettings(c.app.db, group.id), AccessLevel.OWNER, { withProjects: true });
}

// DELETE /groups/:id/share/:group_id
async function unshareRoute(c: Ctx) {
  const user = c.requireUser();
  const { group } = await findGroup(c, c.params.raw.id, { minAccess: AccessLevel.OWNER });
  const withId = c.params.int('group_id', { required: true })!;
  await unshareGroup(c.app, user, group, withId, c.req.ip);
  return undefined;
}

// POST /groups/:id/projects/:project_id
async function transferProjectRoute(c: Ctx) {
  const user = c.requireAdmin();
  if (!selfManaged(c.app.config)) throw forbidden();
  const { group } = await findGroup(c, c.params.raw.id);
  const { project } = await findProject(c, String(c.params.raw.project_id ?? ''));
  let moved = await transferProject(c.app, project.id, group);
  if (moved.project.visibility !== project.visibility) {
    await unlinkLessVisible(c.app, user, [project.id]);
    moved = (await loadProjectById(c.app.db, project.id)) ?? moved;
  }
  return presentProjectFor(c.app.db, moved.project, moved.namespace, { base: c.base, user });
}

export function registerGroupShareRoutes(app: FastifyInstance): void {
  route(app, 'POST', '/groups/:id/transfer', transferRoute);
  route(app, 'POST', '/groups/:id/share', shareRoute);
  route(app, 'DELETE', '/groups/:id/share/:group_id', unshareRoute);
  route(app, 'POST', '/groups/:id/projects/:project_id', transferProjectRoute);
}
