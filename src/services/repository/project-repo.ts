// The project and its bare repository for repository routes and git over HTTP: who may read, who
// may write, and the repository on disk (created on first use when a project has none yet).
import { AccessLevel } from '../access.js';
import { forbidden, notFound } from '../../http/errors.js';
import type { Ctx } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { GitRepository, initBareRepository, isGitError } from '../../git/index.js';
import { adoptDefaultBranch } from './default-branch.js';
import { findProject, fullPath, repoPathFor, type FoundProject } from '../projects/lookup.js';

export interface ProjectRepo extends FoundProject {
  repo: GitRepository;
  /** `<base>/<full_path>`: what web_url fields start with. */
  webUrl: string;
}

/**
 * The repository feature's own visibility: `disabled` hides the repository from everyone,
 * `private` from non-members (administrators see everything).
 */
export function canReadRepository(repositoryAccessLevel: string, access: number): boolean {
  if (repositoryAccessLevel === 'disabled') return false;
  if (repositoryAccessLevel === 'private') return access >= AccessLevel.GUEST;
  return true;
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

/** Read access to the repository (Guest and above, or anyone on a public project). */
export async function readableRepo(c: Ctx, rawId: string): Promise<ProjectRepo> {
  const found = await findProject(c, rawId);
  if (!canReadRepository(found.project.repository_access_level, found.access)) throw notFound('Project');
  const repo = await openRepository(c.app, found.project.id);
  if (found.project.default_branch === null && !(await repo.isEmpty())) {
    // A branch exists but the row never learnt of it (a crash between the ref move and the
    // database update): adopt one now, so the database catches up with the repository.
    found.project = { ...found.project, default_branch: await adoptDefaultBranch(c.app, found.project.id, repo, []) };
  }
  return { ...found, repo, webUrl: `${c.base}/${fullPath(found.project, found.namespace)}` };
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
