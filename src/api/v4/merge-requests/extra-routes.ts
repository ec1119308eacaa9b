// Around a merge request: approvals, award emoji, dependencies (blocks, spec §4.3) and its
// pipelines (spec §4.5).
import { emitEvent } from '../../../services/events.js';
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../../http/route.js';
import { route } from '../../../http/route.js';
import { apiError, conflict, forbidden, notFound, unauthorized } from '../../../http/errors.js';
import { paginateArray, paginateOffset } from '../../../http/pagination.js';
import { findUsersByIds } from '../../../db/repositories/users.js';
import { nowIso } from '../../../db/database.js';
import { AccessLevel } from '../../../services/access.js';
import { findProject, loadProjectById } from '../../../services/projects/lookup.js';
import { fromFork, refreshMergeStatus, sourceInNetwork } from '../../../services/merge-requests/git-ops.js';
import { dbId, findMrById, findMrByIid, loadBundle, pathId, type MrRow, type ProjectInfo } from '../../../services/merge-requests/rows.js';
import { createPipeline } from '../../../services/pipelines/statuses.js';
import { presentMergeRequestBasic, presentMergeRequestHead } from '../entities/merge-request.js';
import { presentPipelineBasic, presentPipelineDetailed } from '../entities/pipeline.js';
import { presentUserBasic } from '../entities/user.js';
import { canReadMrs, canUpdate, mrFromPath, presentOne, subscriptionState, type MrProject } from './context.js';
import { addAward, awardName, listAwards, removeAward, showAward } from './awards.js';
import { onUniqueViolation } from '../../../services/projects/unique.js';

async function presentApprovals(c: Ctx, mr: MrRow) {
  const rows = await c.app.db.selectFrom('merge_request_approvals').selectAll().where('merge_request_id', '=', mr.id).orderBy('id').execute();
  const users = await findUsersByIds(c.app.db, rows.map((r) => r.user_id));
  const out = presentMergeRequestHead(mr);
  out.merge_status = mr.merge_status;
  out.approved = rows.length > 0;
  out.approvals_required = 0;
  out.approvals_left = 0;
  out.approved_by = rows.filter((r) => users.has(r.user_id)).map((r) => ({ user: presentUserBasic(users.get(r.user_id)!, { base: c.base }) }));
  return out;
}

async function recountVotes(c: Ctx, mrId: number): Promise<void> {
  const rows = await c.app.db.selectFrom('award_emoji').select('name').where('awardable_type', '=', 'MergeRequest').where('awardable_id', '=', mrId).where('name', 'in', ['thumbsup', 'thumbsdown']).execute();
  await c.app.db
    .updateTable('merge_requests')
    .set({ upvotes: rows.filter((r) => r.name === 'thumbsup').length, downvotes: rows.filter((r) => r.name === 'thumbsdown').length })
    .where('id', '=', mrId)
    .execute();
}

async function presentBlocks(c: Ctx, rows: Array<{ id: number; blocking_merge_request_id: number; blocked_merge_request_id: number }>, projectId: number, withBlocked: boolean) {
  const mrIds = [...new Set(rows.flatMap((r) => [r.blocking_merge_request_id, r.blocked_merge_request_id]))];
  const mrs = mrIds.length ? await c.app.db.selectFrom('merge_requests').selectAll().where('id', 'in', mrIds).execute() : [];
  const bundle = await loadBundle(c.app.db, mrs);
  const byId = new Map(mrs.map((m) => [m.id, m]));
  const ctx = { base: c.base, bundle };
  return rows
    .filter((r) => byId.has(r.blocking_merge_request_id) && byId.has(r.blocked_merge_request_id))
    .map((r) => ({
      id: r.id,
      blocking_merge_request: presentMergeRequestBasic(byId.get(r.blocking_merge_request_id)!, ctx),
      ...(withBlocked ? { blocked_merge_request: presentMergeRequestBasic(byId.get(r.blocked_merge_request_id)!, ctx) } : {}),
      project_id: projectId,
    }));
}

