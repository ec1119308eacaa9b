// Creating a project: the row and its route in one transaction, then (outside it, because git is
// slow I/O) the bare repository and, when asked, a first commit with README.md.
import { protectDefaultBranch } from '../repository/protected-refs-write.js';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import type { DB } from '../../db/types.js';
import { apiError, forbidden, validationError } from '../../http/errors.js';
import { cloneBareRepository, GitRepository, initBareRepository, isGitError, isValidNewBranchName, removeRepository } from '../../git/repository.js';
import { AccessLevel } from '../access.js';
import { insertEvents } from '../event-rows.js';
import { pathFromName } from '../paths.js';
import { claimRoute, pathTaken } from '../routes.js';
import { measureRepository } from '../repository/repository-size.js';
import { notifyRefChanges } from '../repository/ref-hooks.js';
import type { ProjectAttrs } from './attrs.js';
import { validateNameAndPath } from './attrs.js';
import { onUniqueViolation } from './unique.js';
import { fullName, fullPath, loadProjectById, repoPathFor, type NamespaceRow, type ProjectRow } from './lookup.js';
import { assertVisibilityAllowed } from './namespaces.js';

export interface NewProject extends ProjectAttrs {
  namespace: NamespaceRow;
  initializeWithReadme?: boolean;
  /** Makes the project a fork of `source`: its repository is a copy (of `branch` only, when given). */
  fork?: { source: ProjectRow; branch?: string; mrDefaultTargetSelf?: boolean };
}

/** Name and path clashes inside a namespace, reported together as GitLab does. */
export async function assertNameAndPathFree(
  trx: Transaction<DB>,
  ns: NamespaceRow,
  name: string,
  path: string,
  exceptId?: number,
): Promise<void> {
  const errors: Record<string, string[]> = {};
  const sameName = await trx
    .selectFrom('projects')
    .select('id')
    .where('namespace_id', '=', ns.id)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .executeTakeFirst();
  if (sameName && sameName.id !== exceptId) errors.name = ['has already been taken'];
  const route = await trx
    .selectFrom('routes')
    .select(['source_type', 'source_id'])
    .where('path_lower', '=', `${ns.full_path}/${path}`.toLowerCase())
    .executeTakeFirst();
  if (route && !(route.source_type === 'Project' && route.source_id === exceptId)) errors.path = ['has already been taken'];
  // GitLab's check_wiki_path_conflict: `x.wiki` beside a project `x` (or `x` beside `x.wiki`) would
  // take over the other's wiki repository URL (`<namespace>/x.wiki.git`).
  if (!errors.path) {
    const lower = `${ns.full_path}/${path}`.toLowerCase();
    const sibling = lower.endsWith('.wiki') ? lower.slice(0, -'.wiki'.length) : `${lower}.wiki`;
    const other = await trx.selectFrom('routes').select(['source_type', 'source_id']).where('path_lower', '=', sibling).executeTakeFirst();
    if (other && other.source_type === 'Project' && other.source_id !== exceptId) errors.path = ['has already been taken'];
  }
  if (Object.keys(errors).length > 0) throw validationError(errors);
}

async function assertWithinLimit(trx: Transaction<DB>, owner: UserRow, ns: NamespaceRow): Promise<void> {
  if (ns.kind !== 'user' || owner.is_admin) return;
  if (owner.projects_limit <= 0) {
    throw apiError(403, ['Personal project creation is not allowed. Please contact your administrator with questions']);
  }
  const row = await trx
    .selectFrom('projects')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('namespace_id', '=', ns.id)
    .executeTakeFirst();
  if (Number(row?.n ?? 0) >= owner.projects_limit) {
    throw apiError(403, [`Your project limit is ${owner.projects_limit} projects! Please contact your administrator to increase it`]);
  }
}

/**
 * Creates a project owned by `creator` in `input.namespace`. The caller has checked that the
 * creator may create projects there.
 */
