// Collaboration on merge requests from forks (GitLab's `allow_collaboration`, Project#
// branch_allows_collaboration?): members of the target project who may push to the target branch
// may push to the fork's source branch of an open merge request that allows it, and to nothing
// else of the fork; as GitLab, neither project may be private and the source branch not protected.
import type { AppContext } from '../../context.js';
import type { UserRow } from '../../db/repositories/users.js';
import { canReadProject } from '../access.js';
import { effectiveAccess, loadProjectById } from './lookup.js';
import { loadRefProtection, refActor } from '../repository/protected-refs.js';
import { canReadRepository } from '../repository/project-repo.js';

/**
 * The fork's branches the user may push to through collaboration: the source branches of open
 * merge requests from `forkId` into other projects that allow collaboration, where the user may
 * push to (or merge into) the target branch (GitLab's can_push_to_branch? of the target).
 */
export async function collaborationBranches(app: AppContext, user: UserRow | null, forkId: number): Promise<string[]> {
  if (!user) return [];
  // GitLab's collaborative_push_possible?: neither project private, the source branch unprotected.
  const fork = await loadProjectById(app.db, forkId);
  if (!fork || fork.project.visibility === 'private') return [];
  const forkProtection = await loadRefProtection(app, fork.project, fork.namespace);
  const mrs = await app.db
    .selectFrom('merge_requests')
    .select(['project_id', 'source_branch', 'target_branch'])
    .where('source_project_id', '=', forkId)
    .where('project_id', '!=', forkId)
    .where('state', '=', 'opened')
    .where('allow_collaboration', '=', 1)
    .limit(1000)
    .execute();
  if (!mrs.length) return [];
  const out = new Set<string>();
  const targets = new Map<number, Awaited<ReturnType<typeof targetRights>>>();
  for (const mr of mrs) {
    if (out.has(mr.source_branch) || forkProtection.isProtectedBranch(mr.source_branch)) continue;
    let rights = targets.get(mr.project_id);
    if (rights === undefined) {
      rights = await targetRights(app, user, mr.project_id);
      targets.set(mr.project_id, rights);
    }
    if (rights && rights.canPush(mr.target_branch)) out.add(mr.source_branch);
  }
  return [...out];
}

async function targetRights(app: AppContext, user: UserRow, projectId: number) {
  const found = await loadProjectById(app.db, projectId);
  if (!found || found.project.archived || found.project.visibility === 'private') return null;
  const access = await effectiveAccess(app.db, user, found.project, found.namespace);
  if (!canReadProject(user, found.project, access) || !canReadRepository(found.project, user, access)) return null;
  const actor = refActor(user, access, found.project.archived);
  const protection = await loadRefProtection(app, found.project, found.namespace);
  return { canPush: (branch: string) => protection.canPushToBranch(actor, branch) || protection.canMergeToBranch(actor, branch) };
}