/** The blocking request named by id, or by iid in blocking_project_id (default: this project). */
async function findBlocking(c: Ctx, p: MrProject): Promise<{ mr: MrRow; info: ProjectInfo; access: number }> {
  c.params.requireAtLeastOne(['blocking_merge_request_id', 'blocking_merge_request_iid']);
  const byId = c.params.int('blocking_merge_request_id');
  const byIid = c.params.int('blocking_merge_request_iid');
  let mr: MrRow | undefined;
  let info: ProjectInfo;
  let access: number;
  if (byId !== undefined) {
    mr = await findMrById(c.app.db, dbId(byId));
    if (!mr) throw notFound();
    if (mr.project_id === p.info.project.id) {
      info = p.info;
      access = p.access;
    } else {
      const found = await findProject(c, String(mr.project_id)).catch(() => null);
      if (!found) throw forbidden();
      info = { project: found.project, namespace: found.namespace };
      access = found.access;
    }
  } else {
    const projectRaw = c.params.has('blocking_project_id') ? c.params.string('blocking_project_id')! : String(p.info.project.id);
    const found = projectRaw === String(p.info.project.id) ? null : await findProject(c, projectRaw);
    info = found ? { project: found.project, namespace: found.namespace } : p.info;
    access = found ? found.access : p.access;
    mr = await findMrByIid(c.app.db, info.project.id, dbId(byIid!));
    if (!mr) throw notFound();
  }
  if (!canReadMrs(c, info, access)) throw forbidden();
  return { mr, info, access };
}

