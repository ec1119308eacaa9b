// Commits made through the API (files and commits endpoints): GitLab's branch rules, the
// last_commit_id checks, and the compare-and-swap move of the branch, so two writers racing on one
// branch give one commit and one clear 400, never a lost update.
import type { AppContext } from '../../context.js';
import { apiError, paramError } from '../../http/errors.js';
import { isGitError, isValidBranchName, isValidNewBranchName, type FileAction, type GitRepository } from '../../git/index.js';
import { adoptDefaultBranch } from './default-branch.js';
import { notifyRefChanges } from './ref-hooks.js';
import type { CommitPeople } from './identity.js';

export interface ActionInput extends FileAction {
  /** The last commit the client saw for this file; the commit is refused if the file changed since. */
  last_commit_id?: string;
}

export interface CommitRequest {
  branch: string;
  startBranch?: string;
  startSha?: string;
  message: string;
  actions: ActionInput[];
  people: CommitPeople;
  /** The acting user, for ref change listeners. */
  actorId: number | null;
  /** Wording of the stale last_commit_id error (the files and commits APIs word it differently). */
  staleMessage: (path: string) => string;
}

export interface CommitOutcome {
  sha: string;
  /** True when the commit created the branch. */
  createdBranch: boolean;
}

const bad = (message: string) => apiError(400, message);

/** GitLab's wording when the branch moved between our read and our ref update. */
export function branchMovedMessage(branch: string): string {
  return `Could not update branch ${branch}. Please refresh and try again.`;
}

/** Where the new commit starts: the branch itself, another branch, a sha, or nothing (empty repository). */
async function resolveStart(repo: GitRepository, req: CommitRequest, current: string | null): Promise<string | null> {
  if (req.startSha !== undefined) {
    if (current !== null) throw bad(`A branch called "${req.branch}" already exists. Switch to that branch in order to make changes`);
    const sha = /^[0-9a-f]{7,64}$/i.test(req.startSha) ? await repo.resolveRef(req.startSha) : null;
    if (!sha) throw bad(`Cannot find start_sha "${req.startSha}"`);
    return sha;
  }
  const startBranch = req.startBranch ?? req.branch;
  if (startBranch !== req.branch) {
    if (current !== null) throw bad(`A branch called "${req.branch}" already exists. Switch to that branch in order to make changes`);
    const sha = await repo.branchSha(startBranch);
    if (sha) return sha;
    if (await repo.isEmpty()) return null;
    throw bad('You can only create or edit files when you are on a branch');
  }
  if (current !== null) return current;
  if (await repo.isEmpty()) return null;
  throw bad('You can only create or edit files when you are on a branch');
}

/** Refuses the commit when a file the client edited changed after the commit it names. */
async function checkLastCommitIds(repo: GitRepository, start: string | null, req: CommitRequest): Promise<void> {
  for (const a of req.actions) {
    if (!a.last_commit_id || start === null) continue;
    const path = a.action === 'move' && a.previous_path ? a.previous_path : a.file_path;
    const last = await repo.lastCommitForPath(start, path);
    if (last && last.id !== a.last_commit_id && !last.id.startsWith(a.last_commit_id.toLowerCase())) {
      throw bad(req.staleMessage(path));
    }
  }
}

function translateGitError(err: unknown, branch: string): never {
  if (isGitError(err, 'cas_failed')) throw bad(branchMovedMessage(branch));
  if (isGitError(err, 'exists')) throw bad('A file with this name already exists');
  if (isGitError(err, 'not_found')) throw bad("A file with this name doesn't exist");
  if (isGitError(err, 'invalid_path')) throw paramError('file_path should be a valid file path');
  if (isGitError(err, 'invalid_ref')) throw bad('Branch name is invalid');
  throw err;
}

/**
 * Applies the actions on top of the start commit and moves `branch` from the value read at the
 * start (compare-and-swap). No database transaction is held while git runs; the only database
 * write (the default branch of an empty project) happens after the ref moved.
 */
export async function commitActions(app: AppContext, projectId: number, repo: GitRepository, req: CommitRequest): Promise<CommitOutcome> {
  if (!isValidBranchName(req.branch)) throw bad('Branch name is invalid');
  // A branch this commit would create must also be a name GitLab accepts for new branches.
  if (!isValidNewBranchName(req.branch) && (await repo.branchSha(req.branch)) === null) throw bad('Branch name is invalid');
  // git cannot store a NUL in a commit message.
  if (req.message.includes('\0')) throw paramError('commit_message is invalid');
  if (req.startBranch !== undefined && !isValidBranchName(req.startBranch)) throw bad('Invalid reference name: ' + req.startBranch);
  const current = await repo.branchSha(req.branch);
  const start = await resolveStart(repo, req, current);
  await checkLastCommitIds(repo, start, req);
  let sha: string;
  try {
    sha = await repo.commitFiles({
      branch: req.branch,
      startSha: start,
      message: req.message,
      author: req.people.author,
      committer: req.people.committer,
      actions: req.actions.map(({ last_commit_id: _ignored, ...a }) => a),
      expectedOldSha: current,
    });
  } catch (err) {
    translateGitError(err, req.branch);
  }
  const createdBranch = current === null;
  if (createdBranch) await adoptDefaultBranch(app, projectId, repo, [req.branch]);
  await notifyRefChanges(app, projectId, [{ ref: `refs/heads/${req.branch}`, before: current, after: sha }], req.actorId);
  return { sha, createdBranch };
}
