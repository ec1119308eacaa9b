// The protected branch and tag checks of the API's writers, with GitLab's wording: what its
// pre-receive checks (Gitlab::Checks::BranchCheck, TagCheck) answer when the change comes from the
// API, and the commits API's authorize_push_to_branch!.
import { apiError, forbidden } from '../../../http/errors.js';
import type { Ctx } from '../../../http/route.js';
import type { ProjectRepo } from '../../../services/repository/project-repo.js';
import { defaultsProtect, loadRefProtection, type RefProtection } from '../../../services/repository/protected-refs.js';
import { actorFor } from './common.js';

const PUSH_DENIED = 'You are not allowed to push into this branch';

/** For writers, who may meet an empty repository: the rules and the namespace's defaults. */
export function protectionOf(c: Ctx, pr: ProjectRepo): Promise<RefProtection> {
  return loadRefProtection(c.app, pr.project, pr.namespace);
}

/** Whether the repository counts as empty for ProtectedBranch.protected? (asked only when it matters). */
async function emptyForProtection(pr: ProjectRepo, protection: RefProtection, branch: string): Promise<boolean> {
  if (!defaultsProtect(protection.defaults)) return false;
  if ((await pr.repo.branchSha(branch)) !== null) return false;
  return pr.repo.isEmpty();
}

/**
 * A commit to `branch` through the API. The commits API answers 403 (`403 Forbidden - You are not
 * allowed to push into this branch`, authorize_push_to_branch!), the files API 400 (the same
 * words from its service's validation).
 */
export async function assertCanPushToBranch(c: Ctx, pr: ProjectRepo, branch: string, status: 400 | 403): Promise<void> {
  const protection = await protectionOf(c, pr);
  const empty = await emptyForProtection(pr, protection, branch);
  if (protection.canPushToBranch(actorFor(c, pr), branch, empty)) return;
  throw status === 403 ? forbidden(PUSH_DENIED) : apiError(400, PUSH_DENIED);
}

/**
 * BranchCheck's creation rules through the API: whoever may push to the protected name may create
 * it; whoever may only merge into it may create it from a commit that a protected branch already
 * holds.
 */
export async function assertCanCreateBranch(c: Ctx, pr: ProjectRepo, branch: string, sha: string): Promise<void> {
  const protection = await protectionOf(c, pr);
  const empty = await emptyForProtection(pr, protection, branch);
  if (!protection.isProtectedBranch(branch, empty)) return;
  const actor = actorFor(c, pr);
  if (protection.canPushToBranch(actor, branch, empty)) return;
  if (!protection.canMergeToBranch(actor, branch, empty)) throw apiError(400, 'You are not allowed to create protected branches on this project.');
  const holders = await pr.repo.refsContaining(sha, 'branch');
  if (!holders.some((name) => protection.isProtectedBranch(name))) {
    throw apiError(400, 'You can only use an existing protected branch ref as the basis of a new protected branch.');
  }
}

/** BranchCheck's deletion rule through the API: a protected branch goes only by a Maintainer's hand. */
export async function assertCanDeleteBranch(c: Ctx, pr: ProjectRepo, branch: string): Promise<void> {
  const protection = await protectionOf(c, pr);
  if (!protection.isProtectedBranch(branch)) return;
  if (!protection.canDeleteProtectedBranch(actorFor(c, pr))) {
    throw apiError(400, 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.');
  }
}

/** TagCheck's creation rule: a protected tag name needs its create access level. */
export async function assertCanCreateTag(c: Ctx, pr: ProjectRepo, tag: string, status = 400): Promise<void> {
  const protection = await protectionOf(c, pr);
  if (!protection.canCreateTag(actorFor(c, pr), tag)) throw apiError(status, 'You are not allowed to create this tag as it is protected.');
}

/** A protected tag goes only by a Maintainer's hand: GitLab's TagPolicy (delete_protected_tag) answers 403. */
export async function assertCanDeleteTag(c: Ctx, pr: ProjectRepo, tag: string): Promise<void> {
  const protection = await protectionOf(c, pr);
  if (!protection.isProtectedTag(tag)) return;
  if (!protection.canDeleteProtectedBranch(actorFor(c, pr))) throw forbidden();
}
