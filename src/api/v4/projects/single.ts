// One project: read, update, delete, transfer, archive.
import type { FastifyInstance } from 'fastify';
import { forbidden, notGiven, paramError, validationError } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel, VISIBILITY_LEVEL, type Visibility } from '../../../services/access.js';
import { unlinkLessVisible } from '../../../services/projects/forks.js';
import { readNamespaceRef, readProjectAttrs } from '../../../services/projects/attrs.js';
import { findProject, fullPath, loadProjectById } from '../../../services/projects/lookup.js';
import { transferFailedTodo } from '../../../services/todos.js';
import { canCreateProjectIn, findReadableNamespace } from '../../../services/projects/namespaces.js';
import { deleteProject, setArchived, transferProject, updateProject } from '../../../services/projects/update.js';
import { presentProjectFor } from '../entities/project.js';
import type { NamespaceRow, ProjectRow } from '../../../services/projects/lookup.js';

/** `access`: the caller's effective level when known (it includes group sharing, which the entity's own lookup does not). */
function present(c: Ctx, found: { project: ProjectRow; namespace: NamespaceRow }, access?: number) {
  return presentProjectFor(c.app.db, found.project, found.namespace, { base: c.base, user: c.user, ...(access !== undefined ? { access } : {}) });
}

// GET /projects/:id
async function showProject(c: Ctx) {
  const found = await findProject(c, c.params.raw.id as string);
  const statistics = c.params.bool('statistics') ?? false;
  return presentProjectFor(c.app.db, found.project, found.namespace, { base: c.base, user: c.user, access: found.access, statistics });
}

// PUT /projects/:id
async function editProject(c: Ctx) {
  const found = await findProject(c, c.params.raw.id as string, { minAccess: AccessLevel.MAINTAINER });
  const attrs = readProjectAttrs(c.params);
  const given = Object.keys(attrs.settings).length > 0 || (['name', 'path', 'description', 'visibility', 'defaultBranch'] as const).some((k) => attrs[k] !== undefined);
  // Grape's at_least_one_of on the update parameters.
  if (!given) throw paramError('name, path, description, default_branch, visibility and the project settings are missing, at least one parameter must be provided');
  const { project } = found;
  // Renaming the path and changing visibility are Owner abilities in GitLab; other settings Maintainer.
  const ownerOnly = (attrs.path !== undefined && attrs.path !== project.path) || (attrs.visibility !== undefined && attrs.visibility !== project.visibility);
  if (ownerOnly && found.access < AccessLevel.OWNER) throw forbidden();
  if (project.archived === 1) throw forbidden('Project is archived');
  if (attrs.name !== undefined && attrs.name.trim() === '') throw validationError({ name: ["can't be blank"] });
  const updated = await updateProject(c.app, project.id, attrs);
  return present(c, await afterVisibilityChange(c, project, updated));
}

/** A project that became less visible leaves its fork network (unlinkLessVisible); answers it as it is then. */
async function afterVisibilityChange(c: Ctx, before: ProjectRow, after: { project: ProjectRow; namespace: NamespaceRow }) {
  if (VISIBILITY_LEVEL[after.project.visibility as Visibility] >= VISIBILITY_LEVEL[before.visibility as Visibility]) return after;
  await unlinkLessVisible(c.app, c.requireUser(), [after.project.id]);
  return (await loadProjectById(c.app.db, after.project.id)) ?? after;
}

// DELETE /projects/:id
async function removeProject(c: Ctx) {
  const found = await findProject(c, c.params.raw.id as string, { minAccess: AccessLevel.OWNER });
  await deleteProject(c.app, found.project.id);
  c.status(202);
  return { message: '202 Accepted' };
}

// PUT /projects/:id/transfer (GitLab) and POST /projects/:id/transfer
async function transfer(c: Ctx) {
  const found = await findProject(c, c.params.raw.id as string, { minAccess: AccessLevel.OWNER });
  const ref = readNamespaceRef(c.params, 'namespace') ?? readNamespaceRef(c.params, 'namespace_id');
  if (ref === undefined) throw notGiven('namespace');
  const user = c.requireUser();
  const target = await findReadableNamespace(c.app.db, user, ref);
  if (!(await canCreateProjectIn(c.app.db, user, target))) throw forbidden();
  let moved;
  try {
    moved = await transferProject(c.app, found.project.id, target);
  } catch (err) {
    // As a group's: a failed transfer leaves the requester a transfer_failed to-do (and a 400).
    await transferFailedTodo(c.app, { type: 'Project', id: found.project.id }, user.id, fullPath(found.project, found.namespace), target.full_path, err);
    throw err;
  }
  return present(c, await afterVisibilityChange(c, found.project, moved));
}

function archiveRoute(archived: boolean) {
  // POST /projects/:id/archive and POST /projects/:id/unarchive
  return async function archive(c: Ctx) {
    const found = await findProject(c, c.params.raw.id as string, { minAccess: AccessLevel.OWNER });
    return present(c, await setArchived(c.app, found.project.id, archived));
  };
}

export function registerProjectSingleRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id', showProject, { cache: true });
  route(app, 'PUT', '/projects/:id', editProject);
  route(app, 'DELETE', '/projects/:id', removeProject);
  route(app, 'PUT', '/projects/:id/transfer', transfer);
  route(app, 'POST', '/projects/:id/transfer', transfer);
  route(app, 'POST', '/projects/:id/archive', archiveRoute(true));
  route(app, 'POST', '/projects/:id/unarchive', archiveRoute(false));
}
