// Changing a project: settings, name and path (old path kept as a redirect), transfer to another
// namespace, archive state, deletion. Row changes are transactions; git work happens after them.
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import { GitRepository, removeRepository } from '../../git/repository.js';
import { apiError, validationError } from '../../http/errors.js';
import { VISIBILITY_LEVEL, type Visibility } from '../access.js';
import { movePrefix } from '../routes.js';
import type { ProjectAttrs } from './attrs.js';
import { validateNameAndPath } from './attrs.js';
import { assertNameAndPathFree, deleteProjectRows } from './create.js';
import { fullName, fullPath, loadProjectById, repoPathFor, type NamespaceRow, type ProjectRow } from './lookup.js';
import { assertVisibilityAllowed } from './namespaces.js';
import { onUniqueViolation } from './unique.js';

type Found = { project: ProjectRow; namespace: NamespaceRow };

async function reload(app: AppContext, id: number): Promise<Found> {
  const found = await loadProjectById(app.db, id);
  if (!found) throw apiError(404, '404 Project Not Found');
  return found;
}

/** GitLab's visibility_level_allowed_as_fork: a fork is never more visible than the project it came from. */
async function assertVisibilityAllowedAsFork(trx: Transaction<DB>, project: ProjectRow, visibility: Visibility): Promise<void> {
  if (project.forked_from_project_id === null) return;
  const source = await trx.selectFrom('projects').select('visibility').where('id', '=', project.forked_from_project_id).executeTakeFirst();
  if (source && VISIBILITY_LEVEL[visibility] > (VISIBILITY_LEVEL[source.visibility as Visibility] ?? 0)) {
    throw validationError({ visibility_level: [`${visibility} is not allowed since the fork source project has lower visibility.`] });
  }
}

/** Applies PUT /projects/:id attributes. A new path leaves a redirect at the old one. */
export async function updateProject(app: AppContext, id: number, attrs: ProjectAttrs): Promise<Found> {
  if (attrs.name !== undefined || attrs.path !== undefined) validateNameAndPath(attrs.name, attrs.path);
  if (attrs.defaultBranch !== undefined) {
    // The branch must exist; git is read before the transaction (never inside it).
    const sha = await new GitRepository(repoPathFor(app, id)).branchSha(attrs.defaultBranch).catch(() => null);
    if (!sha) throw apiError(400, 'Could not set the default branch');
  }
  await onUniqueViolation(() => app.database.transaction(async (trx) => {
    const project = await app.database.forUpdate(trx.selectFrom('projects').selectAll().where('id', '=', id)).executeTakeFirst();
    if (!project) throw apiError(404, '404 Project Not Found');
    const ns = await trx.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    const name = attrs.name ?? project.name;
    const path = attrs.path ?? project.path;
    if (attrs.visibility !== undefined) {
      assertVisibilityAllowed(attrs.visibility, ns);
      await assertVisibilityAllowedAsFork(trx, project, attrs.visibility);
    }
    if (name !== project.name || path !== project.path) await assertNameAndPathFree(trx, ns, name, path, id);
    await trx
      .updateTable('projects')
      .set(Object.assign({}, attrs.settings, {
        name,
        path,
        ...(attrs.description !== undefined ? { description: attrs.description } : {}),
        ...(attrs.visibility !== undefined ? { visibility: attrs.visibility } : {}),
        ...(attrs.defaultBranch !== undefined ? { default_branch: attrs.defaultBranch } : {}),
        updated_at: nowIso(),
      }))
      .where('id', '=', id)
      .execute();
    if (path !== project.path) await movePrefix(trx, fullPath(project, ns), fullPath({ path }, ns));
    if (name !== project.name) {
      await trx.updateTable('routes').set({ name: fullName({ name }, ns) }).where('source_type', '=', 'Project').where('source_id', '=', id).execute();
    }
  }), () => validationError({ path: ['has already been taken'] }));
  if (attrs.defaultBranch !== undefined) await new GitRepository(repoPathFor(app, id)).setHead(attrs.defaultBranch);
  return reload(app, id);
}

/** Moves a project to another namespace; the old full path redirects to the new one. */
export async function transferProject(app: AppContext, id: number, target: NamespaceRow): Promise<Found> {
  await onUniqueViolation(() => app.database.transaction(async (trx) => {
    const project = await app.database.forUpdate(trx.selectFrom('projects').selectAll().where('id', '=', id)).executeTakeFirst();
    if (!project) throw apiError(404, '404 Project Not Found');
    const from = await trx.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    const to = await trx.selectFrom('namespaces').selectAll().where('id', '=', target.id).executeTakeFirst();
    if (!to) throw apiError(404, '404 Namespace Not Found');
    if (to.id === from.id) throw apiError(400, 'Project is already in this namespace.');
    await assertNameAndPathFree(trx, to, project.name, project.path, id);
    // As GitLab's transfer service: a project more visible than its new group drops to the group's level.
    const visibility = to.kind === 'group' && VISIBILITY_LEVEL[project.visibility as Visibility] > VISIBILITY_LEVEL[to.visibility as Visibility] ? to.visibility : project.visibility;
    await trx.updateTable('projects').set({ namespace_id: to.id, visibility, updated_at: nowIso() }).where('id', '=', id).execute();
    await movePrefix(trx, fullPath(project, from), fullPath(project, to));
    await trx.updateTable('routes').set({ name: fullName(project, to) }).where('source_type', '=', 'Project').where('source_id', '=', id).execute();
  }), () => validationError({ path: ['has already been taken'] }));
  return reload(app, id);
}

export async function setArchived(app: AppContext, id: number, archived: boolean): Promise<Found> {
  await app.db.updateTable('projects').set({ archived: archived ? 1 : 0, updated_at: nowIso() }).where('id', '=', id).execute();
  return reload(app, id);
}

/** Deletes the rows at once, then the repository directory (after the commit, never inside it). */
export async function deleteProject(app: AppContext, id: number): Promise<void> {
  await deleteProjectRows(app, id);
  await removeRepository(repoPathFor(app, id)).catch((err) => app.log.warn({ err, projectId: id }, 'could not remove repository'));
}
