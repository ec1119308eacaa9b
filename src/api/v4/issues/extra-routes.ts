// Time tracking and award emoji on issues (GitLab's TimeTrackingEndpoints and lib/api/award_emoji.rb
// for issues). Votes (`upvotes`/`downvotes`) are counted onto the issue row when awards change.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import { nowIso } from '../../../db/database.js';
import { route, type Ctx } from '../../../http/route.js';
import { badRequest, forbidden, notFound } from '../../../http/errors.js';
import { AccessLevel } from '../../../services/access.js';
import { canAdminIssues, canUpdateIssue } from '../../../services/issues/access.js';
import { addAward, awardName, listAwards, removeAward, showAward } from '../merge-requests/awards.js';
import { MAX_SECONDS, readDuration, timeStats } from '../merge-requests/time-routes.js';
import { issueFromPath, type IssueScopeCtx } from './context.js';

/** Time tracking writes: admin_issue (Planners and up), as GitLab's TimeTrackingEndpoints. */
async function writable(c: Ctx): Promise<IssueScopeCtx> {
  const user = c.requireUser();
  const s = await issueFromPath(c);
  if (!canUpdateIssue(user, s.info, s.access, s.issue, s.assignees) || !canAdminIssues(user, s.access)) throw forbidden();
  return s;
}

/** Sets the issue's time fields in one statement (spent time added atomically, kept within 0 and the column's range). */
async function saveTime(db: Kysely<DB>, id: number, set: { time_estimate?: number; add_spent?: number; total_time_spent?: number }) {
  await db
    .updateTable('issues')
    .set((eb) => {
      const out: Record<string, unknown> = { updated_at: nowIso() };
      if (set.time_estimate !== undefined) out.time_estimate = set.time_estimate;
      if (set.total_time_spent !== undefined) out.total_time_spent = set.total_time_spent;
      if (set.add_spent !== undefined) {
        const sum = eb('total_time_spent', '+', set.add_spent);
        out.total_time_spent = eb.case().when(sum, '<', 0).then(0).when(sum, '>', MAX_SECONDS).then(MAX_SECONDS).else(sum).end();
      }
      return out;
    })
    .where('id', '=', id)
    .execute();
  return db.selectFrom('issues').select(['time_estimate', 'total_time_spent']).where('id', '=', id).executeTakeFirstOrThrow();
}

async function recountVotes(db: Kysely<DB>, issueId: number): Promise<void> {
  const rows = await db.selectFrom('award_emoji').select('name').where('awardable_type', '=', 'Issue').where('awardable_id', '=', issueId).where('name', 'in', ['thumbsup', 'thumbsdown']).execute();
  await db
    .updateTable('issues')
    .set({ upvotes: rows.filter((r) => r.name === 'thumbsup').length, downvotes: rows.filter((r) => r.name === 'thumbsdown').length })
    .where('id', '=', issueId)
    .execute();
}

export function registerIssueExtraRoutes(app: FastifyInstance): void {
  const issue = '/projects/:id/issues/:issue_iid';
  route(app, 'GET', `${issue}/time_stats`, async function issueTimeStats(c) {
    return timeStats((await issueFromPath(c)).issue);
  });
  route(app, 'POST', `${issue}/time_estimate`, async function issueEstimate(c) {
    const s = await writable(c);
    const seconds = readDuration(c);
    if (seconds < 0) throw badRequest('Invalid time format');
    return timeStats(await saveTime(c.app.db, s.issue.id, { time_estimate: seconds }));
  });
  route(app, 'POST', `${issue}/reset_time_estimate`, async function issueResetEstimate(c) {
    const s = await writable(c);
    return timeStats(await saveTime(c.app.db, s.issue.id, { time_estimate: 0 }));
  });
  route(app, 'POST', `${issue}/add_spent_time`, async function issueAddSpent(c) {
    const s = await writable(c);
    const seconds = readDuration(c);
    c.params.string('summary');
    return timeStats(await saveTime(c.app.db, s.issue.id, { add_spent: seconds }));
  });
  route(app, 'POST', `${issue}/reset_spent_time`, async function issueResetSpent(c) {
    const s = await writable(c);
    return timeStats(await saveTime(c.app.db, s.issue.id, { total_time_spent: 0 }));
  });

  const on = (s: IssueScopeCtx) => ({ type: 'Issue' as const, id: s.issue.id, projectId: s.info.project.id });
  route(app, 'GET', `${issue}/award_emoji`, async (c) => listAwards(c, on(await issueFromPath(c))));
  route(app, 'GET', `${issue}/award_emoji/:award_id`, async (c) => showAward(c, on(await issueFromPath(c))));
  route(app, 'POST', `${issue}/award_emoji`, async function awardIssue(c) {
    const user = c.requireUser();
    const s = await issueFromPath(c);
    // Never on an archived project; on a locked discussion only for members (GitLab's 404).
    if (s.info.project.archived || (s.issue.discussion_locked === 1 && s.access < AccessLevel.GUEST && !user.is_admin)) throw notFound('Award Emoji');
    const out = await addAward(c, user, on(s), awardName(c));
    await recountVotes(c.app.db, s.issue.id);
    return out;
  });
  route(app, 'DELETE', `${issue}/award_emoji/:award_id`, async function unawardIssue(c) {
    const user = c.requireUser();
    const s = await issueFromPath(c);
    await removeAward(c, user, on(s));
    await recountVotes(c.app.db, s.issue.id);
    return undefined;
  });
}
