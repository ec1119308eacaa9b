// Accepting a merge request (PUT …/merge): GitLab's checks in its order and status codes
// (reference §5.7), auto-merge, and the merge itself. The merge holds a row lock (a token written by
// one atomic UPDATE), builds the commit without a work tree, moves the target ref with a git ref
// transaction that also verifies the source, then records the merge. A crash between the ref move
// and the record is repaired at start-up from in_progress_merge_commit_sha.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import { findUserById } from '../../db/repositories/users.js';
import { apiError, methodNotAllowed, resourceLock, unauthorized } from '../../http/errors.js';
import { isGitError, type RefChange } from '../../git/index.js';
import { closeIssuesOnMerge } from '../issues/closing.js';
import { emitEvent } from '../events.js';
import { insertEvents } from '../event-rows.js';
import { recordStateChange } from '../resource-events.js';
import { notifyRefChanges } from '../repository/ref-hooks.js';
import { AccessLevel } from '../access.js';
import { effectiveAccess, fullPath, loadProjectById } from '../projects/lookup.js';
import { loadBranchRules, refActor, type RefProtection } from '../repository/protected-refs.js';
import { branchSha, deleteBranchIfAt, fromFork, moveTargetVerifyingSource, refreshMergeStatus, repoFor, sourceBranchSha } from './git-ops.js';
import { findMrById, headPipelineOf, loadBundle, type MrRow, type ProjectInfo } from './rows.js';
import { ACTIVE_PIPELINE_STATUSES, ciVerdict, firstFailingCheck, squashOnMerge } from './status.js';

/** A lock older than this belongs to a request that died; the next merge may take it over. */
const STALE_LOCK_MS = 10 * 60 * 1000;

export interface MergeOptions {
  sha?: string;
  mergeCommitMessage?: string;
  squashCommitMessage?: string;
  squash?: boolean;
  shouldRemoveSourceBranch?: boolean;
  autoMerge?: boolean;
}

/**
 * can_be_merged_by?: may push to or merge into the target branch (UserAccess#can_update_branch?):
 * Developers and up on a writable project, as the target's protection allows.
 */
export function canMerge(user: Pick<UserRow, 'is_admin'> | null, access: number, info: ProjectInfo, protection: RefProtection, targetBranch: string): boolean {
  if (!user || access < AccessLevel.DEVELOPER || info.project.archived) return false;
  return protection.canUpdateBranch(refActor(user, access, info.project.archived), targetBranch);
}

/**
 * can_remove_source_branch?: never the project's default branch nor a protected branch, and only
 * by someone who may push code to the project.
 */
async function canRemoveSourceBranch(app: AppContext, target: ProjectInfo, mr: MrRow, user: UserRow): Promise<boolean> {
  // From a fork the branch is the fork's, and so are the rules and the access that count.
  const info = fromFork(mr) ? await loadProjectById(app.db, mr.source_project_id) : target;
  if (!info) return false;
  if (mr.source_branch === info.project.default_branch) return false;
  if ((await protectionFor(app, info)).isProtectedBranch(mr.source_branch)) return false;
  const access = await effectiveAccess(app.db, user, info.project, info.namespace);
  return access >= AccessLevel.DEVELOPER && !info.project.archived;
}

/** The target's (or source's) rules: both branches exist, so no empty-repository defaults are needed. */
export function protectionFor(app: AppContext, info: ProjectInfo): Promise<RefProtection> {
  return loadBranchRules(app, info.project.id);
}

const branchCannotBeMerged = () => apiError(422, 'Branch cannot be merged');

export async function acceptMergeRequest(app: AppContext, info: ProjectInfo, row: MrRow, user: UserRow, access: number, opts: MergeOptions): Promise<MrRow> {
  if (info.project.require_sha_for_merge && !opts.sha) throw apiError(400, 'SHA must be provided when merging');
  if (!canMerge(user, access, info, await protectionFor(app, info), row.target_branch)) throw unauthorized();
  let mr = await refreshMergeStatus(app, row);
  if (opts.sha && opts.sha !== mr.head_sha) throw apiError(409, `SHA does not match HEAD of source branch: ${mr.head_sha}`);
  if (opts.squash !== undefined && mr.state === 'opened') {
    await app.db.updateTable('merge_requests').set({ squash: opts.squash ? 1 : 0 }).where('id', '=', mr.id).execute();
    mr = Object.assign({}, mr, { squash: opts.squash ? 1 : 0 });
  }
  const bundle = await loadBundle(app.db, [mr], [info]);
  const pipeline = headPipelineOf(mr, bundle);
  const failing = firstFailingCheck(mr, { project: info.project, pipeline, blocked: bundle.blocked.has(mr.id) });
  const ci = ciVerdict(info.project, pipeline);
  if (opts.autoMerge && mr.state === 'opened') {
    const pipelineActive = pipeline !== undefined && ACTIVE_PIPELINE_STATUSES.includes(pipeline.status);
    if (pipelineActive && (failing === null || failing === 'conflict')) return enableAutoMerge(app, mr, user, opts);
  }
  if (failing === 'conflict') throw branchCannotBeMerged();
  if (failing !== null || ci !== 'ok') throw methodNotAllowed();
  return performMerge(app, info, mr, user, opts);
}

