// Commits (GitLab's lib/api/commits.rb): history of a ref, one commit, its diff, and creating a
// commit from several file actions at once.
import { assertCanPushToBranch } from './protection.js';
import type { FastifyInstance } from 'fastify';
import { apiError, missingAttributes, notFound, notGiven, paramError } from '../../../http/errors.js';
import { paginateArray, readPage, setOffsetHeaders } from '../../../http/pagination.js';
import type { ParamValue } from '../../../http/params.js';
import { parseBoolean } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import { isGitError, type Commit } from '../../../git/index.js';
import { isSafeRevision } from '../../../git/refname.js';
import { commitActions, type ActionInput } from '../../../services/repository/commit-actions.js';
import { defaultRef } from '../../../services/repository/default-branch.js';
import { commitPeople } from '../../../services/repository/identity.js';
import { readableRepo, writableRepo, type ProjectRepo } from '../../../services/repository/project-repo.js';
import { commitDiff, commitStats, commitStatsBatch } from '../../../services/repository/queries.js';
import { presentCommit, presentCommitDetail, presentDiff } from '../entities/commit.js';
import { pathParam, requiredString } from './common.js';

const ACTIONS = ['create', 'delete', 'move', 'update', 'chmod'] as const;

export async function findCommit(pr: ProjectRepo, rev: string): Promise<Commit> {
  const commit = isSafeRevision(rev) ? await pr.repo.getCommit(rev) : null;
  if (!commit) throw notFound('Commit');
  return commit;
}

async function detail(pr: ProjectRepo, commit: Commit, withStats: boolean) {
  const stats = withStats ? await commitStats(pr.repo, commit.id, commit.parent_ids[0]) : undefined;
  return presentCommitDetail(commit, pr.webUrl, pr.project.id, stats);
}

/** git's date parser only understands 1970–2099: dates outside are clamped to what they mean. */
const GIT_MIN_DATE = Date.parse('1970-01-02T00:00:00Z');
const GIT_MAX_DATE = Date.parse('2099-12-31T00:00:00Z');

function dateWindow(since: string | undefined, until: string | undefined): { since?: string; until?: string; empty: boolean } {
  const out: { since?: string; until?: string; empty: boolean } = { empty: false };
  if (since !== undefined) {
    const t = Date.parse(since);
    if (t > GIT_MAX_DATE) out.empty = true;
    else if (t >= GIT_MIN_DATE) out.since = since;
  }
  if (until !== undefined) {
    const t = Date.parse(until);
    if (t < GIT_MIN_DATE) out.empty = true;
    else if (t <= GIT_MAX_DATE) out.until = until;
  }
  return out;
}

// GET /projects/:id/repository/commits
async function listCommits(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const ref = c.params.string('ref_name') || (await defaultRef(pr.repo, pr.project.default_branch));
  const { since, until, empty } = dateWindow(c.params.datetime('since'), c.params.datetime('until'));
  const path = c.params.string('path');
  const firstParent = c.params.bool('first_parent') ?? false;
  const withStats = c.params.bool('with_stats') ?? false;
  const { page, perPage } = readPage(c);
  let commits: Commit[] = [];
  if (ref && isSafeRevision(ref) && !empty) {
    try {
      // One more than a page tells whether a next page exists without counting the history.
      commits = await pr.repo.listCommits({
        ref,
        offset: (page - 1) * perPage,
        limit: perPage + 1,
        firstParent,
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
        ...(path ? { path } : {}),
      });
    } catch (err) {
      // An unknown ref or range (or an empty repository) has no history, as GitLab answers.
      if (!isGitError(err)) throw err;
    }
  }
  const hasNext = commits.length > perPage;
  if (hasNext) commits.pop();
  // GITLAB-COMPAT: X-Total/X-Total-Pages are left out (GitLab counts the whole history).
  const total = !hasNext && (commits.length > 0 || page === 1) ? (page - 1) * perPage + commits.length : null;
  setOffsetHeaders(c, page, perPage, total, hasNext);
  if (!withStats) return commits.map((cm) => presentCommit(cm, pr.webUrl));
  const stats = await commitStatsBatch(pr.repo, commits);
  return commits.map((cm) => (Object.assign({}, presentCommit(cm, pr.webUrl), { stats: stats.get(cm.id)! })));
}

// GET /projects/:id/repository/commits/:sha
async function showCommit(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const commit = await findCommit(pr, pathParam(c, 'sha'));
  return detail(pr, commit, c.params.bool('stats') ?? true);
}

