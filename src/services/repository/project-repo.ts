// The project and its bare repository for repository routes and git over HTTP: who may read, who
// may write, and the repository on disk (created on first use when a project has none yet).
import { AccessLevel, visibleWithoutMembership } from '../access.js';
import type { UserRow } from '../../db/repositories/users.js';
import { forbidden } from '../../http/errors.js';
import type { Ctx } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { GitRepository, initBareRepository, isGitError } from '../../git/index.js';
import { adoptDefaultBranch } from './default-branch.js';
import { findProject, fullPath, repoPathFor, type FoundProject, type ProjectRow } from '../projects/lookup.js';

export interface ProjectRepo extends FoundProject {
  repo: GitRepository;
  /** `<base>/<full_path>`: what web_url fields start with. */
  webUrl: string;
}

/**
 * GitLab's read_code (download_code) rule. The repository feature's own level comes first:
 * `disabled` hides the repository from everyone, `private` (members only) needs Reporter.
 * Otherwise Reporters and above read it, and everyone else only where the project's visibility
 * alone lets them see it (public, or internal for signed-in non-external users): a Guest of a
 * PRIVATE project sees the project (issues, members) but not its code, as in GitLab.
 * Administrators have Owner access, so they pass unless the feature is disabled.
 */
export function canReadRepository(project: Pick<ProjectRow, 'repository_access_level' | 'visibility'>, user: UserRow | null, access: number): boolean {
  if (project.repository_access_level === 'disabled') return false;
  if (access >= AccessLevel.REPORTER) return true;
  if (project.repository_access_level === 'private') return false;
  return visibleWithoutMembership(project.visibility, user);
}

/** The bare repository of a project, initialised if the directory is missing (crash, import). */
export async function openRepository(app: AppContext, projectId: number): Promise<GitRepository> {
  const repo = new GitRepository(repoPathFor(app, projectId));
  if (await repo.exists()) return repo;
  try {
    await initBareRepository(repo.path);
  } catch (err) {
    // Another request created it at the same moment: fine.
    if (!isGitError(err, 'exists')) throw err;
  }
  return repo;
}

/**
 * Read access to the repository (canReadRepository). A caller who may see the project but not its
 * code gets 403, as GitLab's `authorize! :download_code` (the project's existence is no secret to
 * them); one who may not see the project gets findProject's 404.
 */
export async function readableRepo(c: Ctx, rawId: string): Promise<ProjectRepo> {
  const found = await findProject(c, rawId);
  if (!canReadRepository(found.project, c.user, found.access)) throw forbidden();
  const repo = await openRepository(c.app, found.project.id);
  if (found.project.default_branch === null && !(await repo.isEmpty())) {
    // A branch exists but the row never learnt of it (a crash between the ref move and the
    // database update): adopt one now, so the database catches up with the repository.
    found.project = Object.assign({}, found.project, { default_branch: await adoptDefaultBranch(c.app, found.project.id, repo, []) });
  }
  return Object.assign({}, found, { repo, webUrl: `${c.base}/${fullPath(found.project, found.namespace)}` });
}

/**
 * Write access: Developer and above (401 anonymous, 403 below Developer), and never on an archived
 * project (403), as GitLab's push_code permission.
 */
export async function writableRepo(c: Ctx, rawId: string): Promise<ProjectRepo> {
  const found = await readableRepo(c, rawId);
  if (found.access < AccessLevel.DEVELOPER) {
    c.requireUser();
    throw forbidden();
  }
  if (found.project.archived) throw forbidden();
  return found;
}
