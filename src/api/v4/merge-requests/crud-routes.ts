// One merge request: create, read, update, delete (spec §4.2, §4.6–§4.8).
import type { FastifyInstance } from 'fastify';
import { refuseIfModifiedSince, route } from '../../../http/route.js';
import { forbidden } from '../../../http/errors.js';
import { AccessLevel } from '../../../services/access.js';
import { mergeStatusStillFresh, refreshMergeStatus } from '../../../services/merge-requests/git-ops.js';
import { checkSpam } from '../../../services/merge-requests/spam.js';
import { createMergeRequest, deleteMergeRequest, UPDATE_PARAMS, updateMergeRequest } from '../../../services/merge-requests/write.js';
import { canUpdate, mrFromPath, mrProject, presentOne } from './context.js';
import { parseAttributes, parseCreate } from './params.js';

function captchaHeaders(headers: Record<string, unknown>) {
  const one = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { response: one(headers['x-service-captcha-response']), spamLogId: one(headers['x-service-spam-log-id']) };
}

export function registerMergeRequestCrudRoutes(app: FastifyInstance): void {
  // POST /projects/:id/merge_requests
  route(app, 'POST', '/projects/:id/merge_requests', async function createMr(c) {
    const user = c.requireUser();
    const p = await mrProject(c, { write: true });
    if (p.access < AccessLevel.DEVELOPER || p.info.project.archived) throw forbidden();
    const input = parseCreate(c);
    await checkSpam(c.app, { title: input.title, description: input.description ?? null, user, ip: c.req.ip }, captchaHeaders(c.req.headers));
    const mr = await createMergeRequest(c.app, p.info, user, input);
    return presentOne(c, p, mr);
  });

  // GET /projects/:id/merge_requests/:merge_request_iid
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid', async function getMr(c) {
    const p = await mrFromPath(c);
    const includeDiverged = c.params.bool('include_diverged_commits_count');
    const includeRebase = c.params.bool('include_rebase_in_progress');
    const renderHtml = c.params.bool('render_html');
    const mr = await refreshMergeStatus(c.app, p.mr);
    // Its merge status depends on where the branches point, which the database does not hold.
    const fresh = mergeStatusStillFresh(c.app, mr);
    if (fresh) c.onlyWhile(fresh);
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