async function enableAutoMerge(app: AppContext, mr: MrRow, user: UserRow, opts: MergeOptions): Promise<MrRow> {
  const params = JSON.stringify({
    sha: opts.sha,
    merge_commit_message: opts.mergeCommitMessage,
    squash_commit_message: opts.squashCommitMessage,
    should_remove_source_branch: opts.shouldRemoveSourceBranch,
  });
  const set = {
    merge_when_pipeline_succeeds: 1,
    merge_user_id: user.id,
    merge_params: params,
    merge_error: null,
    updated_at: nowIso(),
    ...(opts.shouldRemoveSourceBranch !== undefined ? { should_remove_source_branch: opts.shouldRemoveSourceBranch ? 1 : 0 } : {}),
  };
  await app.db.updateTable('merge_requests').set(set).where('id', '=', mr.id).where('state', '=', 'opened').execute();
  return Object.assign({}, mr, { ...set });
}

export async function cancelAutoMerge(app: AppContext, mr: MrRow): Promise<MrRow> {
  if (!mr.merge_when_pipeline_succeeds) throw apiError(406, "Can't cancel the automatic merge");
  const set = { merge_when_pipeline_succeeds: 0, merge_user_id: null, merge_params: '{}', updated_at: nowIso() };
  await app.db.updateTable('merge_requests').set(set).where('id', '=', mr.id).execute();
  return Object.assign({}, mr, { ...set });
}

function defaultMergeMessage(info: ProjectInfo, mr: MrRow): string {
  const parts = [`Merge branch '${mr.source_branch}' into '${mr.target_branch}'`, mr.title];
  return `${parts.join('\n\n')}\n\nSee merge request ${fullPath(info.project, info.namespace)}!${mr.iid}`;
}

async function takeLock(app: AppContext, mr: MrRow, user: UserRow): Promise<string> {
  const token = randomUUID();
  const now = new Date();
  const res = await app.db
    .updateTable('merge_requests')
    .set({ merge_lock: token, merge_lock_at: now.toISOString() })
    .where('id', '=', mr.id)
    .where('state', '=', 'opened')
    .where((eb) => eb.or([eb('merge_lock', 'is', null), eb('merge_lock_at', '<', new Date(now.getTime() - STALE_LOCK_MS).toISOString())]))
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) return token;
  const current = await findMrById(app.db, mr.id);
  if (!current || current.state !== 'opened') throw methodNotAllowed();
  void user;
  throw resourceLock();
}

async function releaseLock(app: AppContext, mrId: number, token: string): Promise<void> {
  await app.db
    .updateTable('merge_requests')
    .set({ merge_lock: null, merge_lock_at: null, in_progress_merge_commit_sha: null })
    .where('id', '=', mrId)
    .where('merge_lock', '=', token)
    .where('state', '=', 'opened')
    .execute();
}

async function recordMergeError(app: AppContext, mrId: number, message: string, status?: string): Promise<void> {
  await app.db
    .updateTable('merge_requests')
    .set({ merge_error: message, ...(status ? { merge_status: status } : {}) })
    .where('id', '=', mrId)
    .execute();
}

/** Builds the commit the target branch moves to, per the project's merge method. */
async function buildMergeResult(app: AppContext, info: ProjectInfo, mr: MrRow, user: UserRow, opts: MergeOptions, source: string, target: string) {
  const repo = repoFor(app, info.project.id);
  const identity = { name: user.name, email: user.email };
  const method = info.project.merge_method;
  const base = await repo.mergeBase(target, source);
  if (!base) return null;
  const squash = squashOnMerge(info.project, opts.squash ?? mr.squash === 1);
  let head = source;
  let squashSha: string | null = null;
  if (squash) {
    const message = opts.squashCommitMessage || mr.title;
    squashSha = await repo.squashCommit({ base, head: source, onto: method === 'merge' ? base : target, message, author: identity });
    head = squashSha;
  }
  if (method === 'ff') {
    if (!(await repo.isAncestor(target, head))) return null;
    return { newTarget: head, mergeCommitSha: head, squashSha };
  }
  if (method === 'rebase_merge' && base !== target) return null;
  const message = opts.mergeCommitMessage || defaultMergeMessage(info, mr);
  const mergeSha = await repo.createMergeCommit({ ours: target, theirs: head, message, author: identity });
  return { newTarget: mergeSha, mergeCommitSha: mergeSha, squashSha };
}

