// Shared lookups for issue routes: the project with the caller's access, and the issue of the
// path that the caller may read (GitLab's IssuesFinder: 404 for what it would not find).
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import type { Ctx } from '../../../http/route.js';
import { notFound, paramError } from '../../../http/errors.js';
import { findProject } from '../../../services/projects/lookup.js';
import { dbId, type ProjectInfo } from '../../../services/merge-requests/rows.js';
import { canReadIssue, canReadIssues } from '../../../services/issues/access.js';
import { findIssueByIid, type IssueRow } from '../../../services/issues/rows.js';

export interface IssueProject {
  info: ProjectInfo;
  access: number;
}

/** The project of `:id` (or `rawId`; 404 rules of findProject) with the caller's access. */
export async function issueProject(c: Ctx, rawId = String(c.params.raw.id ?? '')): Promise<IssueProject> {
  const found = await findProject(c, rawId);
  return { info: { project: found.project, namespace: found.namespace }, access: found.access };
}

export const assigneesOf = (db: Kysely<DB>, issueId: number) =>
  db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issueId).orderBy('position').orderBy('id').execute().then((r) => r.map((x) => x.user_id));

/** `:issue_iid`: an integer (400 `issue_iid is invalid` otherwise, as Grape's type check). */
function iidParam(c: Ctx): number {
  const raw = String(c.params.raw.issue_iid ?? '');
  if (!/^-?\d+$/.test(raw)) throw paramError('issue_iid is invalid');
  return raw.length > 10 ? -1 : dbId(Number(raw));
}

export type IssueScopeCtx = IssueProject & { issue: IssueRow; assignees: number[] };

/**
 * The project and issue of the path that the caller may read: `404 Not found` otherwise (GitLab's
 * IssuesFinder finds none: the feature off or hidden, a confidential issue of others).
 */
export async function issueFromPath(c: Ctx): Promise<IssueScopeCtx> {
  return readableIssue(c, await issueProject(c), iidParam(c));
}

/** An issue of `p` by iid that the caller may read; `404 Not found` otherwise. */
export async function readableIssue(c: Ctx, p: IssueProject, iid: number): Promise<IssueScopeCtx> {
  if (!canReadIssues(c.user, p.info, p.access)) throw notFound();
  const issue = iid > 0 ? await findIssueByIid(c.app.db, p.info.project.id, iid) : undefined;
  if (!issue) throw notFound();
  const assignees = await assigneesOf(c.app.db, issue.id);
  if (!canReadIssue(c.user, p.access, issue, assignees)) throw notFound();
  return Object.assign(p, { issue, assignees });
}


/** Whether the caller is subscribed: an explicit choice, else being the author, an assignee or a commenter. */
export async function issueSubscribed(c: Ctx, s: { issue: IssueRow; assignees: number[] }): Promise<boolean> {
  if (!c.user) return false;
  const uid = c.user.id;
  const explicit = await c.app.db.selectFrom('subscriptions').select('subscribed').where('subscribable_type', '=', 'Issue').where('subscribable_id', '=', s.issue.id).where('user_id', '=', uid).executeTakeFirst();
  if (explicit) return explicit.subscribed === 1;
  if (s.issue.author_id === uid || s.assignees.includes(uid)) return true;
  const noted = await c.app.db.selectFrom('notes').select('id').where('noteable_type', '=', 'Issue').where('noteable_id', '=', s.issue.id).where('author_id', '=', uid).where('system', '=', 0).limit(1).executeTakeFirst();
  return !!noted;
}
