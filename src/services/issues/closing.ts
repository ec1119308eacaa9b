// Closing issues from merge requests and commits (GitLab's Gitlab::ClosingIssueExtractor with its
// default issue_closing_pattern): "Closes #1", "fixes group/project#2, #3 and #4", "Resolves
// https://host/group/project/-/issues/5". A merge request into the default branch records the
// issues its title and description close (merge_requests_closing_issues) and closes them when it
// is merged; a push to the default branch closes those its new commits' messages name. Only
// issues the merging or pushing user may update are closed (Issues::CloseService's check).
// GITLAB-COMPAT: `autoclose_referenced_issues` is always on (the project setting is not kept).
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import { findUserById } from '../../db/repositories/users.js';
import type { RefChange } from '../../git/index.js';
import { GitRepository } from '../../git/index.js';
import { emitEvent } from '../events.js';
import { recordStateChange } from '../resource-events.js';
import type { MrRow, ProjectInfo } from '../merge-requests/rows.js';
import { effectiveAccess, fullPath, loadProjectById, repoPathFor } from '../projects/lookup.js';
import { refChangeListeners } from '../repository/ref-hooks.js';
import { canUpdateIssue } from './access.js';
import { findIssueById, type IssueRow } from './rows.js';
import { closeIssue } from './write.js';

const PATH = String.raw`[A-Za-z0-9_.][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.][A-Za-z0-9_.-]*)*`;
const REF = String.raw`(?:https?://[^\s/]+(?:/[^\s/]+)*?/-/issues/\d+|(?:${PATH})?#\d+)`;
const KEYWORD = String.raw`(?:[Cc]los(?:e[sd]?|ing)|[Ff]ix(?:e[sd]|ing)?|[Rr]esolv(?:e[sd]?|ing)|[Ii]mplement(?:s|ed|ing)?)`;
const CLOSING = new RegExp(String.raw`\b${KEYWORD}:? +((?:(?:[Ii]ssues? +)?${REF}(?: *,? +and +| *,? *)?)+)`, 'g');
const ONE_REF = new RegExp(REF, 'g');

export interface IssueRef {
  /** The project's full path, or null for this project. */
  path: string | null;
  iid: number;
}

