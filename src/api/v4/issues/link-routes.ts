// Related issues (GitLab's lib/api/issue_links.rb, IssueLinks::CreateService and DestroyService):
// two-way `relates_to` links between issues the caller may read, listed from either side.
// `blocks` / `is_blocked_by` are a paid tier's (GitLab's 403 on the free tier).
import type { FastifyInstance } from 'fastify';
import { nowIso } from '../../../db/database.js';
import { apiError, forbidden, missingAttributes, notFound, paramError } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { buildIssueQuery } from '../../../services/issues/list.js';
import { loadIssueBundle, type IssueRow } from '../../../services/issues/rows.js';
import { isUniqueViolation } from '../../../services/projects/unique.js';
import { dbId, pathId } from '../../../services/merge-requests/rows.js';
import { presentIssue, presentIssueBasic } from '../entities/issue.js';
import { issueFromPath, issueProject, readableIssue, type IssueScopeCtx } from './context.js';

const LINK_TYPES = ['relates_to', 'blocks', 'is_blocked_by'] as const;

interface LinkRow {
  id: number;
  source_id: number;
  target_id: number;
  link_type: string;
  created_at: string;
  updated_at: string;
}

/** admin_issue_relation: Guests and up of the issue's project (administrators too). */
function mayLink(c: Ctx, s: IssueScopeCtx): boolean {
  return !!c.user?.is_admin || s.access >= AccessLevel.GUEST;
}

/** Issues among `ids` the caller may read (their projects' rules and confidentiality), by id. */
async function readableByIds(c: Ctx, ids: number[]): Promise<Map<number, IssueRow>> {
  if (!ids.length) return new Map();
  const rows = await (await buildIssueQuery(c.app.db, { kind: 'global' }, { state: 'all', scope: 'all', orderBy: 'id', sort: 'asc' }, c.user)).where('issues.id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

async function presentLink(c: Ctx, link: LinkRow, issues: Map<number, IssueRow>) {
  const source = issues.get(link.source_id)!;
  const target = issues.get(link.target_id)!;
  const bundle = await loadIssueBundle(c.app.db, [source, target], [], c.user);
  return { source_issue: presentIssueBasic(source, { base: c.base, bundle }), target_issue: presentIssueBasic(target, { base: c.base, bundle }), link_type: link.link_type };
}

/** A link of the path's issue, by `:issue_link_id`, whose other issue the caller may read (404 `Not found` otherwise). */
async function findLink(c: Ctx, s: IssueScopeCtx): Promise<{ link: LinkRow; issues: Map<number, IssueRow> }> {
  const id = pathId(c.params.raw.issue_link_id);
  const link = id < 0 ? undefined : await c.app.db.selectFrom('issue_links').selectAll().where('id', '=', id).where((eb) => eb.or([eb('source_id', '=', s.issue.id), eb('target_id', '=', s.issue.id)])).executeTakeFirst();
  if (!link) throw notFound();
  const issues = await readableByIds(c, [link.source_id, link.target_id]);
  if (!issues.has(link.source_id) || !issues.has(link.target_id)) throw notFound();
  return { link, issues };
}

export function registerIssueLinkRoutes(app: FastifyInstance): void {
  const links = '/projects/:id/issues/:issue_iid/links';

  route(app, 'GET', links, async function listLinks(c) {
    c.requireUser();
    const s = await issueFromPath(c);
    const rows = await c.app.db
      .selectFrom('issue_links')
      .selectAll()
      .where((eb) => eb.or([eb('source_id', '=', s.issue.id), eb('target_id', '=', s.issue.id)]))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const other = (l: LinkRow) => (l.source_id === s.issue.id ? l.target_id : l.source_id);
    const readable = await readableByIds(c, rows.map(other));
    const shown = rows.filter((l) => readable.has(other(l)));
    const issues = shown.map((l) => readable.get(other(l))!);
    const bundle = await loadIssueBundle(c.app.db, issues, [s.info], c.user);
    return shown.map((l, i) => {
      const out = presentIssue(issues[i], { base: c.base, bundle });
      out.issue_link_id = l.id;
      out.link_type = l.link_type;
      out.link_created_at = l.created_at;
      out.link_updated_at = l.updated_at;
      return out;
    });
  });

  route(app, 'POST', links, async function createLink(c) {
    c.requireUser();
    const s = await issueFromPath(c);
    const missing = ['target_project_id', 'target_issue_iid'].filter((n) => !c.params.has(n));
    if (missing.length) throw missingAttributes(missing);
    const linkType = c.params.enum('link_type', LINK_TYPES) ?? 'relates_to';
    const rawIid = String(c.params.raw.target_issue_iid);
    if (!/^\d{1,10}$/.test(rawIid)) throw notFound();
    const target = await readableIssue(c, await issueProject(c, String(c.params.raw.target_project_id)), dbId(Number(rawIid)));
    if (linkType !== 'relates_to') throw apiError(403, 'Blocked issues not available for current license');
    const existing = await c.app.db
      .selectFrom('issue_links')
      .select('id')
      .where((eb) => eb.or([eb.and([eb('source_id', '=', s.issue.id), eb('target_id', '=', target.issue.id)]), eb.and([eb('source_id', '=', target.issue.id), eb('target_id', '=', s.issue.id)])]))
      .executeTakeFirst();
    if (existing) throw apiError(409, 'Issue(s) already assigned');
    if (!mayLink(c, s)) throw forbidden();
    if (!mayLink(c, target)) throw apiError(403, "Couldn't link issue. You must have at least the Guest role in both projects.");
    if (target.issue.id === s.issue.id) throw apiError(422, `#${s.issue.iid} cannot be added: cannot be related to itself`);
    const now = nowIso();
    let id: number;
    try {
      const ins = await c.app.db.insertInto('issue_links').values({ source_id: s.issue.id, target_id: target.issue.id, link_type: linkType, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
      id = Number(ins.id);
    } catch (e) {
      if (isUniqueViolation(e)) throw apiError(409, 'Issue(s) already assigned');
      throw e;
    }
    const link: LinkRow = { id, source_id: s.issue.id, target_id: target.issue.id, link_type: linkType, created_at: now, updated_at: now };
    return presentLink(c, link, new Map([[s.issue.id, s.issue], [target.issue.id, target.issue]]));
  });

  route(app, 'GET', `${links}/:issue_link_id`, async function showLink(c) {
    c.requireUser();
    const s = await issueFromPath(c);
    const { link, issues } = await findLink(c, s);
    return presentLink(c, link, issues);
  });

  route(app, 'DELETE', `${links}/:issue_link_id`, async function deleteLink(c) {
    c.requireUser();
    const s = await issueFromPath(c);
    const { link, issues } = await findLink(c, s);
    if (!mayLink(c, s)) throw forbidden();
    await c.app.db.deleteFrom('issue_links').where('id', '=', link.id).execute();
    // GitLab answers the removed link (200).
    c.status(200);
    return presentLink(c, link, issues);
  });
}
