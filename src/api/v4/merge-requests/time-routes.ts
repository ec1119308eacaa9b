// Time tracking on merge requests (GitLab's TimeTrackingEndpoints): estimate and spent time, which
// `time_stats` reports.
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../../http/route.js';
import { route } from '../../../http/route.js';
import { badRequest, forbidden, notGiven, paramError } from '../../../http/errors.js';
import { nowIso } from '../../../db/database.js';
import { humanDuration } from '../entities/merge-request.js';
import { canUpdate, mrFromPath } from './context.js';
import { AccessLevel } from '../../../services/access.js';

const UNIT_SECONDS: Record<string, number> = { mo: 4 * 5 * 8 * 3600, w: 5 * 8 * 3600, d: 8 * 3600, h: 3600, m: 60, s: 1 };
export const MAX_SECONDS = 2_147_483_647;

/** GitLab's duration format: `1mo 2w 3d 4h 5m 6s` (working days of 8 h, weeks of 5 days); a bare number is hours. */
export function parseDuration(raw: string): number | null {
  const text = raw.trim().toLowerCase();
  if (!text) return null;
  const sign = text.startsWith('-') ? -1 : 1;
  const body = text.replace(/^[-+]/, '').trim();
  if (/^\d+(\.\d+)?$/.test(body)) return sign * Math.round(Number(body) * 3600);
  // A unit ends where no letter follows: "3h30m" and "1d 2h" both read (GitLab's ChronicDuration does).
  const re = /(\d+(?:\.\d+)?)\s*(mo|w|d|h|m|s)(?![a-z])\s*/gy;
  let total = 0;
  let consumed = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(body)) !== null) {
    total += Number(m[1]) * UNIT_SECONDS[m[2]];
    consumed = re.lastIndex;
  }
  if (consumed !== body.length) return null;
  return sign * Math.round(total);
}

export function timeStats(mr: { time_estimate: number; total_time_spent: number }) {
  return {
    time_estimate: mr.time_estimate,
    total_time_spent: mr.total_time_spent,
    human_time_estimate: humanDuration(mr.time_estimate),
    human_total_time_spent: humanDuration(mr.total_time_spent),
  };
}

export function readDuration(c: Ctx): number {
  if (!c.params.has('duration')) throw notGiven('duration');
  const seconds = parseDuration(c.params.string('duration', { allowBlank: false })!);
  if (seconds === null || Math.abs(seconds) > MAX_SECONDS) throw badRequest('Invalid time format');
  return seconds;
}

/** Time tracking writes: Reporters and up (GitLab's admin_merge_request), besides the update rule. */
async function writable(c: Ctx) {
  const user = c.requireUser();
  const p = await mrFromPath(c, { write: true });
  if (!canUpdate(c, p, p.mr) || (!user.is_admin && p.access < AccessLevel.REPORTER)) throw forbidden();
  return p;
}

async function save(c: Ctx, id: number, set: { time_estimate?: number; total_time_spent?: number }) {
  await c.app.db.updateTable('merge_requests').set(Object.assign({}, set, { updated_at: nowIso() })).where('id', '=', id).execute();
}

export function registerMergeRequestTimeRoutes(app: FastifyInstance): void {
  // GET /projects/:id/merge_requests/:merge_request_iid/time_stats
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/time_stats', async function getTimeStats(c) {
    return timeStats((await mrFromPath(c)).mr);
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/time_estimate
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/time_estimate', async function setEstimate(c) {
    const p = await writable(c);
    const seconds = readDuration(c);
    if (seconds < 0) throw badRequest('Invalid time format');
    await save(c, p.mr.id, { time_estimate: seconds });
    return timeStats(Object.assign({}, p.mr, { time_estimate: seconds }));
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/reset_time_estimate
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/reset_time_estimate', async function resetEstimate(c) {
    const p = await writable(c);
    await save(c, p.mr.id, { time_estimate: 0 });
    return timeStats(Object.assign({}, p.mr, { time_estimate: 0 }));
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/add_spent_time
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/add_spent_time', async function addSpent(c) {
    const p = await writable(c);
    const seconds = readDuration(c);
    c.params.string('summary');
    const total = Math.max(0, Math.min(MAX_SECONDS, p.mr.total_time_spent + seconds));
    await save(c, p.mr.id, { total_time_spent: total });
    return timeStats(Object.assign({}, p.mr, { total_time_spent: total }));
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/reset_spent_time
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/reset_spent_time', async function resetSpent(c) {
    const p = await writable(c);
    await save(c, p.mr.id, { total_time_spent: 0 });
    return timeStats(Object.assign({}, p.mr, { total_time_spent: 0 }));
  });
}
