// Sharing a project with a group (GitLab's lib/api/projects.rb `share`): POST /projects/:id/share
// and DELETE /projects/:id/share/:group_id.
import type { FastifyInstance } from 'fastify';
import { validationError } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel, PROJECT_ACCESS_LEVEL_VALUES } from '../../../services/access.js';
import { loadGroupById } from '../../../services/groups/lookup.js';
import { findProject } from '../../../services/projects/lookup.js';
import { registerProjectShareAccess, shareProject, unshareProject } from '../../../services/projects/share.js';
import { todayUtc } from '../../../services/personal-access-tokens.js';

// POST /projects/:id/share
async function shareRoute(c: Ctx) {
  const user = c.requireUser();
  const found = await findProject(c, String(c.params.raw.id ?? ''), { minAccess: AccessLevel.MAINTAINER });
  const groupId = c.params.int('group_id', { required: true })!;
  const access = c.params.intEnum('group_access', PROJECT_ACCESS_LEVEL_VALUES, { required: true })!;
  const expiresAt = c.params.date('expires_at') ?? null;
  // GITLAB-COMPAT: GitLab answers a past date with 409 (every failed save is 409 there); it is bad
  // input, so it is a 400 here, worded as the group share's.
  if (expiresAt !== null && expiresAt <= todayUtc()) throw validationError({ expires_at: ['cannot be a date in the past'] });
  const group = await loadGroupById(c.app.db, groupId);
  const link = await shareProject(c.app, user, found, group, access, expiresAt, c.req.ip);
  c.status(201);
  return { id: link.id, project_id: link.project_id, group_id: link.group_id, group_access: link.group_access, expires_at: link.expires_at };
}

// DELETE /projects/:id/share/:group_id
async function unshareRoute(c: Ctx) {
  const user = c.requireUser();
  const found = await findProject(c, String(c.params.raw.id ?? ''), { minAccess: AccessLevel.MAINTAINER });
  const groupId = c.params.int('group_id', { required: true })!;
  await unshareProject(c.app, user, found, groupId, c.req.ip);
  return undefined;
}

export function registerProjectShareRoutes(app: FastifyInstance): void {
  registerProjectShareAccess();
  route(app, 'POST', '/projects/:id/share', shareRoute);
  route(app, 'DELETE', '/projects/:id/share/:group_id', unshareRoute);
}
