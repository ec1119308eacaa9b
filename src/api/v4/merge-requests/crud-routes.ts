// One merge request: create, read, update, delete (spec §4.2, §4.6–§4.8).
import type { FastifyInstance } from 'fastify';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import { forbidden, notFound, unprocessable } from '../../../http/errors.js';
import type { UserRow } from '../../../db/repositories/users.js';
import { canReadProject } from '../../../services/access.js';
import { sameForkNetwork } from '../../../services/projects/forks.js';
import { effectiveAccess, loadProjectById } from '../../../services/projects/lookup.js';
import { canReadRepository } from '../../../services/repository/project-repo.js';
import { AccessLevel } from '../../../services/access.js';
import { branchesStillAt, mergeStatusBranches, refreshMergeStatus } from '../../../services/merge-requests/git-ops.js';
import { checkSpam } from '../../../services/merge-requests/spam.js';
import { createMergeRequest, deleteMergeRequest, UPDATE_PARAMS, updateMergeRequest } from '../../../services/merge-requests/write.js';
import { canReadMrs, canUpdate, mrFromPath, mrProject, presentOne, type MrProject } from './context.js';
import { parseAttributes, parseCreate } from './params.js';

function captchaHeaders(headers: Record<string, unknown>) {
  const one = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { response: one(headers['x-service-captcha-response']), spamLogId: one(headers['x-service-spam-log-id']) };
}

/**
 * The project a new merge request goes to: this one, or (`target_project_id`) another project of
 * its fork network, where the caller must be able to open merge requests (GitLab's
 * create_merge_request_in: read the code, not archived; merge requests off is the model's 422).
 */
async function forkTarget(c: Ctx, user: UserRow, source: MrProject, targetId: number | undefined): Promise<MrProject> {
  if (targetId === undefined || targetId === source.info.project.id) return source;
  const found = await loadProjectById(c.app.db, targetId);
  if (!found) throw notFound();
  const access = await effectiveAccess(c.app.db, user, found.project, found.namespace);
  const disabled = found.project.merge_requests_access_level === 'disabled';
  const allowed = canReadProject(user, found.project, access) && canReadRepository(found.project, user, access) && (disabled || canReadMrs(c, found, access)) && !found.project.archived;
  if (!allowed) throw forbidden();
  // Model validations, in the order handle_merge_request_errors! reports them (reference: 422s).
  if (!sameForkNetwork(source.info.project, found.project)) throw unprocessable(['Source project is not a fork of the target project']);
  if (disabled) throw unprocessable(['Target project has disabled merge requests']);
  return { info: found, access };
}

/** can_allow_collaboration?: push access to the source project (Developer and up, not archived). */
async function mayPushToSource(c: Ctx, user: UserRow, sourceProjectId: number): Promise<boolean> {
  if (user.is_admin) return true;
  const source = await loadProjectById(c.app.db, sourceProjectId);
  if (!source || source.project.archived) return false;
  return (await effectiveAccess(c.app.db, user, source.project, source.namespace)) >= AccessLevel.DEVELOPER;
}

export function registerMergeRequestCrudRoutes(app: FastifyInstance): void {
  // POST /projects/:id/merge_requests
  route(app, 'POST', '/projects/:id/merge_requests', async function createMr(c) {
    const user = c.requireUser();
    const p = await mrProject(c, { write: true });
    if (p.access < AccessLevel.DEVELOPER || p.info.project.archived) throw forbidden();
    const input = parseCreate(c);
    await checkSpam(c.app, { title: input.title, description: input.description ?? null, user, ip: c.req.ip }, captchaHeaders(c.req.headers));
    const target = await forkTarget(c, user, p, input.targetProjectId);
    // Opened from a fork by someone below Reporter in the target: no metadata there (filter_params).
    if (!user.is_admin && target.access < AccessLevel.REPORTER) {
      for (const k of ['labels', 'addLabels', 'removeLabels', 'milestoneId', 'milestone', 'assigneeIds', 'reviewerIds', 'discussionLocked'] as const) delete input[k];
    }
    const mr = await createMergeRequest(c.app, target.info, user, input, p.info);
    return presentOne(c, target, mr);
  });

  // GET /projects/:id/merge_requests/:merge_request_iid
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid', async function getMr(c) {
    const p = await mrFromPath(c);
    const includeDiverged = c.params.bool('include_diverged_commits_count');
    const includeRebase = c.params.bool('include_rebase_in_progress');
    const renderHtml = c.params.bool('render_html');
    const mr = await refreshMergeStatus(c.app, p.mr);
    // Its merge status depends on where the branches point, which the database does not hold.
    const branches = mergeStatusBranches(c.app, mr);
    if (branches) c.onlyWhile(() => branchesStillAt(branches), branches);
    let diverged: number | undefined;
    if (includeDiverged) {
      diverged = mr.state === 'opened' ? mr.behind_count : 0;
    }
    return presentOne(
      c,
      p,
      mr,
      { divergedCommitsCount: diverged, includeRebaseInProgress: includeRebase === true, renderHtml: renderHtml === true },
      { withFirstContribution: true },
    );
  }, { cache: true });

  // PUT /projects/:id/merge_requests/:merge_request_iid
  route(app, 'PUT', '/projects/:id/merge_requests/:merge_request_iid', async function updateMr(c) {
    const user = c.requireUser();
    const p = await mrFromPath(c, { write: true });
    if (!canUpdate(c, p, p.mr)) throw forbidden();
    c.params.requireAtLeastOne(UPDATE_PARAMS);
    const attrs = parseAttributes(c);
    // GitLab's filter_params: metadata only from Reporters and up (an author below that edits the
    // text, branch and state), collaboration only from whoever may push to the source project.
    if (!user.is_admin && p.access < AccessLevel.REPORTER) {
      for (const k of ['labels', 'addLabels', 'removeLabels', 'milestoneId', 'milestone', 'assigneeIds', 'reviewerIds', 'discussionLocked'] as const) delete attrs[k];
    }
    if (attrs.allowCollaboration !== undefined && !(await mayPushToSource(c, user, p.mr.source_project_id))) delete attrs.allowCollaboration;
    if (attrs.title !== undefined || attrs.description !== undefined) {
      await checkSpam(c.app, { title: attrs.title ?? p.mr.title, description: attrs.description ?? p.mr.description, user, ip: c.req.ip }, captchaHeaders(c.req.headers));
    }
    const mr = await updateMergeRequest(c.app, p.info, p.mr, user, attrs);
    return presentOne(c, p, mr);
  });

  // DELETE /projects/:id/merge_requests/:merge_request_iid
  route(app, 'DELETE', '/projects/:id/merge_requests/:merge_request_iid', async function deleteMr(c) {
    c.requireUser();
    const p = await mrFromPath(c, { write: true });
    if (p.access < AccessLevel.OWNER && !c.user?.is_admin) throw forbidden();
    refuseIfModifiedSince(c, p.mr.updated_at);
    await deleteMergeRequest(c.app, p.mr);
    return undefined;
  });
}
