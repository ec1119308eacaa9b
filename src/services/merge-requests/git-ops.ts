// Git work for merge requests that the git layer has no single call for: preparing the stored
// mergeability snapshot, and moving the target branch only while the source branch is unchanged.
import { GitRepository, isGitError, ZERO_SHA } from '../../git/index.js';
import { runGit } from '../../git/exec.js';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import { repoPathFor } from '../projects/lookup.js';
import type { MrRow } from './rows.js';
import type { BranchRef } from '../../http/kept-response.js';

/** GitLab caps the stored diff at 1000 files and shows the count as "1000+". */
export const MAX_CHANGES_COUNT = 1000;

export function repoFor(app: AppContext, projectId: number): GitRepository {
  return new GitRepository(repoPathFor(app, projectId));
}

/** Whether a merge request comes from another project of the fork network (a fork). */
export function fromFork(mr: Pick<MrRow, 'project_id' | 'source_project_id'>): boolean {
  return mr.source_project_id !== mr.project_id;
}

/**
 * The tip of a merge request's source branch, read in its source project. From a fork, the commit
 * is then made present in the target project's repository as `refs/merge-requests/<iid>/head`
 * (GitLab's fetch_ref), so the diff, the mergeability check and the merge all run there.
 */
export async function sourceBranchSha(app: AppContext, mr: Pick<MrRow, 'project_id' | 'source_project_id' | 'source_branch' | 'iid'>): Promise<string | null> {
  if (!(await sourceInNetwork(app, mr))) return null;
  const sha = await branchSha(repoFor(app, mr.source_project_id), mr.source_branch);
  if (sha && fromFork(mr)) await fetchFromFork(app, mr, sha);
  return sha;
}

/**
 * Whether a request's source project still exists and is of its target's fork network (GitLab's
 * `source_project_missing?` is the opposite). Nothing is ever fetched from a project that left
 * the network: it may be private, or hold what its owner never meant to offer.
 */
export async function sourceInNetwork(app: AppContext, mr: Pick<MrRow, 'project_id' | 'source_project_id'>): Promise<boolean> {
  if (!fromFork(mr)) return true;
  const rows = await app.db.selectFrom('projects').select(['id', 'fork_network_root_id']).where('id', 'in', [mr.project_id, mr.source_project_id]).execute();
  const [a, b] = rows;
  return rows.length === 2 && a.fork_network_root_id !== null && a.fork_network_root_id === b.fork_network_root_id;
}

/** Copies `sha` (and what it needs) from the source project into the target's merge request ref. */
export async function fetchFromFork(app: AppContext, mr: Pick<MrRow, 'project_id' | 'source_project_id' | 'iid'>, sha: string): Promise<void> {
  const target = repoFor(app, mr.project_id);
  const ref = `refs/merge-requests/${mr.iid}/head`;
  const current = await runGit(['rev-parse', '--verify', '--quiet', ref], { gitDir: target.path, okCodes: [0, 1, 128] });
  if (current.code === 0 && current.stdout.toString('utf8').trim() === sha) return;
  await fetchCommit(app, mr.source_project_id, target, sha);
  await runGit(['update-ref', '-m', 'labwright: merge request head', ref, sha], { gitDir: target.path });
}

