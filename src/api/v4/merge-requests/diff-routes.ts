// Reading a merge request's changes: changes (deprecated), diffs, raw_diffs, commits, participants.
// Diffs are read from git between the stored diff_refs, with GitLab-like size limits
// (docs/merge-requests.md).
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../../http/route.js';
import { route } from '../../../http/route.js';
import { paginateArray } from '../../../http/pagination.js';
import type { Diff, DiffLimits } from '../../../git/index.js';
import { findUsersByIds } from '../../../db/repositories/users.js';
import { fullPath } from '../../../services/projects/lookup.js';
import { refreshMergeStatus, repoFor } from '../../../services/merge-requests/git-ops.js';
import type { MrRow } from '../../../services/merge-requests/rows.js';
import { presentUserBasic } from '../entities/user.js';
import { mrFromPath, presentOne, type MrProject } from './context.js';

/** Limits of the diffs endpoints (GitLab's defaults for diff_max_files, diff_max_lines, diff_max_patch_bytes). */
export const DIFF_LIMITS: DiffLimits = {
  maxFiles: 1000,
  maxTotalLines: 50_000,
  maxTotalBytes: 10 * 1024 * 1024,
  maxBytesPerFile: 200 * 1024,
};

async function loadDiffs(c: Ctx, p: MrProject, mr: MrRow, limits: DiffLimits): Promise<{ diffs: Diff[]; overflow: boolean }> {
  if (!mr.base_sha || !mr.head_sha) return { diffs: [], overflow: false };
  return repoFor(c.app, mr.project_id).diff(mr.base_sha, mr.head_sha, limits);
}

function unidiffText(d: Diff): string {
  if (!d.diff) return d.diff;
  const a = d.new_file ? '/dev/null' : `a/${d.old_path}`;
  const b = d.deleted_file ? '/dev/null' : `b/${d.new_path}`;
  return `--- ${a}\n+++ ${b}\n${d.diff}`;
}

function presentDiff(d: Diff, opts: { unidiff: boolean; flags: boolean }) {
  const out: Record<string, unknown> = {
    old_path: d.old_path,
    new_path: d.new_path,
    a_mode: d.a_mode,
    b_mode: d.b_mode,
    new_file: d.new_file,
    renamed_file: d.renamed_file,
    deleted_file: d.deleted_file,
    diff: opts.unidiff ? unidiffText(d) : d.diff,
  };
  if (opts.flags) {
    out.generated_file = d.generated_file ?? false;
    out.collapsed = d.collapsed ?? false;
    out.too_large = d.too_large ?? false;
  }
  return out;
}

export function presentCommit(commit: { id: string; short_id: string; title: string; message: string; author_name: string; author_email: string; authored_date: string; committer_name: string; committer_email: string; committed_date: string; parent_ids: string[] }, webBase: string) {
  return {
    id: commit.id,
    short_id: commit.short_id,
    created_at: commit.committed_date,
    parent_ids: commit.parent_ids,
    title: commit.title,
    message: commit.message,
    author_name: commit.author_name,
    author_email: commit.author_email,
    authored_date: commit.authored_date,
    committer_name: commit.committer_name,
    committer_email: commit.committer_email,
    committed_date: commit.committed_date,
    trailers: {},
    extended_trailers: {},
    web_url: `${webBase}/-/commit/${commit.id}`,
  };
}

export function registerMergeRequestDiffRoutes(app: FastifyInstance): void {
  // GET /projects/:id/merge_requests/:merge_request_iid/changes
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/changes', async function mrChanges(c) {
    const p = await mrFromPath(c);
    const raw = c.params.bool('access_raw_diffs') === true;
    const unidiff = c.params.bool('unidiff') === true;
    const mr = await refreshMergeStatus(c.app, p.mr);
    // GITLAB-COMPAT: diffs always come from the repository; access_raw_diffs lifts the size limits.
    const { diffs, overflow } = await loadDiffs(c, p, mr, raw ? {} : DIFF_LIMITS);
    const out = await presentOne(c, p, mr);
    out.changes = diffs.map((d) => presentDiff(d, { unidiff, flags: false }));
    out.overflow = overflow;
    return out;
  });

  // GET /projects/:id/merge_requests/:merge_request_iid/diffs
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/diffs', async function mrDiffs(c) {
    const p = await mrFromPath(c);
    const unidiff = c.params.bool('unidiff') === true;
    const mr = await refreshMergeStatus(c.app, p.mr);
    const { diffs } = await loadDiffs(c, p, mr, DIFF_LIMITS);
    return paginateArray(c, diffs).map((d) => presentDiff(d, { unidiff, flags: true }));
  });

  // GET /projects/:id/merge_requests/:merge_request_iid/raw_diffs
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/raw_diffs', async function mrRawDiffs(c) {
    const p = await mrFromPath(c);
    const mr = await refreshMergeStatus(c.app, p.mr);
    const text = mr.base_sha && mr.head_sha ? await repoFor(c.app, mr.project_id).rawDiff(mr.base_sha, mr.head_sha) : '';
    c.reply.type('text/plain; charset=utf-8');
    c.header('Content-Disposition', 'inline');
    c.header('Cache-Control', 'no-cache, no-store');
    return c.reply.send(text);
  });

  // GET /projects/:id/merge_requests/:merge_request_iid/commits
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/commits', async function mrCommits(c) {
    const p = await mrFromPath(c);
    const mr = await refreshMergeStatus(c.app, p.mr);
    if (!mr.head_sha || !mr.start_sha) return paginateArray(c, []);
    const repo = repoFor(c.app, mr.project_id);
    const commits = await repo.listCommits({ ref: mr.head_sha, exclude: mr.base_sha ?? mr.start_sha, limit: 10_000 });
    const web = `${c.base}/${fullPath(p.info.project, p.info.namespace)}`;
    return paginateArray(c, commits).map((cm) => presentCommit(cm, web));
  });

  // GET /projects/:id/merge_requests/:merge_request_iid/participants
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/participants', async function mrParticipants(c) {
    const p = await mrFromPath(c);
    const [assignees, reviewers] = await Promise.all([
      c.app.db.selectFrom('merge_request_assignees').select('user_id').where('merge_request_id', '=', p.mr.id).orderBy('id').execute(),
      c.app.db.selectFrom('merge_request_reviewers').select('user_id').where('merge_request_id', '=', p.mr.id).orderBy('id').execute(),
    ]);
    const ids = [...new Set([p.mr.author_id, ...assignees.map((a) => a.user_id), ...reviewers.map((r) => r.user_id), ...(p.mr.merge_user_id ? [p.mr.merge_user_id] : [])])];
    const users = await findUsersByIds(c.app.db, ids);
    return paginateArray(c, ids.map((id) => users.get(id)).filter((u) => u !== undefined).map((u) => presentUserBasic(u!, { base: c.base })));
  });

  // GET /projects/:id/merge_requests/:merge_request_iid/reviewers
  route(app, 'GET', '/projects/:id/merge_requests/:merge_request_iid/reviewers', async function mrReviewers(c) {
    const p = await mrFromPath(c);
    const rows = await c.app.db.selectFrom('merge_request_reviewers').selectAll().where('merge_request_id', '=', p.mr.id).orderBy('id').execute();
    const users = await findUsersByIds(c.app.db, rows.map((r) => r.user_id));
    return rows
      .filter((r) => users.has(r.user_id))
      .map((r) => ({ user: presentUserBasic(users.get(r.user_id)!, { base: c.base }), state: r.state, created_at: r.created_at }));
  });
}
