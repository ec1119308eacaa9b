// Cherry-picking and reverting a commit into a branch (GitLab's POST
// /projects/:id/repository/commits/:sha/cherry_pick and …/revert): a new commit on the branch's
// tip, built without a work tree, and the branch moved with compare-and-swap.
import type { FastifyInstance } from 'fastify';
import { ApiError, apiError, notFound } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { isGitError } from '../../../git/index.js';
import { branchMovedMessage } from '../../../services/repository/commit-actions.js';
import { commitPeople } from '../../../services/repository/identity.js';
import { readableRepo } from '../../../services/repository/project-repo.js';
import { notifyRefChanges } from '../../../services/repository/ref-hooks.js';
import { presentCommit } from '../entities/commit.js';
import { findCommit } from './commits.js';
import { pathParam, requiredString } from './common.js';
import { assertCanPushToBranch } from './protection.js';

/** Commit#title: the first line, cut to 80 characters and `...` from 100 on; blank is "No commit message". */
export function commitTitle(message: string): string {
  const first = message.split(/\r?\n|\r/, 1)[0]!.trim();
  if (first === '') return 'No commit message';
  return first.length >= 100 ? `${first.slice(0, 80)}...` : first;
}

/** The merge request a commit merged (its merge or squash commit), as GitLab's merged_merge_request. */
async function mergedRequestOf(c: Ctx, projectId: number, sha: string) {
  return c.app.db
    .selectFrom('merge_requests')
    .select(['iid', 'start_sha', 'head_sha'])
    .where('project_id', '=', projectId)
    .where('state', '=', 'merged')
    .where((eb) => eb.or([eb('merge_commit_sha', '=', sha), eb('squash_commit_sha', '=', sha)]))
    .orderBy('id')
    .executeTakeFirst();
}

async function applyToBranch(c: Ctx, revert: boolean) {
  // The project (and reading its code) first, then the parameters, then push access: GitLab's order.
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const branch = requiredString(c, 'branch');
  const dryRun = c.params.bool('dry_run') ?? false;
  const custom = revert ? undefined : c.params.string('message');
  await assertCanPushToBranch(c, pr, branch, 403);
  const commit = await findCommit(pr, pathParam(c, 'sha'));
  const tip = await pr.repo.branchSha(branch);
  if (!tip) throw notFound('Branch');
  const user = c.requireUser();
  const people = commitPeople(user);
  const mr = await mergedRequestOf(c, pr.project.id, commit.id);
  let message: string;
  if (revert) {
    message = `Revert "${commitTitle(commit.message)}"\n\n${mr ? `This reverts merge request !${mr.iid}` : `This reverts commit ${commit.id}`}`;
  } else if (custom?.trim()) {
    message = custom;
  } else {
    // Commit#cherry_pick_message (the merge request's commits listed, oldest first), then the
    // original author as a co-author: the pick is the caller's own commit (GitLab 17+).
    const lines = [`(cherry-picked from commit ${commit.id})`];
    if (mr?.start_sha && mr.head_sha) {
      const shas = await pr.repo.commitsBetween(mr.start_sha, mr.head_sha, { noMerges: false }).catch(() => [] as string[]);
      const picked = await Promise.all(shas.map((s) => pr.repo.getCommit(s)));
      if (picked.length > 0) lines.push('', ...picked.filter((p) => p !== null).map((p) => `${p!.short_id} ${commitTitle(p!.message)}`));
    }
    message = `${commit.message.trimEnd()}\n\n${lines.join('\n')}\n\nCo-authored-by: ${commit.author_name} <${commit.author_email}>`;
  }
  // The new commit is the caller's, author and committer alike (GitLab passes the caller as author).
  const outcome = await pr.repo.applyChange({ commit: commit.id, onto: tip, message: () => message, author: people.author, committer: people.committer }, revert);
  if (!outcome.ok) {
    const kind = mr ? 'Merge request' : 'Commit';
    const status = `${kind} ${revert ? 'revert' : 'cherry-pick'} failed`;
    const detail = "Can't perform this action automatically. It may have already been done, or a more recent commit may have updated some of this content. Please perform this action locally.";
    throw new ApiError(400, { message: `${status}: ${detail}`, error_code: outcome.reason, ...(dryRun ? { dry_run: 'error' } : {}) });
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
