/**
 * Merges, squashes and rebases without a work tree, all built on
 * `git merge-tree --write-tree` (git >= 2.38).
 *
 * Replaying a commit needs a merge with an explicit base (the commit's
 * parent). `merge-tree --merge-base` only exists from git 2.40; on older
 * git we get the same result by merging two throw-away commits that both
 * have the wanted base as their only parent, so that it is their merge base.
 */
import { SYNTHETIC_IDENTITY_ENV, type Identity } from './commits.js';
import { GitError } from './errors.js';
import { gitAtLeast, runGit } from './exec.js';
import { catFileBatch } from './objects.js';
import { isSafeRevision } from './refname.js';
import { createCommit, type CommitTreeOptions } from './write.js';

export type MergeTreeResult =
  | { clean: true; tree: string }
  /** `tree` holds the conflicted merge with conflict markers (useful to show conflicts). */
  | { clean: false; conflicts: string[]; tree: string };

function assertRevs(...revs: string[]): void {
  for (const rev of revs) if (!isSafeRevision(rev)) throw new GitError('invalid_ref', `invalid revision: ${rev}`);
}

/** Resolves revisions to commit ids with one spawn; throws not_found for the first missing one. */
export async function resolveCommits(gitDir: string, revs: string[]): Promise<string[]> {
  assertRevs(...revs);
  const objects = await catFileBatch(gitDir, revs.map((r) => `${r}^{commit}`));
  return objects.map((obj, i) => {
    if (!obj || obj.type !== 'commit') throw new GitError('not_found', `commit not found: ${revs[i]}`);
    return obj.oid;
  });
}

async function runMergeTree(gitDir: string, extra: string[], ours: string, theirs: string): Promise<MergeTreeResult> {
  const args = ['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', ...extra, ours, theirs];
  const res = await runGit(args, { gitDir, okCodes: [0, 1, 128] });
  if (res.code === 128) {
    if (/unrelated histories/.test(res.stderr)) throw new GitError('conflict', 'refusing to merge unrelated histories', res.stderr);
    if (/not something we can merge|unknown revision|bad revision|Not a valid/i.test(res.stderr)) {
      throw new GitError('not_found', 'merge input not found', res.stderr);
    }
    throw new GitError('failed', 'merge-tree failed', res.stderr);
  }
  const fields = res.stdout.toString('utf8').split('\0').filter((f) => f.length > 0);
  const tree = fields[0];
  if (!tree) throw new GitError('failed', 'merge-tree printed no tree');
  if (res.code === 0) return { clean: true, tree };
  return { clean: false, conflicts: [...new Set(fields.slice(1))], tree };
}

/** Three-way merge of two commits using their natural merge base. */
export function mergeTree(gitDir: string, ours: string, theirs: string): Promise<MergeTreeResult> {
  assertRevs(ours, theirs);
  return runMergeTree(gitDir, [], ours, theirs);
}

/**
 * Three-way merge with an explicit base commit (null = empty tree, for
 * replaying a root commit). `ours`/`theirs` must be commit ids.
 */
export async function mergeTreeWithBase(gitDir: string, base: string | null, ours: string, theirs: string): Promise<MergeTreeResult> {
  if (base !== null && (await gitAtLeast(2, 40))) return runMergeTree(gitDir, [`--merge-base=${base}`], ours, theirs);
  const parents = base === null ? [] : ['-p', base];
  const synthetic = (rev: string): Promise<string> =>
    runGit(['commit-tree', '--no-gpg-sign', ...parents, '-m', 'labwright merge input', `${rev}^{tree}`], {
      gitDir,
      env: SYNTHETIC_IDENTITY_ENV,
    }).then((r) => r.stdout.toString('utf8').trim());
  const [a, b] = await Promise.all([synthetic(ours), synthetic(theirs)]);
  return runMergeTree(gitDir, base === null ? ['--allow-unrelated-histories'] : [], a, b);
}

export interface MergeCommitOptions {
  ours: string;
  theirs: string;
  message: string;
  author: Identity;
  committer?: Identity;
}