export function registerMergeRequestExtraRoutes(app: FastifyInstance): void {
  // GET /projects/:id/merge_requests/:merge_request_iid/approvals
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/approvals', async function getApprovals(c) {
    const p = await mrFromPath(c);
    return presentApprovals(c, p.mr);
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/approve
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/approve', async function approve(c) {
    const user = c.requireUser();
    const p = await mrFromPath(c, { write: true });
    const sha = c.params.string('sha');
    if (p.access < AccessLevel.DEVELOPER || p.mr.state !== 'opened') throw unauthorized();
    if (sha && sha !== p.mr.head_sha) throw apiError(409, `SHA does not match HEAD of source branch: ${p.mr.head_sha}`);
    // The unique index decides: of simultaneous approvals by one user, one inserts and the rest
    // are refused as a second approval is (a prior check would let them all through on PostgreSQL).
    const added = await c.app.db
      .insertInto('merge_request_approvals')
      .values({ merge_request_id: p.mr.id, user_id: user.id, created_at: nowIso() })
      .onConflict((oc) => oc.columns(['merge_request_id', 'user_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!added) throw unauthorized();
    // One approval makes a merge request approved (no approval rules on this tier): GitLab's free
    // edition sends `approved` for each approval and `unapproved` for each removal.
    await emitEvent(c.app, { kind: 'merge_request', projectId: p.mr.project_id, mr: p.mr, userId: user.id, action: 'approved' });
    return presentApprovals(c, p.mr);
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/unapprove
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/unapprove', async function unapprove(c) {
    const user = c.requireUser();
    const p = await mrFromPath(c, { write: true });
    const res = await c.app.db.deleteFrom('merge_request_approvals').where('merge_request_id', '=', p.mr.id).where('user_id', '=', user.id).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) throw notFound();
    await emitEvent(c.app, { kind: 'merge_request', projectId: p.mr.project_id, mr: p.mr, userId: user.id, action: 'unapproved' });
    return presentApprovals(c, p.mr);
  });

  // GET/POST /projects/:id/merge_requests/:merge_request_iid/award_emoji, GET/DELETE …/award_emoji/:award_id
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/award_emoji', async function listMrAwards(c) {
    const p = await mrFromPath(c);
    return listAwards(c, { type: 'MergeRequest', id: p.mr.id, projectId: p.mr.project_id });
  });
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/award_emoji/:award_id', async function showMrAward(c) {
    const p = await mrFromPath(c);
    return showAward(c, { type: 'MergeRequest', id: p.mr.id, projectId: p.mr.project_id });
  });
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/award_emoji', async function awardMr(c) {
    const user = c.requireUser();
    const p = await mrFromPath(c, { write: true });
    // award_emoji: never on an archived project; on a locked discussion only for members (GitLab's 404).
    if (p.info.project.archived || (p.mr.discussion_locked === 1 && p.access < AccessLevel.GUEST && !user.is_admin)) throw notFound('Award Emoji');
    const out = await addAward(c, user, { type: 'MergeRequest', id: p.mr.id, projectId: p.mr.project_id }, awardName(c));
    await recountVotes(c, p.mr.id);
    return out;
  });
  route(app, 'DELETE', '/projects/:id/merge_requests/:merge_request_iid/award_emoji/:award_id', async function unawardMr(c) {
    const user = c.requireUser();
    const p = await mrFromPath(c, { write: true });
    await removeAward(c, user, { type: 'MergeRequest', id: p.mr.id, projectId: p.mr.project_id });
    await recountVotes(c, p.mr.id);
    return undefined;
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/subscribe and …/unsubscribe (lib/api/subscriptions.rb):
  // 201 with the merge request, or 304 when the caller already is (or is not) subscribed.
  for (const [action, want] of [['subscribe', true], ['unsubscribe', false]] as const) {
    route(app, 'POST', `/projects/:id/merge_requests/:merge_request_iid/${action}`, async function subscription(c) {
      const user = c.requireUser();
      const p = await mrFromPath(c, { write: true });
      const state = await subscriptionState(c, p.mr, user.id);
      // GitLab finds the merge request with update_merge_request: Developers, its author or an assignee.
      if (!canUpdate(c, p, p.mr) && !(state.assigned && !p.info.project.archived)) throw forbidden();
      if (state.subscribed === want) {
        c.status(304);
        return undefined;
      }
      const now = nowIso();
      await c.app.db
        .insertInto('subscriptions')
        .values({ user_id: user.id, project_id: p.info.project.id, subscribable_type: 'MergeRequest', subscribable_id: p.mr.id, subscribed: want ? 1 : 0, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['subscribable_id', 'subscribable_type', 'user_id']).doUpdateSet({ subscribed: want ? 1 : 0, updated_at: now }))
        .execute();
      return presentOne(c, p, p.mr);
    });
  }

  // GET /projects/:id/merge_requests/:merge_request_iid/blocks
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/blocks', async function listBlocks(c) {
    const p = await mrFromPath(c);
    const rows = await c.app.db.selectFrom('merge_request_blocks').selectAll().where('blocked_merge_request_id', '=', p.mr.id).orderBy('id').execute();
    return paginateArray(c, await presentBlocks(c, rows, p.info.project.id, true));
  });

  // GET /projects/:id/merge_requests/:merge_request_iid/blockees
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/blockees', async function listBlockees(c) {
    const p = await mrFromPath(c);
    const rows = await c.app.db.selectFrom('merge_request_blocks').selectAll().where('blocking_merge_request_id', '=', p.mr.id).orderBy('id').execute();
    return paginateArray(c, await presentBlocks(c, rows, p.info.project.id, true));
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/blocks
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/blocks', async function createBlock(c) {
    c.requireUser();
    const p = await mrFromPath(c, { write: true });
    if (!canUpdate(c, p, p.mr)) throw forbidden();
    const blocking = await findBlocking(c, p);
    if (blocking.mr.id === p.mr.id) throw apiError(400, 'Blocking merge request cannot block itself');
    const cycle = await c.app.db.selectFrom('merge_request_blocks').select('id').where('blocking_merge_request_id', '=', p.mr.id).where('blocked_merge_request_id', '=', blocking.mr.id).executeTakeFirst();
    if (cycle) throw apiError(400, 'Blocking merge request cannot be blocked by the merge request it blocks');
    // Two requests for the same block at once: the second meets the unique index, the same conflict.
    const block = await onUniqueViolation(
      () =>
        c.app.database.transaction(async (trx) => {
          const dup = await trx.selectFrom('merge_request_blocks').select('id').where('blocking_merge_request_id', '=', blocking.mr.id).where('blocked_merge_request_id', '=', p.mr.id).executeTakeFirst();
          if (dup) throw conflict('Block already exists');
          const row = { blocking_merge_request_id: blocking.mr.id, blocked_merge_request_id: p.mr.id, created_at: nowIso() };
          const ins = await trx.insertInto('merge_request_blocks').values(row).returning('id').executeTakeFirstOrThrow();
          return Object.assign({}, row, { id: ins.id });
        }),
      () => conflict('Block already exists'),
    );
    const [out] = await presentBlocks(c, [block], p.info.project.id, false);
    return out;
  });

  // DELETE /projects/:id/merge_requests/:merge_request_iid/blocks/:block_id
  route(app, 'DELETE', '/projects/:id/merge_requests/:merge_request_iid/blocks/:block_id', async function deleteBlock(c) {
    c.requireUser();
    const p = await mrFromPath(c, { write: true });
    if (!canUpdate(c, p, p.mr)) throw forbidden();
    const id = pathId(c.params.raw.block_id);
    const block = await c.app.db.selectFrom('merge_request_blocks').selectAll().where('id', '=', id).where('blocked_merge_request_id', '=', p.mr.id).executeTakeFirst();
    if (!block) throw notFound();
    const blocking = await findMrById(c.app.db, block.blocking_merge_request_id);
    if (blocking && blocking.project_id !== p.info.project.id) {
      const found = await findProject(c, String(blocking.project_id)).catch(() => null);
      if (!found || !canReadMrs(c, { project: found.project, namespace: found.namespace }, found.access)) throw forbidden();
    }
    await c.app.db.deleteFrom('merge_request_blocks').where('id', '=', block.id).execute();
    return undefined;
  });

  // GET /projects/:id/merge_requests/:merge_request_iid/pipelines
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/pipelines', async function mrPipelines(c) {
    const p = await mrFromPath(c);
    if (p.info.project.builds_access_level === 'disabled') throw forbidden();
    const mr = p.mr;
    // The source project's pipelines of the branch, and those run for the request (from a fork,
    // GitLab runs them in the target when a member of it asks). A fork that left the network shows
    // only those run for the request: its branch is no longer the request's.
    const branchToo = !fromFork(mr) || (await sourceInNetwork(c.app, mr));
    const q = c.app.db
      .selectFrom('ci_pipelines')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb.and([eb('project_id', '=', mr.source_project_id), branchToo ? eb.or([eb('merge_request_id', '=', mr.id), eb('ref', '=', mr.source_branch)]) : eb('merge_request_id', '=', mr.id)]),
          eb.and([eb('project_id', '=', mr.project_id), eb('merge_request_id', '=', mr.id)]),
        ]),
      )
      .orderBy('id', 'desc');
    const rows = await paginateOffset(c, q);
    const source = fromFork(mr) ? await loadProjectById(c.app.db, mr.source_project_id) : null;
    return rows.map((r) => presentPipelineBasic(r, r.project_id === mr.project_id || !source ? p.info : source, c.base));
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/pipelines
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/pipelines', async function createMrPipeline(c) {
    const user = c.requireUser();
    const p = await mrFromPath(c, { write: true });
    if (p.access < AccessLevel.DEVELOPER || p.info.project.builds_access_level === 'disabled') throw forbidden();
    const mr = await refreshMergeStatus(c.app, p.mr);
    if (mr.state !== 'opened' || !mr.head_sha || mr.source_missing) throw apiError(405, '405 Method Not Allowed');
    // A detached merge request pipeline record: external CI reports statuses against its sha and ref.
    const pipeline = await c.app.database.transaction((trx) =>
      // From a fork, in the target (GitLab's pipelines of forks run in the parent for its members).
      createPipeline(c.app, trx, { projectId: mr.project_id, sha: mr.head_sha!, ref: `refs/merge-requests/${mr.iid}/head`, source: 'merge_request_event', status: 'created', userId: user.id, mergeRequestId: mr.id }),
    );
    return presentPipelineDetailed(pipeline, p.info, c.base, user);
  });
}
