// Project forks (GitLab's lib/api/projects.rb): fork, list forks, link and unlink a fork relation.
import type { FastifyInstance } from 'fastify';
import type { UserRow } from '../../../db/repositories/users.js';
import { forbidden, notFound, unauthorized } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { VISIBILITIES } from '../../../services/projects/attrs.js';
import { canFork, forkProject, linkFork, registerForkDeletionHook, unlinkProject } from '../../../services/projects/forks.js';
import { branchSha, repoFor } from '../../../services/merge-requests/git-ops.js';
import { findProject, loadProjectById, type NamespaceRow } from '../../../services/projects/lookup.js';
import { canCreateProjectIn, findReadableNamespace } from '../../../services/projects/namespaces.js';
import { presentProjectFor } from '../entities/project.js';
import { personalNamespace } from './create.js';
import { listProjects } from './list.js';

/** `namespace_id`, `namespace_path` or the deprecated `namespace` (id or path), in GitLab's order; else the caller's own. */
async function targetNamespace(c: Ctx, user: UserRow): Promise<NamespaceRow> {
  const p = c.params;
  const id = p.int('namespace_id');
  const path = p.string('namespace_path');
  const either = p.string('namespace');
  const ref = id !== undefined ? String(id) : path || either || undefined;
  if (ref !== undefined) return findReadableNamespace(c.app.db, user, ref);
  return personalNamespace(c, user);
}

// POST /projects/:id/fork
async function fork(c: Ctx) {
  const user = c.requireUser();
  const found = await findProject(c, c.params.raw.id as string);
  if (!canFork(user, found.project, found.access)) throw notFound();
  const p = c.params;
  const opts = {
    name: p.string('name') || undefined,
    path: p.string('path') || undefined,
    description: p.string('description'),
    visibility: p.enum('visibility', VISIBILITIES),
    mrDefaultTargetSelf: p.bool('mr_default_target_self'),
    branch: p.string('branches') || undefined,
  };
  const namespace = await targetNamespace(c, user);
  if (opts.branch !== undefined && !(await branchSha(repoFor(c.app, found.project.id), opts.branch))) throw notFound('Source Branch');
  // ForkTargetsFinder: the user's own namespace and groups they may create projects in.
  if (!(await canCreateProjectIn(c.app.db, user, namespace))) throw notFound('Target Namespace');
  const created = await forkProject(c.app, user, found, { ...opts, namespace });
  return presentProjectFor(c.app.db, created.project, created.namespace, { base: c.base, user });
}

// POST /projects/:id/fork/:forked_from_id
async function link(c: Ctx) {
  const user = c.requireUser();
  const found = await findProject(c, c.params.raw.id as string, { minAccess: AccessLevel.OWNER });
  const from = await findProject(c, c.params.raw.forked_from_id as string);
  if (!canFork(user, from.project, from.access)) throw forbidden();
  if (!(await canCreateProjectIn(c.app.db, user, found.namespace))) throw unauthorized('Target Namespace');
  await linkFork(c.app, found.project, from.project);
  const fresh = (await loadProjectById(c.app.db, found.project.id)) ?? found;
  return presentProjectFor(c.app.db, fresh.project, fresh.namespace, { base: c.base, user });
}

// DELETE /projects/:id/fork
async function unlink(c: Ctx) {
  const user = c.requireUser();
  const found = await findProject(c, c.params.raw.id as string, { minAccess: AccessLevel.OWNER });
  const done = await unlinkProject(c.app, user, found.project);
  c.status(done ? 204 : 304);
  return undefined;
}

export function registerProjectForkRoutes(app: FastifyInstance): void {
  registerForkDeletionHook();
  route(app, 'POST', '/projects/:id/fork', fork);
  route(app, 'GET', '/projects/:id/forks', async (c) => {
    const found = await findProject(c, c.params.raw.id as string);
    return listProjects(c, (q) => q.where('projects.forked_from_project_id', '=', found.project.id));
  });
  route(app, 'POST', '/projects/:id/fork/:forked_from_id', link);
  route(app, 'DELETE', '/projects/:id/fork', unlink);
}
