// Cherry-picking and reverting a commit into a branch (GitLab's POST
// /projects/:id/repository/commits/:sha/cherry_pick and …/revert): a new commit on the branch's
// tip, built without a work tree, and the branch moved with compare-and-swap.
import type { FastifyInstance } from 'fastify';
import { ApiError, apiError, notFound } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { isGitError } from '../../../git/index.js';
import { branchMovedMessage } from '../../../services/repository/commit-actions.js';
import { commitPeople } from '../../../services/repository/identity.js';
import { writableRepo } from '../../../services/repository/project-repo.js';
import { notifyRefChanges } from '../../../services/repository/ref-hooks.js';
import { presentCommit } from '../entities/commit.js';
import { findCommit } from './commits.js';
import { pathParam, requiredString } from './common.js';
import { assertCanPushToBranch } from './protection.js';

/** GitLab's commit messages: `git cherry-pick -x`'s line, and `git revert`'s title and body. */
function cherryPickMessage(original: { id: string; message: string }): string {
  return `${original.message.trimEnd()}\n\n(cherry picked from commit ${original.id})`;
}

function revertMessage(original: { id: string; title: string }): string {
  return `Revert "${original.title.trim()}"\n\nThis reverts commit ${original.id}`;
}

async function applyToBranch(c: Ctx, revert: boolean) {
  const branch = requiredString(c, 'branch');
  const dryRun = c.params.bool('dry_run') ?? false;
  const custom = revert ? undefined : c.params.string('message');
  const pr = await writableRepo(c, pathParam(c, 'id'));
  // authorize_push_to_branch! comes first, as GitLab.
  await assertCanPushToBranch(c, pr, branch, 403);
  const commit = await findCommit(pr, pathParam(c, 'sha'));
  const tip = await pr.repo.branchSha(branch);
  if (!tip) throw notFound('Branch');
  const user = c.requireUser();
  const people = commitPeople(user);
  const outcome = await pr.repo.applyChange(
    {
      commit: commit.id,
      onto: tip,
      message: (original) => (revert ? revertMessage(original) : custom?.trim() ? custom : cherryPickMessage(original)),
      // A cherry-pick keeps the commit's author; a revert is the caller's own change.
      author: revert ? people.author : null,
      committer: people.committer,
    },
    revert,
  );
  if (!outcome.ok) {
    const act = revert ? 'revert' : 'cherry-pick';
    const done = revert ? 'reverted' : 'cherry-picked';
    const message = `Sorry, we cannot ${act} this commit automatically. This commit may already have been ${done}, or a more recent commit may have updated some of its content.`;
    throw new ApiError(400, { message, error_code: outcome.reason, ...(dryRun ? { dry_run: 'error' } : {}) });
  }
  if (dryRun) {
    c.status(200);
    return { dry_run: 'success' };
  }
  try {
    await pr.repo.updateRef(`refs/heads/${branch}`, outcome.sha, tip);
  } catch (err) {
    if (isGitError(err, 'cas_failed')) throw apiError(400, branchMovedMessage(branch));
    throw err;
  }
  await notifyRefChanges(c.app, pr.project.id, [{ ref: `refs/heads/${branch}`, before: tip, after: outcome.sha }], user.id);
  const created = await findCommit(pr, outcome.sha);
  c.status(201);
  return presentCommit(created, pr.webUrl);
}

// POST /projects/:id/repository/commits/:sha/cherry_pick
function cherryPick(c: Ctx) {
  return applyToBranch(c, false);
}

// POST /projects/:id/repository/commits/:sha/revert
function revertCommit(c: Ctx) {
  return applyToBranch(c, true);
}

export function registerCommitChangeRoutes(app: FastifyInstance): void {
  route(app, 'POST', '/projects/:id/repository/commits/:sha/cherry_pick', cherryPick);
  route(app, 'POST', '/projects/:id/repository/commits/:sha/revert', revertCommit);
}