function commitOptions(tree: string, parents: string[], message: string, author: Identity, committer?: Identity): CommitTreeOptions {
  const opts: CommitTreeOptions = { tree, parents, message, author };
  if (committer) opts.committer = committer;
  return opts;
}

/** A merge commit (parents: ours, theirs). Does not move any ref. Throws GitError('conflict'). */
export async function createMergeCommit(gitDir: string, opts: MergeCommitOptions): Promise<string> {
  const [ours, theirs] = await resolveCommits(gitDir, [opts.ours, opts.theirs]);
  const merged = await mergeTree(gitDir, ours!, theirs!);
  if (!merged.clean) throw new GitError('conflict', `merge conflict in ${merged.conflicts.join(', ')}`);
  return createCommit(gitDir, commitOptions(merged.tree, [ours!, theirs!], opts.message, opts.author, opts.committer));
}

export interface SquashOptions {
  /** The commit the squashed changes start from (usually the merge base of source and target). */
  base: string;
  head: string;
  /** The new commit's parent. */
  onto: string;
  message: string;
  author: Identity;
  committer?: Identity;
}

/** One commit with the changes base..head applied on `onto` (parent = onto). Throws GitError('conflict'). */
export async function squashCommit(gitDir: string, opts: SquashOptions): Promise<string> {
  const [base, head, onto] = await resolveCommits(gitDir, [opts.base, opts.head, opts.onto]);
  let tree: string;
  if (base === onto) {
    // Nothing happened on the target since base: the result is exactly head's tree.
    tree = (await runGit(['rev-parse', `${head}^{tree}`], { gitDir })).stdout.toString('utf8').trim();
  } else {
    const merged = await mergeTreeWithBase(gitDir, base!, onto!, head!);
    if (!merged.clean) throw new GitError('conflict', `squash conflict in ${merged.conflicts.join(', ')}`);
    tree = merged.tree;
  }
  return createCommit(gitDir, commitOptions(tree, [onto!], opts.message, opts.author, opts.committer));
}

interface RawCommit {
  id: string;
  tree: string;
  parents: string[];
  author: Identity;
  message: string;
}

/** "Name <email> 1700000000 +0100" → identity with the raw date git understands verbatim. */
function parseIdent(value: string): Identity {
  const m = /^(.*?) ?<([^>]*)> (\d+ [+-]\d{4})$/.exec(value);
  if (!m) throw new GitError('failed', `unparseable identity: ${value}`);
  return { name: m[1]!, email: m[2]!, date: m[3]! };
}

function parseRawCommit(id: string, content: Buffer): RawCommit {
  const text = content.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = (split === -1 ? text : text.slice(0, split)).split('\n');
  const commit: RawCommit = { id, tree: '', parents: [], author: { name: '', email: '' }, message: split === -1 ? '' : text.slice(split + 2) };
  for (const line of headers) {
    if (line.startsWith('tree ')) commit.tree = line.slice(5);
    else if (line.startsWith('parent ')) commit.parents.push(line.slice(7));
    else if (line.startsWith('author ')) commit.author = parseIdent(line.slice(7));
  }
  return commit;
}

export interface RebaseOptions {
  /** Commits to replay, oldest first (e.g. `git rev-list --reverse onto..head`). */
  commits: string[];
  onto: string;
  committer: Identity;
}

/**
 * Replays `commits` on top of `onto` and returns the new tip (the caller
 * moves the branch with a CAS update). Authors, author dates and messages
 * are kept; the committer is replaced. Like `git rebase`, commits whose
 * parent is already the current base are kept as they are, and commits whose
 * changes are already upstream (they become empty) are dropped.
 * Throws GitError('conflict') naming the commit that does not apply.
 */
