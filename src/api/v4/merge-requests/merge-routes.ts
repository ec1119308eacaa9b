// Merging: PUT …/merge, cancel auto-merge, PUT …/rebase, GET …/merge_ref (spec §4.9, reference §5.7).
import { notifyRefChanges } from '../../../services/repository/ref-hooks.js';
import type { FastifyInstance } from 'fastify';
import { route } from '../../../http/route.js';
import { apiError, forbidden, unauthorized } from '../../../http/errors.js';
import { isGitError } from '../../../git/index.js';
import { branchSha, fetchCommit, fromFork, refreshMergeStatus, repoFor, sourceInNetwork } from '../../../services/merge-requests/git-ops.js';
import { effectiveAccess, loadProjectById } from '../../../services/projects/lookup.js';
import { acceptMergeRequest, canMerge, cancelAutoMerge, protectionFor } from '../../../services/merge-requests/merge.js';
import { refActor } from '../../../services/repository/protected-refs.js';
import { findMrById } from '../../../services/merge-requests/rows.js';
import { nowIso } from '../../../db/database.js';
import { mrFromPath, presentOne } from './context.js';

export function registerMergeRequestMergeRoutes(app: FastifyInstance): void {
  // PUT /projects/:id/merge_requests/:merge_request_iid/merge
  route(app, 'PUT', '/projects/:id/merge_requests/:merge_request_iid/merge', async function mergeMr(c) {
    const p = await mrFromPath(c, { write: true });
    const user = c.requireUser();
    const sha = c.params.string('sha') || undefined;
    const mergeCommitMessage = c.params.string('merge_commit_message') || undefined;
    const squashCommitMessage = c.params.string('squash_commit_message') || undefined;
    const squash = c.params.bool('squash');
    const shouldRemoveSourceBranch = c.params.bool('should_remove_source_branch');
    const autoMerge = c.params.bool('merge_when_pipeline_succeeds') === true || c.params.bool('auto_merge') === true;
    const mr = await acceptMergeRequest(c.app, p.info, p.mr, user, p.access, {
      sha,
      mergeCommitMessage,
      squashCommitMessage,
      squash,
      shouldRemoveSourceBranch,
      autoMerge,
    });
    return presentOne(c, p, mr);
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/cancel_merge_when_pipeline_succeeds
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/cancel_merge_when_pipeline_succeeds', async function cancelMwps(c) {
    const p = await mrFromPath(c, { write: true });
    const user = c.requireUser();
    // can_cancel_auto_merge?: whoever may merge it, or its author.
    if (!canMerge(user, p.access, p.info, await protectionFor(c.app, p.info), p.mr.target_branch) && p.mr.author_id !== user.id) throw unauthorized();
    const mr = await cancelAutoMerge(c.app, p.mr);
    return presentOne(c, p, mr);
  });

  // PUT /projects/:id/merge_requests/:merge_request_iid/rebase
  route(app, 'PUT', '/projects/:id/merge_requests/:merge_request_iid/rebase', async function rebaseMr(c) {
    const p = await mrFromPath(c, { write: true });
    const user = c.requireUser();
    c.params.bool('skip_ci');
    // authorize_push_to_merge_request!: the source branch must exist, and its protection decides.
    // From a fork, the branch, its rules and the access that counts are the fork's.
    const fork = fromFork(p.mr);
    const sourceInfo = !fork ? p.info : (await sourceInNetwork(c.app, p.mr)) ? await loadProjectById(c.app.db, p.mr.source_project_id) : null;
    const repo = repoFor(c.app, p.mr.source_project_id);
    const [source, target] = await Promise.all([sourceInfo ? branchSha(repo, p.mr.source_branch) : null, branchSha(repoFor(c.app, p.mr.project_id), p.mr.target_branch)]);
    if (!source || !sourceInfo) throw forbidden('Source branch does not exist');
    const sourceAccess = fork ? await effectiveAccess(c.app.db, user, sourceInfo.project, sourceInfo.namespace) : p.access;
    const actor = refActor(user, sourceAccess, sourceInfo.project.archived);
    if (!(await protectionFor(c.app, sourceInfo)).canPushToBranch(actor, p.mr.source_branch)) throw forbidden('Cannot push to source branch');
    if (p.mr.state !== 'opened') throw forbidden('This merge request cannot be rebased');
    if (!target) throw forbidden('Cannot push to source branch');
    if (fork) await fetchCommit(c.app, p.mr.project_id, repo, target);
    // GITLAB-COMPAT: the rebase runs before the response (GitLab queues it); the response keeps
    // GitLab's shape, and failures land in merge_error as they do in GitLab.
    let error: string | null = null;
    try {
      const commits = await repo.commitsBetween(target, source);
      const tip = await repo.rebaseOnto({ commits, onto: target, committer: { name: user.name, email: user.email } });
      if (tip !== source) {
        await repo.updateRef(`refs/heads/${p.mr.source_branch}`, tip, source);
        await notifyRefChanges(c.app, p.mr.source_project_id, [{ ref: `refs/heads/${p.mr.source_branch}`, before: source, after: tip }], user.id);
      }
    } catch (err) {
      if (isGitError(err, 'conflict')) error = 'Rebase failed: Rebase locally, resolve all conflicts, then push the branch.';
      else if (isGitError(err, 'cas_failed')) throw apiError(409, 'Failed to enqueue the rebase operation, possibly due to a long-lived transaction. Try again later.');
      else throw err;
    }
    await c.app.db.updateTable('merge_requests').set({ merge_error: error, updated_at: nowIso() }).where('id', '=', p.mr.id).execute();
    const fresh = await findMrById(c.app.db, p.mr.id);
    if (fresh) await refreshMergeStatus(c.app, fresh);
    c.status(202);
    return { rebase_in_progress: true };
  });

  // GET /projects/:id/merge_requests/:merge_request_iid/merge_ref
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/merge_ref', async function mergeRef(c) {
    const p = await mrFromPath(c);
    const mr = await refreshMergeStatus(c.app, p.mr);
    if (mr.state !== 'opened' || mr.merge_status !== 'can_be_merged' || !mr.checked_source_sha || !mr.checked_target_sha) {
      throw apiError(400, 'Merge request is not mergeable');
    }
    const repo = repoFor(c.app, mr.project_id);
    const ref = `refs/merge-requests/${mr.iid}/merge`;
    const identity = { name: 'Labwright', email: 'noreply@labwright.local' };
    try {
      const sha = await repo.createMergeCommit({
        ours: mr.checked_target_sha,
        theirs: mr.checked_source_sha,
        message: `Merge branch '${mr.source_branch}' into '${mr.target_branch}'`,
        author: identity,
      });
      const old = await repo.resolveRef(ref);
      await repo.updateRef(ref, sha, old).catch(() => undefined);
      return { commit_id: sha };
    } catch (err) {
      if (isGitError(err, 'conflict')) throw apiError(400, 'Merge request is not mergeable');
      throw err;
    }
  });
}