/** The merge itself, under the merge lock. Returns the merged row. */
export async function performMerge(app: AppContext, info: ProjectInfo, mr: MrRow, user: UserRow, opts: MergeOptions): Promise<MrRow> {
  const token = await takeLock(app, mr, user);
  let merged = false;
  try {
    const repo = repoFor(app, info.project.id);
    const [source, target] = await Promise.all([sourceBranchSha(app, mr), branchSha(repo, mr.target_branch)]);
    if (!source || !target) throw branchCannotBeMerged();
    if (opts.sha && opts.sha !== source) throw apiError(409, `SHA does not match HEAD of source branch: ${source}`);
    let result;
    try {
      result = await buildMergeResult(app, info, mr, user, opts, source, target);
    } catch (err) {
      if (isGitError(err, 'conflict')) {
        await recordMergeError(app, mr.id, 'Merge failed: conflicts between the source and target branches. Please resolve them and try again.', 'cannot_be_merged');
        throw branchCannotBeMerged();
      }
      throw err;
    }
    if (!result) throw branchCannotBeMerged();
    // Recorded before the ref moves, so a crash right after the move can be reconciled.
    await app.db
      .updateTable('merge_requests')
      .set({ in_progress_merge_commit_sha: result.newTarget, merge_user_id: user.id })
      .where('id', '=', mr.id)
      .where('merge_lock', '=', token)
      .execute();
    // A fork's branch lives in another repository: the commit merged is the one read above.
    const fork = fromFork(mr);
    const moved = await moveTargetVerifyingSource(repo, mr.target_branch, result.newTarget, target, fork ? null : mr.source_branch, source);
    if (!moved) throw resourceLock();
    const remove = opts.shouldRemoveSourceBranch ?? (mr.should_remove_source_branch ?? mr.force_remove_source_branch) === 1;
    const now = nowIso();
    await app.db
      .updateTable('merge_requests')
      .set({
        state: 'merged',
        merged_at: now,
        updated_at: now,
        merge_user_id: user.id,
        merged_by_id: user.id,
        merge_commit_sha: result.mergeCommitSha,
        squash_commit_sha: result.squashSha,
        in_progress_merge_commit_sha: null,
        merge_lock: null,
        merge_lock_at: null,
        merge_when_pipeline_succeeds: 0,
        merge_error: null,
        merge_status: 'can_be_merged',
        head_sha: source,
        start_sha: target,
        checked_source_sha: source,
        checked_target_sha: target,
        ...(opts.shouldRemoveSourceBranch !== undefined ? { should_remove_source_branch: opts.shouldRemoveSourceBranch ? 1 : 0 } : {}),
      })
      .where('id', '=', mr.id)
      .where('merge_lock', '=', token)
      .execute();
    merged = true;
    // The merge stands whatever happens to its record: a failure is logged, the rest still runs.
    await recordStateChange(app.db, { type: 'MergeRequest', id: mr.id }, user.id, 'merged').catch((err) => app.log.error({ err, mergeRequestId: mr.id }, 'recording the merge state event failed'));
    const moves: RefChange[] = [{ ref: `refs/heads/${mr.target_branch}`, before: target, after: result.newTarget }];
    const sourceRemoved = remove && (await canRemoveSourceBranch(app, info, mr, user)) && (await deleteBranchIfAt(repoFor(app, mr.source_project_id), mr.source_branch, source));
    const removal: RefChange = { ref: `refs/heads/${mr.source_branch}`, before: source, after: null };
    if (sourceRemoved && !fork) moves.push(removal);
    const done = (await findMrById(app.db, mr.id))!;
    await notifyRefChanges(app, info.project.id, moves, user.id);
    if (sourceRemoved && fork) await notifyRefChanges(app, mr.source_project_id, [removal], user.id);
    await emitEvent(app, { kind: 'merge_request', projectId: info.project.id, info, mr: done, previous: { row: mr }, userId: user.id, action: 'merge' });
    await closeIssuesOnMerge(app, info, done, user);
    return done;
  } finally {
    if (!merged) await releaseLock(app, mr.id, token);
  }
}

/**
 * Start-up reconciliation: a merge whose target ref moved but whose row was not updated (crash)
 * is recorded as merged; one whose ref never moved is unlocked and stays open.
 */