export async function rebaseOnto(gitDir: string, opts: RebaseOptions): Promise<string> {
  assertRevs(opts.onto, ...opts.commits);
  // One spawn for every commit, its first parent (for the emptiness check) and onto.
  const queries = [`${opts.onto}^{commit}`, ...opts.commits.flatMap((c) => [`${c}^{commit}`, `${c}~1`])];
  const objects = await catFileBatch(gitDir, queries);
  const ontoObj = objects[0];
  if (!ontoObj || ontoObj.type !== 'commit') throw new GitError('not_found', `commit not found: ${opts.onto}`);
  let tip = ontoObj.oid;
  let tipTree = parseRawCommit(tip, ontoObj.content).tree;
  let rewritten = false;

  for (let i = 0; i < opts.commits.length; i += 1) {
    const obj = objects[1 + i * 2];
    if (!obj || obj.type !== 'commit') throw new GitError('not_found', `commit not found: ${opts.commits[i]}`);
    const commit = parseRawCommit(obj.oid, obj.content);
    const parentObj = objects[2 + i * 2];
    const base = commit.parents[0] ?? null;
    if (!rewritten && base === tip) {
      // Already on top of the current base: keep the commit (git's fast-forward behaviour).
      tip = commit.id;
      tipTree = commit.tree;
      continue;
    }
    const merged = await mergeTreeWithBase(gitDir, base, tip, commit.id);
    if (!merged.clean) {
      throw new GitError('conflict', `commit ${commit.id.slice(0, 8)} does not apply: conflict in ${merged.conflicts.join(', ')}`);
    }
    const parentTree = parentObj ? parseRawCommit(parentObj.oid, parentObj.content).tree : null;
    if (merged.tree === tipTree && commit.tree !== parentTree) continue; // changes already upstream
    tip = await createCommit(gitDir, commitOptions(merged.tree, [tip], commit.message, commit.author, opts.committer));
    tipTree = merged.tree;
    rewritten = true;
  }
  return tip;
}

export interface ChangeOptions {
  /** The commit to pick or revert (a merge commit is taken against its first parent). */
  commit: string;
  /** The tip the change is applied on. */
  onto: string;
  /** The new commit's message, from the original's. */
  message: (original: { id: string; message: string; title: string }) => string;
  /** Author of the new commit; null keeps the picked commit's author (cherry-pick). */
  author: Identity | null;
  committer: Identity;
}

export type ChangeOutcome = { ok: true; sha: string } | { ok: false; reason: 'conflict' | 'empty' };

/**
 * Cherry-picks (`revert: false`) or reverts one commit onto `onto` without a work tree, as
 * Gitaly's UserCherryPick/UserRevert: a three-way merge with the commit's parent as base (for a
 * revert the roles swap). A conflict, or a change that leaves the tree as it was, is reported,
 * not committed. No ref is moved.
 */
export async function applyChange(gitDir: string, opts: ChangeOptions, revert: boolean): Promise<ChangeOutcome> {
  assertRevs(opts.commit, opts.onto);
  const objects = await catFileBatch(gitDir, [`${opts.commit}^{commit}`, `${opts.onto}^{commit}`]);
  const [commitObj, ontoObj] = objects;
  if (!commitObj || commitObj.type !== 'commit') throw new GitError('not_found', `commit not found: ${opts.commit}`);
  if (!ontoObj || ontoObj.type !== 'commit') throw new GitError('not_found', `commit not found: ${opts.onto}`);
  const commit = parseRawCommit(commitObj.oid, commitObj.content);
  const onto = parseRawCommit(ontoObj.oid, ontoObj.content);
  const parent = commit.parents[0] ?? null;
  // Reverting a root commit would need an empty tree as the other side: refused as a conflict.
  if (revert && parent === null) return { ok: false, reason: 'conflict' };
  const merged = revert ? await mergeTreeWithBase(gitDir, commit.id, onto.id, parent!) : await mergeTreeWithBase(gitDir, parent, onto.id, commit.id);
  if (!merged.clean) return { ok: false, reason: 'conflict' };
  if (merged.tree === onto.tree) return { ok: false, reason: 'empty' };
  const title = commit.message.split('\n', 1)[0] ?? '';
  const message = opts.message({ id: commit.id, message: commit.message, title });
  const sha = await createCommit(gitDir, commitOptions(merged.tree, [onto.id], message, opts.author ?? commit.author, opts.committer));
  return { ok: true, sha };
}