export async function createProject(app: AppContext, creator: UserRow, input: NewProject): Promise<{ project: ProjectRow; namespace: NamespaceRow }> {
  const name = input.name ?? input.path!;
  const path = input.path ?? pathFromName(name);
  validateNameAndPath(name, path);
  const visibility = input.visibility ?? 'private';
  assertVisibilityAllowed(visibility, input.namespace);
  const branch = input.defaultBranch ?? 'main';
  if (!isValidNewBranchName(branch)) throw validationError({ default_branch: ['is invalid'] });

  const pathTakenError = () => validationError({ path: ['has already been taken'] });
  const id = await onUniqueViolation(() => app.database.transaction(async (trx) => {
    const ns = await app.database.forUpdate(trx.selectFrom('namespaces').selectAll().where('id', '=', input.namespace.id)).executeTakeFirst();
    if (!ns) throw validationError({ namespace: ['is not valid'] });
    await assertWithinLimit(trx, creator, ns);
    await assertNameAndPathFree(trx, ns, name, path);
    if (await pathTaken(trx, `${ns.full_path}/${path}`)) throw validationError({ path: ['has already been taken'] });
    const now = nowIso();
    const inserted = await trx
      .insertInto('projects')
      .values({
        name,
        path,
        namespace_id: ns.id,
        description: input.description ?? null,
        visibility,
        default_branch: null,
        archived: 0,
        creator_id: creator.id,
        last_activity_at: now,
        created_at: now,
        updated_at: now,
        ...(input.settings as object),
        ...(input.fork ? forkColumns(input.fork.source, input.fork.mrDefaultTargetSelf) : {}),
      } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    if (input.fork) await countFork(trx, input.fork.source.id);
    await claimRoute(trx, 'Project', inserted.id, fullPath({ path }, ns), fullName({ name }, ns));
    // The owner of a personal namespace is an Owner member of its projects, as in GitLab.
    if (ns.kind === 'user' && ns.owner_id !== null) {
      await trx
        .insertInto('members')
        .values({ source_type: 'Project', source_id: inserted.id, user_id: ns.owner_id, access_level: AccessLevel.OWNER, expires_at: null, created_by_id: creator.id, member_role_id: null, created_at: now, updated_at: now })
        .execute();
    }
    // GitLab's create_project event (forks too): the creator "created" the project, its target.
    await insertEvents(trx, [{ projectId: inserted.id, authorId: creator.id, action: 'created', targetType: 'Project', targetId: inserted.id }]);
    return inserted.id;
  }), pathTakenError);

  const repoPath = repoPathFor(app, id);
  let created = false;
  try {
    try {
      if (input.fork) await cloneBareRepository(repoPathFor(app, input.fork.source.id), repoPath, { branch: input.fork.branch });
      else await initBareRepository(repoPath, { defaultBranch: branch });
      created = true;
    } catch (err) {
      // A request on the new project (git, or the repository API's openRepository) ran between the
      // commit above and here and made the repository first: keep it, and point HEAD at our branch.
      if (!isGitError(err, 'exists')) throw err;
      await new GitRepository(repoPath).setHead(branch);
    }
    if (input.initializeWithReadme) {
      const repo = new GitRepository(repoPath);
      const content = `# ${name}\n\n${input.description ?? ''}\n`.replace(/\n\n\n$/, '\n');
      const readme = await repo.commitFiles({
        branch,
        startSha: null,
        message: 'Initial commit',
        author: { name: creator.name, email: creator.email },
        actions: [{ action: 'create', file_path: 'README.md', content }],
        expectedOldSha: null,
      });
      await app.db.updateTable('projects').set({ default_branch: branch }).where('id', '=', id).execute();
      await measureRepository(app, id);
      await protectDefaultBranch(app, id, branch);
      // The README's branch is a push by the creator, as in GitLab (its activity: "pushed new branch").
      await notifyRefChanges(app, id, [{ ref: `refs/heads/${branch}`, before: null, after: readme }], creator.id);
    } else if (input.fork) {
      const repo = new GitRepository(repoPath);
      const head = input.fork.branch ?? input.fork.source.default_branch;
      if (head !== null && (await repo.branchSha(head).catch(() => null))) {
        await app.db.updateTable('projects').set({ default_branch: head }).where('id', '=', id).execute();
        await measureRepository(app, id);
        await protectDefaultBranch(app, id, head);
      }
    }
  } catch (err) {
    // Without its repository the project is unusable: undo the row so the name can be retried.
    await deleteProjectRows(app, id).catch(() => undefined);
    if (input.fork) await uncountFork(app.db, input.fork.source.id).catch(() => undefined);
    // Only a repository made here: one made by a racing request may hold what it pushed.
    if (created) await removeRepository(repoPath).catch(() => undefined);
    throw err;
  }
  const found = await loadProjectById(app.db, id);
  if (!found) throw forbidden();
  return found;
}

/** The fork columns of a new fork of `source`; the settings GitLab's ForkService copies come with them. */
function forkColumns(source: ProjectRow, mrDefaultTargetSelf: boolean | undefined) {
  return {
    forked_from_project_id: source.id,
    fork_network_root_id: source.fork_network_root_id ?? source.id,
    mr_default_target_self: mrDefaultTargetSelf ? 1 : 0,
    issues_access_level: source.issues_access_level,
    repository_access_level: source.repository_access_level,
    merge_requests_access_level: source.merge_requests_access_level,
    forking_access_level: source.forking_access_level,
    wiki_access_level: source.wiki_access_level,
    builds_access_level: source.builds_access_level,
    snippets_access_level: source.snippets_access_level,
    pages_access_level: source.pages_access_level,
    ci_config_path: source.ci_config_path,
    suggestion_commit_message: source.suggestion_commit_message,
    merge_commit_template: source.merge_commit_template,
    squash_commit_template: source.squash_commit_template,
  };
}

/** One more direct fork of `sourceId`, which becomes the root of a fork network if it was none's. */
async function countFork(trx: Transaction<DB>, sourceId: number): Promise<void> {
  await trx
    .updateTable('projects')
    .set((eb) => ({ forks_count: eb('forks_count', '+', 1), fork_network_root_id: eb.fn.coalesce('fork_network_root_id', 'id') }))
    .where('id', '=', sourceId)
    .execute();
}

export async function uncountFork(db: Kysely<DB>, sourceId: number): Promise<void> {
  await db
    .updateTable('projects')
    .set((eb) => ({ forks_count: eb.case().when('forks_count', '>', 0).then(eb('forks_count', '-', 1)).else(0).end() }))
    .where('id', '=', sourceId)
    .execute();
}

/**
 * Modules with rows that belong to a project (merge requests, protected branches, …) register a
 * hook here; it runs inside the deleting transaction, before the project row goes.
 */
export const projectDeletionHooks: Array<(app: AppContext, trx: Transaction<DB>, projectId: number) => Promise<void>> = [];

/** Deletes a project's rows (project, route, redirects, memberships) in one transaction. */
export async function deleteProjectRows(app: AppContext, id: number, trxIn?: Transaction<DB>): Promise<void> {
  const run = async (trx: Transaction<DB>) => {
    for (const hook of projectDeletionHooks) await hook(app, trx, id);
    await trx.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', '=', id).execute();
    await trx.deleteFrom('routes').where('source_type', '=', 'Project').where('source_id', '=', id).execute();
    await trx.deleteFrom('redirect_routes').where('source_type', '=', 'Project').where('source_id', '=', id).execute();
    await trx.deleteFrom('projects').where('id', '=', id).execute();
  };
  if (trxIn) await run(trxIn);
  else await app.database.transaction(run);
}