// GET /projects/:id/repository/commits/:sha/refs: the branches and tags that contain a commit.
async function commitRefs(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const commit = await findCommit(pr, pathParam(c, 'sha'));
  const type = c.params.enum('type', ['branch', 'tag', 'all'] as const) ?? 'all';
  const refs: Array<{ type: string; name: string }> = [];
  if (type !== 'tag') for (const name of await pr.repo.refsContaining(commit.id, 'branch')) refs.push({ type: 'branch', name });
  if (type !== 'branch') for (const name of await pr.repo.refsContaining(commit.id, 'tag')) refs.push({ type: 'tag', name });
  return paginateArray(c, refs);
}

// GET /projects/:id/repository/commits/:sha/diff
async function showCommitDiff(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const commit = await findCommit(pr, pathParam(c, 'sha'));
  const diffs = await commitDiff(pr.repo, commit.id, commit.parent_ids[0]);
  return paginateArray(c, diffs).map(presentDiff);
}

function isHash(v: ParamValue | undefined): v is Record<string, ParamValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One `actions[]` entry, worded like Grape's nested validation errors. */
function parseAction(raw: ParamValue, i: number): ActionInput {
  const name = (k: string) => `actions[${i}][${k}]`;
  if (!isHash(raw)) throw paramError(`actions[${i}] is invalid`);
  const str = (k: string): string | undefined => {
    const v = raw[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' && typeof v !== 'number') throw paramError(`${name(k)} is invalid`);
    return String(v);
  };
  const action = str('action');
  const filePath = str('file_path');
  const missing = [!action && 'action', !filePath && 'file_path'].filter(Boolean) as string[];
  if (missing.length) throw missingAttributes(missing.map(name));
  if (!(ACTIONS as readonly string[]).includes(action!)) throw paramError(`${name('action')} does not have a valid value`);
  const out: ActionInput = { action: action as ActionInput['action'], file_path: filePath! };
  const encoding = str('encoding') ?? 'text';
  if (encoding !== 'text' && encoding !== 'base64') throw paramError(`${name('encoding')} does not have a valid value`);
  const content = str('content');
  if (content !== undefined && action !== 'delete' && action !== 'chmod') {
    out.content = encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
  } else if (action === 'create' || action === 'update') {
    out.content = Buffer.alloc(0);
  }
  const previous = str('previous_path');
  if (action === 'move') {
    if (!previous) throw notGiven(`${name('previous_path')}`);
    out.previous_path = previous;
  }
  if (raw.execute_filemode !== undefined && raw.execute_filemode !== null) {
    const mode = parseBoolean(raw.execute_filemode);
    if (mode === undefined) throw paramError(`${name('execute_filemode')} is invalid`);
    out.execute_filemode = mode;
  } else if (action === 'chmod') {
    throw notGiven(`${name('execute_filemode')}`);
  }
  const last = str('last_commit_id');
  if (last) out.last_commit_id = last;
  return out;
}

// POST /projects/:id/repository/commits
async function createCommit(c: Ctx) {
  c.params.requireAll(['branch', 'commit_message', 'actions']);
  const pr = await writableRepo(c, pathParam(c, 'id'));
  const branch = requiredString(c, 'branch');
  const message = requiredString(c, 'commit_message');
  c.params.mutuallyExclusive(['start_branch', 'start_sha']);
  const rawActions = c.params.raw.actions;
  if (!Array.isArray(rawActions)) throw paramError('actions is invalid');
  if (rawActions.length === 0) throw paramError('actions is empty');
  const actions = rawActions.map(parseAction);
  // GITLAB-COMPAT: `force` (overwrite the branch) is refused rather than silently ignored.
  if (c.params.bool('force')) throw apiError(400, 'force is not supported');
  const startBranch = c.params.string('start_branch');
  const startSha = c.params.string('start_sha');
  const user = c.requireUser();
  await assertCanPushToBranch(c, pr, branch, 403);
  const { sha } = await commitActions(c.app, pr.project.id, pr.repo, {
    branch,
    ...(startBranch ? { startBranch } : {}),
    ...(startSha ? { startSha } : {}),
    message,
    actions,
    actorId: user.id,
    people: commitPeople(user, { authorName: c.params.string('author_name'), authorEmail: c.params.string('author_email') }),
    staleMessage: (path) => `The file has changed since you started editing it: ${path}`,
  });
  const commit = await findCommit(pr, sha);
  return detail(pr, commit, c.params.bool('stats') ?? true);
}

export function registerCommitRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/commits', listCommits);
  route(app, 'POST', '/projects/:id/repository/commits', createCommit);
  route(app, 'GET', '/projects/:id/repository/commits/:sha', showCommit);
  route(app, 'GET', '/projects/:id/repository/commits/:sha/diff', showCommitDiff);
  route(app, 'GET', '/projects/:id/repository/commits/:sha/refs', commitRefs);
}