/** The issue references a text closes, in order, without repeats (at most 100). */
export function closingRefs(text: string): IssueRef[] {
  const out: IssueRef[] = [];
  const seen = new Set<string>();
  if (!/\b(?:clos|fix|resolv|implement)/i.test(text)) return out;
  for (const m of text.matchAll(CLOSING)) {
    for (const r of m[1].matchAll(ONE_REF)) {
      const raw = r[0];
      let ref: IssueRef | null = null;
      const url = /^https?:\/\/[^\s/]+\/(.+)\/-\/issues\/(\d+)$/.exec(raw);
      if (url) ref = { path: url[1], iid: Number(url[2]) };
      else {
        const i = raw.lastIndexOf('#');
        ref = { path: i > 0 ? raw.slice(0, i) : null, iid: Number(raw.slice(i + 1)) };
      }
      if (!Number.isSafeInteger(ref.iid) || ref.iid > 2_147_483_647) continue;
      const key = `${ref.path?.toLowerCase() ?? ''}#${ref.iid}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(ref);
      if (out.length >= 100) return out;
    }
  }
  return out;
}

/** The existing issues the references name, seen from `info`'s project (other projects by full path). */
export async function resolveRefs(app: AppContext, info: ProjectInfo, refs: IssueRef[]): Promise<IssueRow[]> {
  if (!refs.length) return [];
  const own = fullPath(info.project, info.namespace).toLowerCase();
  const byPath = new Map<string, number[]>();
  for (const r of refs) {
    const key = r.path === null ? own : r.path.toLowerCase();
    byPath.set(key, [...(byPath.get(key) ?? []), r.iid]);
  }
  const routes = await app.db.selectFrom('routes').select(['path_lower', 'source_id']).where('source_type', '=', 'Project').where('path_lower', 'in', [...byPath.keys()]).execute();
  const out: IssueRow[] = [];
  for (const route of routes) {
    const iids = byPath.get(route.path_lower) ?? [];
    if (iids.length) out.push(...(await app.db.selectFrom('issues').selectAll().where('project_id', '=', route.source_id).where('iid', 'in', iids).execute()));
  }
  return out;
}

function closesIn(info: ProjectInfo, mr: Pick<MrRow, 'target_branch'>): boolean {
  return info.project.default_branch === mr.target_branch;
}

/**
 * Records the issues a merge request closes (after it was opened or its title, description or
 * target branch changed): those its title and description name, when it targets the default branch.
 */
export async function syncClosingIssues(app: AppContext, info: ProjectInfo, mr: MrRow, opts: { created?: boolean } = {}): Promise<void> {
  const refs = closesIn(info, mr) ? closingRefs(`${mr.title}\n${mr.description ?? ''}`) : [];
  if (opts.created && refs.length === 0) return;
  const issues = await resolveRefs(app, info, refs);
  const want = new Set(issues.map((i) => i.id));
  await app.database.transaction(async (trx) => {
    const have = await trx.selectFrom('merge_requests_closing_issues').select(['id', 'issue_id']).where('merge_request_id', '=', mr.id).execute();
    const stale = have.filter((h) => !want.has(h.issue_id)).map((h) => h.id);
    if (stale.length) await trx.deleteFrom('merge_requests_closing_issues').where('id', 'in', stale).execute();
    const known = new Set(have.map((h) => h.issue_id));
    const add = [...want].filter((id) => !known.has(id));
    const now = nowIso();
    if (add.length) await trx.insertInto('merge_requests_closing_issues').values(add.map((issue_id) => ({ merge_request_id: mr.id, issue_id, created_at: now }))).execute();
  });
}

/** Closes the issues the user may update, each with its issue event. */
async function closeAll(app: AppContext, user: UserRow, issues: IssueRow[], sourceOf: (issueId: number) => { commit?: string; mergeRequestId?: number }): Promise<void> {
  const projects = new Map<number, { info: ProjectInfo; access: number } | null>();
  for (const issue of issues) {
    if (issue.state !== 'opened') continue;
    let p = projects.get(issue.project_id);
    if (p === undefined) {
      const info = await loadProjectById(app.db, issue.project_id);
      p = info ? { info, access: await effectiveAccess(app.db, user, info.project, info.namespace) } : null;
      projects.set(issue.project_id, p);
    }
    if (!p) continue;
    const assignees = (await app.db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issue.id).execute()).map((r) => r.user_id);
    if (!canUpdateIssue(user, p.info, p.access, issue, assignees)) continue;
    const closed = await app.database.transaction(async (trx) => {
      const done = await closeIssue(trx, issue.id, user.id, nowIso());
      if (done) await recordStateChange(trx, { type: 'Issue', id: issue.id }, user.id, 'closed', sourceOf(issue.id));
      return done;
    });
    if (closed) {
      const fresh = (await findIssueById(app.db, issue.id))!;
      await emitEvent(app, { kind: 'issue', projectId: issue.project_id, info: p.info, issue: fresh, previous: issue, userId: user.id, action: 'close' });
    }
  }
}

/** After a merge: the issues the merge request closes, closed by the user who merged it. */
export async function closeIssuesOnMerge(app: AppContext, info: ProjectInfo, mr: MrRow, user: UserRow): Promise<void> {
  if (!closesIn(info, mr)) return;
  const ids = (await app.db.selectFrom('merge_requests_closing_issues').select('issue_id').where('merge_request_id', '=', mr.id).execute()).map((r) => r.issue_id);
  if (!ids.length) return;
  const issues = await app.db.selectFrom('issues').selectAll().where('id', 'in', ids).orderBy('id').execute();
  await closeAll(app, user, issues, () => ({ mergeRequestId: mr.id }));
}

/** A push to the default branch: the issues its new commits' messages close (the newest 100 commits). */
async function closeFromCommits(app: AppContext, projectId: number, changes: RefChange[], userId: number | null): Promise<void> {
  if (userId === null) return;
  const info = await loadProjectById(app.db, projectId);
  if (!info || !info.project.default_branch) return;
  const change = changes.find((ch) => ch.ref === `refs/heads/${info.project.default_branch}` && ch.after);
  if (!change?.after) return;
  // A new default branch brings no closing: only commits added to an existing one do.
  if (!change.before) return;
  const repo = new GitRepository(repoPathFor(app, projectId));
  const commits = await repo.listCommits({ ref: change.after, exclude: change.before, limit: 100 });
  const refs = closingRefs(commits.map((c) => c.message).join('\n'));
  if (!refs.length) return;
  const user = await findUserById(app.db, userId);
  if (!user) return;
  const issues = await resolveRefs(app, info, refs);
  // Each issue's state event names the oldest commit of the push that closes it.
  const closedBy = new Map<number, string>();
  if (issues.length) {
    for (const commit of [...commits].reverse()) {
      const own = closingRefs(commit.message);
      if (!own.length) continue;
      for (const issue of await resolveRefs(app, info, own)) if (!closedBy.has(issue.id)) closedBy.set(issue.id, commit.id);
    }
  }
  await closeAll(app, user, issues, (id) => (closedBy.has(id) ? { commit: closedBy.get(id)! } : {}));
}

let registered = false;

export function registerClosingHooks(): void {
  if (registered) return;
  registered = true;
  refChangeListeners.push(closeFromCommits);
}