export async function reconcileMerges(app: AppContext): Promise<number> {
  // `> ''` rather than IS NOT NULL (a sha is never empty): SQLite then reads the few locked rows
  // from the in_progress index instead of scanning every merge request (129 ms for 500,000).
  const rows = await app.db.selectFrom('merge_requests').selectAll().where('in_progress_merge_commit_sha', '>', '').where('state', '=', 'opened').execute();
  let fixed = 0;
  for (const mr of rows) {
    const repo = repoFor(app, mr.project_id);
    const target = await branchSha(repo, mr.target_branch);
    const sha = mr.in_progress_merge_commit_sha!;
    const landed = target !== null && (target === sha || (await repo.isAncestor(sha, target).catch(() => false)));
    if (landed) {
      const now = nowIso();
      await app.db
        .updateTable('merge_requests')
        .set({ state: 'merged', merged_at: mr.merge_lock_at ?? now, updated_at: now, merge_commit_sha: sha, merged_by_id: mr.merge_user_id, in_progress_merge_commit_sha: null, merge_lock: null, merge_lock_at: null, merge_when_pipeline_succeeds: 0 })
        .where('id', '=', mr.id)
        .execute();
      // The merge's event, which the crash kept from being recorded.
      if (mr.merge_user_id !== null) await insertEvents(app.db, [{ projectId: mr.project_id, authorId: mr.merge_user_id, action: 'merged', targetType: 'MergeRequest', targetId: mr.id }]).catch((err) => app.log.error({ err, mergeRequestId: mr.id }, 'recording the merge event failed'));
      await recordStateChange(app.db, { type: 'MergeRequest', id: mr.id }, mr.merge_user_id, 'merged').catch((err) => app.log.error({ err, mergeRequestId: mr.id }, 'recording the merge state event failed'));
      fixed += 1;
    } else {
      await app.db.updateTable('merge_requests').set({ in_progress_merge_commit_sha: null, merge_lock: null, merge_lock_at: null }).where('id', '=', mr.id).execute();
    }
  }
  return fixed;
}

/**
 * Auto-merge: called when a pipeline of `sha` turns to success. Merges every open request of the
 * project waiting for it, as the user who set auto-merge, synchronously.
 */
export async function runAutoMerges(app: AppContext, pipelineProject: ProjectInfo, sha: string): Promise<void> {
  // Requests from this project (their head may predate a push), and requests into it at this sha
  // whose pipeline ran here (from a fork).
  const id = pipelineProject.project.id;
  const waiting = await app.db
    .selectFrom('merge_requests')
    .selectAll()
    .where((eb) => eb.or([eb('source_project_id', '=', id), eb.and([eb('project_id', '=', id), eb('head_sha', '=', sha)])]))
    .where('state', '=', 'opened')
    .where('merge_when_pipeline_succeeds', '=', 1)
    .orderBy('id')
    .limit(100)
    .execute();
  // The stored head may predate a push, so every waiting request is refreshed against its branch.
  for (const row of waiting) {
    const user = row.merge_user_id !== null ? await findUserById(app.db, row.merge_user_id) : undefined;
    if (!user) continue;
    // The merge happens in the target project, under its rules.
    const info = row.project_id === id ? pipelineProject : await loadProjectById(app.db, row.project_id);
    if (!info) continue;
    // Whoever set auto-merge must still be allowed to merge when the pipeline ends.
    const access = await effectiveAccess(app.db, user, info.project, info.namespace);
    if (!canMerge(user, access, info, await protectionFor(app, info), row.target_branch)) {
      await recordMergeError(app, row.id, 'You are not allowed to merge this merge request');
      continue;
    }
    const params = JSON.parse(row.merge_params || '{}') as Record<string, unknown>;
    try {
      const mr = await refreshMergeStatus(app, row);
      if (mr.head_sha !== sha) continue; // not this sha's pipeline (or the source moved on)
      const bundle = await loadBundle(app.db, [mr], [info]);
      const pipeline = headPipelineOf(mr, bundle, sha);
      const failing = firstFailingCheck(mr, { project: info.project, pipeline, blocked: bundle.blocked.has(mr.id) });
      if (failing !== null || ciVerdict(info.project, pipeline) !== 'ok') continue;
      await performMerge(app, info, mr, user, {
        sha: typeof params.sha === 'string' ? params.sha : undefined,
        mergeCommitMessage: typeof params.merge_commit_message === 'string' ? params.merge_commit_message : undefined,
        squashCommitMessage: typeof params.squash_commit_message === 'string' ? params.squash_commit_message : undefined,
        shouldRemoveSourceBranch: typeof params.should_remove_source_branch === 'boolean' ? params.should_remove_source_branch : undefined,
      });
    } catch (err) {
      app.log.warn({ err, mr: row.id }, 'auto-merge failed');
      await recordMergeError(app, row.id, 'Auto-merge failed: the merge request could not be merged.');
    }
  }
}