/** Makes commit `sha` of project `fromId` (and its history) present in `into`, unless it is already. */
export async function fetchCommit(app: AppContext, fromId: number, into: GitRepository, sha: string): Promise<void> {
  const have = await runGit(['cat-file', '-e', `${sha}^{commit}`], { gitDir: into.path, okCodes: [0, 1, 128] });
  if (have.code === 0) return;
  // Our repositories allow fetching any commit by id (uploadpack.allowAnySHA1InWant).
  await runGit(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', repoPathFor(app, fromId), sha], { gitDir: into.path });
}

export async function branchSha(repo: GitRepository, name: string): Promise<string | null> {
  try {
    return await repo.branchSha(name);
  } catch (err) {
    if (isGitError(err)) return null;
    throw err;
  }
}

async function changedFiles(repo: GitRepository, base: string, head: string): Promise<number> {
  const res = await runGit(['diff-tree', '-r', '-z', '--name-only', '--no-renames', base, head], { gitDir: repo.path });
  return res.stdout.toString('utf8').split('\0').filter(Boolean).length;
}

export interface Snapshot {
  merge_status: string;
  checked_source_sha: string | null;
  checked_target_sha: string | null;
  head_sha: string | null;
  start_sha: string | null;
  base_sha: string | null;
  commits_count: number;
  behind_count: number;
  ff_possible: number;
  source_missing: number;
  changes_count: string | null;
}

/**
 * Snapshots by `source:target` commit ids. A snapshot is a function of the two commits alone (their
 * merge base, the merge tree, the divergence and the changed files never change for the same
 * pair, in any repository), so it is computed once per pair: four git processes saved each time a
 * merge request is opened or rechecked on commits already seen.
 */
const snapshots = new Map<string, Snapshot>();

/** Computes the mergeability snapshot of source against target from the repository. */
export async function computeSnapshot(repo: GitRepository, source: string | null, target: string | null, previous: MrRow | null): Promise<Snapshot> {
  if (!source || !target) {
    return {
      merge_status: 'cannot_be_merged',
      checked_source_sha: source,
      checked_target_sha: target,
      head_sha: source ?? previous?.head_sha ?? null,
      start_sha: target ?? previous?.start_sha ?? null,
      base_sha: previous?.base_sha ?? null,
      commits_count: 0,
      behind_count: 0,
      ff_possible: 0,
      source_missing: source ? 0 : 1,
      changes_count: previous?.changes_count ?? null,
    };
  }
  const key = `${source}:${target}`;
  const known = snapshots.get(key);
  if (known) return { ...known };
  // Creations of one pair that come while it is computed share that computation: after a restart
  // every creation of the first few milliseconds ran its own four git processes (bench's mixed load).
  let computing = inFlight.get(key);
  if (!computing) {
    computing = snapshotOf(repo, source, target, key).finally(() => inFlight.delete(key));
    inFlight.set(key, computing);
  }
  return { ...(await computing) };
}

/** Snapshots being computed, by `source:target`. */
const inFlight = new Map<string, Promise<Snapshot>>();

async function snapshotOf(repo: GitRepository, source: string, target: string, key: string): Promise<Snapshot> {
  const base = await repo.mergeBase(target, source);
  const [tree, divergence, files] = await Promise.all([
    repo.mergeTree(target, source).catch((err) => {
      if (isGitError(err, 'conflict')) return { clean: false as const, conflicts: [], tree: '' };
      throw err;
    }),
    repo.countDivergence(source, target),
    changedFiles(repo, base ?? target, source),
  ]);
  const snap: Snapshot = {
    merge_status: tree.clean ? 'can_be_merged' : 'cannot_be_merged',
    checked_source_sha: source,
    checked_target_sha: target,
    head_sha: source,
    start_sha: target,
    base_sha: base,
    commits_count: divergence.ahead,
    behind_count: divergence.behind,
    ff_possible: base === target ? 1 : 0,
    source_missing: 0,
    changes_count: files > MAX_CHANGES_COUNT ? `${MAX_CHANGES_COUNT}+` : String(files),
  };
  if (snapshots.size >= 5000) snapshots.delete(snapshots.keys().next().value as string);
  snapshots.set(key, snap);
  return snap;
}

/**
 * Brings the stored snapshot of an open merge request up to date when either branch moved since
 * it was computed (lazy: lists read the stored fields; single reads and merges call this).
 */
export async function refreshMergeStatus(app: AppContext, mr: MrRow, opts: { force?: boolean } = {}): Promise<MrRow> {
  if (mr.state !== 'opened') return mr;
  const repo = repoFor(app, mr.project_id);
  const fork = fromFork(mr);
  const [source, target] = await Promise.all([
    fork ? sourceInNetwork(app, mr).then((ok) => (ok ? branchSha(repoFor(app, mr.source_project_id), mr.source_branch) : null)) : branchSha(repo, mr.source_branch),
    branchSha(repo, mr.target_branch),
  ]);
  const fresh = mr.merge_status !== 'unchecked' && mr.prepared_at !== null && source === mr.checked_source_sha && target === mr.checked_target_sha;
  if (fresh && !opts.force) return mr;
  if (source && fork) await fetchFromFork(app, mr, source);
  const snap = await computeSnapshot(repo, source, target, mr);
  const prepared = mr.prepared_at ?? nowIso();
  // Written without a transaction: concurrent refreshes compute the same values from the same refs.
  await app.db
    .updateTable('merge_requests')
    .set(Object.assign({}, snap, { prepared_at: prepared }))
    .where('id', '=', mr.id)
    .where('state', '=', 'opened')
    .execute();
  return Object.assign({}, mr, Object.assign({}, snap, { prepared_at: prepared }));
}

/** Whether each branch still points where it did (a kept response made from them is then still current). */
export async function branchesStillAt(branches: readonly BranchRef[]): Promise<boolean> {
  for (const b of branches) if ((await branchSha(new GitRepository(b.gitDir), b.branch)) !== b.sha) return false;
  return true;
}

/**
 * For a request refreshMergeStatus returned: the branches its merge status was computed for, and
 * where they pointed (a kept response of it is still what a new read would give while they do).
 */
export function mergeStatusBranches(app: AppContext, mr: MrRow): BranchRef[] | null {
  if (mr.state !== 'opened') return null;
  return [
    { gitDir: repoFor(app, mr.source_project_id).path, branch: mr.source_branch, sha: mr.checked_source_sha },
    { gitDir: repoFor(app, mr.project_id).path, branch: mr.target_branch, sha: mr.checked_target_sha },
  ];
}

/**
 * Moves the target branch from `oldTarget` to `newTarget` in one git ref transaction that also
 * verifies the source branch still points at `sourceSha` (so a push racing the merge fails it).
 * Returns false when either ref moved.
 */
export async function moveTargetVerifyingSource(
  repo: GitRepository,
  target: string,
  newTarget: string,
  oldTarget: string,
  source: string | null,
  sourceSha: string | null,
): Promise<boolean> {
  let input = 'start\n';
  if (source && sourceSha) input += `verify refs/heads/${source} ${sourceSha}\n`;
  input += `update refs/heads/${target} ${newTarget} ${oldTarget}\nprepare\ncommit\n`;
  const res = await runGit(['update-ref', '--stdin', '-m', 'labwright: merge'], { gitDir: repo.path, input, okCodes: [0, 1, 128] });
  return res.code === 0;
}

export async function deleteBranchIfAt(repo: GitRepository, name: string, sha: string): Promise<boolean> {
  try {
    await repo.updateRef(`refs/heads/${name}`, ZERO_SHA, sha);
    return true;
  } catch (err) {
    if (isGitError(err)) return false;
    throw err;
  }
}
