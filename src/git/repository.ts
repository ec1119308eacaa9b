/**
 * Public entry point of the git storage layer: bare repositories on disk,
 * driven exclusively through the real `git` binary (no work trees, no shell).
 * The heavy lifting lives in read.ts (queries), write.ts (commits from file
 * actions), merge.ts (merge/squash/rebase) and refs.ts (CAS ref updates).
 */
import { randomUUID } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rename, rm, stat, appendFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Commit, Identity } from './commits.js';
import type { Diff, DiffLimits } from './diff.js';
import { GitError } from './errors.js';
import { runGit, spawnGit } from './exec.js';
import type { ChildProcess } from 'node:child_process';
import * as merge from './merge.js';
import * as read from './read.js';
import { isValidBranchName, isValidRefName, isValidTagName } from './refname.js';
import { casUpdateRef, readRefs, ZERO_SHA } from './refs.js';
import { readBranchShaFromFiles } from './ref-files.js';
import * as write from './write.js';

export { GitError, isGitError, type GitErrorCode } from './errors.js';
export type { Commit, Identity } from './commits.js';
export type { Diff, DiffLimits } from './diff.js';
export type { FileAction, CommitFilesOptions } from './write.js';
export type { MergeTreeResult, MergeCommitOptions, SquashOptions, RebaseOptions } from './merge.js';
export type { Blob, Branch, Tag, TreeItem, CompareResult, CompareOptions, ListCommitsOptions } from './read.js';
export { isValidBranchName, isValidNewBranchName, isValidNewTagName, isValidRefName, isValidTagName } from './refname.js';
export { readRefs, diffRefs, ZERO_SHA, type RefChange } from './refs.js';

/**
 * Settings written into every new repository. Durability first (fsync of
 * objects and refs); pushes over HTTP allowed (the server authenticates);
 * force pushes allowed (branch protection is enforced by the application);
 * any reachable-or-not sha may be fetched (needed for MR refs and CI).
 */
const REPOSITORY_CONFIG = [
  '[core]',
  '\tfsync = objects,reference,derived-metadata',
  '\tfsyncMethod = fsync',
  '[http]',
  '\treceivepack = true',
  '[receive]',
  '\tdenyNonFastForwards = false',
  '[uploadpack]',
  '\tallowAnySHA1InWant = true',
  '',
].join('\n');

async function isEmptyOrMissingDir(path: string): Promise<boolean> {
  try {
    return (await readdir(path)).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

/**
 * Creates a bare repository at `path` (parents included). Built in a sibling
 * temp directory and renamed into place, so a crash never leaves a
 * half-configured repository at the final path. Throws 'exists' if `path`
 * is a non-empty directory.
 */
export async function initBareRepository(path: string, opts: { defaultBranch?: string } = {}): Promise<void> {
  const branch = opts.defaultBranch || 'main';
  if (!isValidBranchName(branch)) throw new GitError('invalid_ref', `invalid default branch: ${branch}`);
  // --template= skips the sample hooks (~20 files per repository nobody runs).
  await makeRepository(path, (temp, cwd) => runGit(['init', '--bare', '--quiet', '--template=', `--initial-branch=${branch}`, temp], { cwd }));
}

/**
 * Creates the repository of a fork: a bare copy of `source` with its branches and tags, or only
 * `branch` (no tags) when given. HEAD follows the source's (or names `branch`). Copied through
 * git's pack protocol (`--no-local`), so only what those refs reach comes along: never objects
 * the source holds unreferenced (force-pushed away, or fetched for other forks' merge requests),
 * which the fork would otherwise serve by id.
 */
export async function cloneBareRepository(source: string, path: string, opts: { branch?: string } = {}): Promise<void> {
  if (opts.branch !== undefined && !isValidBranchName(opts.branch)) throw new GitError('invalid_ref', `invalid branch: ${opts.branch}`);
  await makeRepository(path, async (temp, cwd) => {
    const only = opts.branch !== undefined ? ['--single-branch', '--no-tags', '--branch', opts.branch] : [];
    await runGit(['clone', '--bare', '--quiet', '--no-local', '--template=', ...only, '--', resolve(source), temp], { cwd });
    await runGit(['config', '--remove-section', 'remote.origin'], { gitDir: temp, okCodes: [0, 5, 128] });
  });
}

/** Builds a repository in a temporary directory beside `path`, adds our settings, then moves it in place. */
async function makeRepository(path: string, build: (temp: string, cwd: string) => Promise<unknown>): Promise<void> {
  const target = resolve(path);
  if (!(await isEmptyOrMissingDir(target))) throw new GitError('exists', `repository already exists: ${path}`);
  await mkdir(dirname(target), { recursive: true });
  const temp = `${target}.init-${randomUUID()}`;
  try {
    await build(temp, dirname(target));
    await appendFile(join(temp, 'config'), REPOSITORY_CONFIG);
    try {
      await rename(temp, target);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') throw new GitError('exists', `repository already exists: ${path}`);
      throw err;
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/**
 * Deletes a repository directory. Refuses anything that is not an absolute
 * path to a directory looking like a bare repository (or an empty / missing
 * one), so a bad argument can never wipe an unrelated tree.
 */
export async function removeRepository(path: string): Promise<void> {
  if (!isAbsolute(path)) throw new GitError('invalid_path', 'repository path must be absolute');
  const target = resolve(path);
  if (target === dirname(target)) throw new GitError('invalid_path', 'refusing to remove the filesystem root');
  if (await isEmptyOrMissingDir(target)) {
    await rm(target, { recursive: true, force: true });
    return;
  }
  const head = await stat(join(target, 'HEAD')).catch(() => null);
  const objects = await stat(join(target, 'objects')).catch(() => null);
  if (!head?.isFile() || !objects?.isDirectory()) throw new GitError('invalid_path', `not a bare repository: ${path}`);
  await rm(target, { recursive: true, force: true });
}

/** Sum of the sizes of all files under `dir` (symlinks are not followed). */
async function directorySize(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  const sizes = await Promise.all(entries.map(async (entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return directorySize(full);
    // Files can vanish under us (gc, lock files): they simply do not count.
    const info = await lstat(full).catch(() => null);
    return info ? info.size : 0;
  }));
  return sizes.reduce((a, b) => a + b, 0);
}

export class GitRepository {
  readonly path: string;

  constructor(path: string) {
    this.path = resolve(path);
  }

  // ---- repository -------------------------------------------------------

  async exists(): Promise<boolean> {
    const [head, objects] = await Promise.all([
      stat(join(this.path, 'HEAD')).catch(() => null),
      stat(join(this.path, 'objects')).catch(() => null),
    ]);
    return Boolean(head?.isFile() && objects?.isDirectory());
  }

  /** True when there is no branch at all (a freshly created project). */
  async isEmpty(): Promise<boolean> {
    const res = await runGit(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/'], { gitDir: this.path });
    return res.stdout.length === 0;
  }

  async repositorySize(): Promise<number> {
    return directorySize(this.path);
  }

  // ---- HEAD and refs ----------------------------------------------------

  async setHead(branch: string): Promise<void> {
    if (!isValidBranchName(branch)) throw new GitError('invalid_ref', `invalid branch name: ${branch}`);
    await runGit(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { gitDir: this.path });
  }

  /** The branch HEAD points to (even if it has no commit yet), or null when detached. */
  async headBranch(): Promise<string | null> {
    // Reading the file saves a spawn on a hot path; fall back to git for anything unusual.
    const content = await readFile(join(this.path, 'HEAD'), 'utf8').catch(() => null);
    if (content === null) throw new GitError('not_found', `repository not found: ${this.path}`);
    const m = /^ref: refs\/heads\/(.+)\n?$/.exec(content);
    if (m) return m[1]!;
    if (/^[0-9a-f]{40,64}\n?$/.test(content)) return null;
    const res = await runGit(['symbolic-ref', '-q', 'HEAD'], { gitDir: this.path, okCodes: [0, 1] });
    const ref = res.stdout.toString('utf8').trim();
    return ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
  }

  listBranches(opts: { withCommit?: boolean } = {}): Promise<read.Branch[]> {
    return read.listBranches(this.path, opts);
  }

  async branchSha(name: string): Promise<string | null> {
    if (!isValidBranchName(name)) return null;
    const fromFiles = await readBranchShaFromFiles(this.path, name);
    if (fromFiles !== undefined) return fromFiles;
    const res = await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${name}`], { gitDir: this.path, okCodes: [0, 1, 128] });
    return res.code === 0 ? res.stdout.toString('utf8').trim() : null;
  }

  /** Branch name, tag, full ref, (abbreviated) sha or any revision → commit sha. */
  resolveRef(ref: string): Promise<string | null> {
    return read.resolveRef(this.path, ref);
  }

  /** Branches and tags whose history contains commit `sha` (names without refs/heads/ or refs/tags/). */
  async refsContaining(sha: string, kind: 'branch' | 'tag'): Promise<string[]> {
    const prefix = kind === 'branch' ? 'refs/heads/' : 'refs/tags/';
    const res = await runGit(['for-each-ref', `--contains=${sha}`, '--format=%(refname)', prefix], { gitDir: this.path });
    return res.stdout.toString('utf8').split('\n').filter((l) => l.startsWith(prefix)).map((l) => l.slice(prefix.length));
  }

  /** A blob by its object id (full or abbreviated), or null when there is no such blob. */
  async blobById(id: string): Promise<{ sha: string; size: number; data: Buffer } | null> {
    const full = await this.blobId(id);
    if (!full) return null;
    const data = (await runGit(['cat-file', 'blob', full], { gitDir: this.path })).stdout;
    return { sha: full, size: data.length, data };
  }

  /** The full id of a blob named by (abbreviated) id, or null when there is no such blob. */
  async blobId(id: string): Promise<string | null> {
    if (!/^[0-9a-f]{4,64}$/i.test(id)) return null;
    const type = await runGit(['cat-file', '-t', id], { gitDir: this.path, okCodes: [0, 1, 128] });
    if (type.code !== 0 || type.stdout.toString('utf8').trim() !== 'blob') return null;
    return (await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', id], { gitDir: this.path })).stdout.toString('utf8').trim();
  }

  /** `git cat-file blob` of a full blob id as a running process (its stdout is the blob). */
  blobStream(sha: string): ChildProcess {
    return spawnGit(['cat-file', 'blob', sha], { gitDir: this.path });
  }

  /** The best common ancestor of two or more commits (`--octopus` for more than two), or null. */
  async mergeBaseOf(shas: string[]): Promise<string | null> {
    const args = ['merge-base', ...(shas.length > 2 ? ['--octopus'] : []), '--end-of-options', ...shas];
    const res = await runGit(args, { gitDir: this.path, okCodes: [0, 1, 128] });
    return res.code === 0 ? res.stdout.toString('utf8').trim().split('\n')[0] || null : null;
  }

  /** Authors of the history of `sha` by email: the name of their newest commit, and how many commits. */
  async contributors(sha: string): Promise<Array<{ name: string; email: string; commits: number }>> {
    // GitLab's Repository#contributors: the newest 2,000 commits without merges, raw names and
    // emails (no .mailmap), grouped by email, the first name that is not blank.
    const res = await runGit(['log', '--no-merges', '-n', '2000', '--format=%an%x00%ae', '--end-of-options', sha, '--'], { gitDir: this.path });
    const out = new Map<string, { name: string; email: string; commits: number }>();
    for (const line of res.stdout.toString('utf8').split('\n')) {
      if (!line) continue;
      const [name = '', email = ''] = line.split('\0');
      const known = out.get(email);
      if (known) {
        known.commits++;
        if (!known.name.trim() && name.trim()) known.name = name;
      } else out.set(email, { name, email, commits: 1 });
    }
    return [...out.values()];
  }

  /** Whether `path` exists in the tree of commit `sha`. */
  async pathExists(sha: string, path: string): Promise<boolean> {
    const res = await runGit(['cat-file', '-e', '--end-of-options', `${sha}:${path}`], { gitDir: this.path, okCodes: [0, 1, 128] });
    return res.code === 0;
  }

  /**
   * `git archive` of a commit as a running process (its stdout is the archive), in one of the
   * formats GitLab serves; `path` narrows it to a folder. tar.gz is git's own gzip; tar.bz2 goes
   * through bzip2.
   */
  archive(sha: string, format: 'tar' | 'tar.gz' | 'tar.bz2' | 'zip', prefix: string, path?: string, exclude: string[] = []): ChildProcess {
    const config = format === 'tar.bz2' ? ['-c', 'tar.tar.bz2.command=bzip2 -c'] : [];
    const args = [...config, 'archive', `--format=${format}`, `--prefix=${prefix}/`, sha];
    // Literal pathspecs: `app/[slug]` is a folder, not a pattern.
    if (path || exclude.length) args.push('--', path ? `:(literal)${path}` : '.', ...exclude.map((p) => `:(exclude,literal)${p}`));
    return spawnGit(args, { gitDir: this.path });
  }

  listTags(): Promise<read.Tag[]> {
    return read.listTags(this.path);
  }

  /** One tag by name (one for-each-ref of that ref alone), or null. */
  async findTag(name: string): Promise<read.Tag | null> {
    if (!name || !isValidRefName(`refs/tags/${name}`)) return null;
    return (await read.listTags(this.path, name))[0] ?? null;
  }

  /** Tag names in git's version order, ascending. */
  tagNamesByVersion(): Promise<string[]> {
    return read.tagNamesByVersion(this.path);
  }

  /**
   * Creates tag `name` at commit `target`: annotated (a tag object by `tagger`) when a message is
   * given, else lightweight. Throws 'exists' if the tag is already there, 'invalid_ref' for a bad name.
   */
  async createTag(name: string, target: string, opts: { message?: string; tagger: { name: string; email: string; date: Date } }): Promise<string> {
    const ref = `refs/tags/${name}`;
    if (!isValidTagName(name)) throw new GitError('invalid_ref', `invalid tag name: ${name}`);
    let sha = target;
    if (opts.message !== undefined) {
      const t = opts.tagger;
      const seconds = Math.floor(t.date.getTime() / 1000);
      const body = opts.message.endsWith('\n') ? opts.message : `${opts.message}\n`;
      const input = `object ${target}\ntype commit\ntag ${name}\ntagger ${t.name} <${t.email}> ${seconds} +0000\n\n${body}`;
      const res = await runGit(['mktag'], { gitDir: this.path, input });
      sha = res.stdout.toString('utf8').trim();
    }
    try {
      await casUpdateRef(this.path, ref, sha, null, 'labwright: create tag');
    } catch (err) {
      if (err instanceof GitError && err.code === 'cas_failed') throw new GitError('exists', `tag already exists: ${name}`);
      throw err;
    }
    return sha;
  }

  /** Deletes tag `name` if it still points at `expectedSha` (else 'cas_failed'). */
  async deleteTag(name: string, expectedSha: string): Promise<void> {
    const ref = `refs/tags/${name}`;
    if (!isValidRefName(ref)) throw new GitError('invalid_ref', `invalid tag name: ${name}`);
    await casUpdateRef(this.path, ref, ZERO_SHA, expectedSha, 'labwright: delete tag');
  }

  /** All refs → sha, e.g. to diff before/after a push. */
  readRefs(prefixes: string[] = []): Promise<Map<string, string>> {
    return readRefs(this.path, prefixes);
  }

  /** Creates a branch at `start` (any revision). Throws 'exists' if the branch is already there. */
  async createBranch(name: string, start: string): Promise<string> {
    if (!isValidBranchName(name)) throw new GitError('invalid_ref', `invalid branch name: ${name}`);
    const sha = await this.resolveRef(start);
    if (!sha) throw new GitError('not_found', `revision not found: ${start}`);
    try {
      await casUpdateRef(this.path, `refs/heads/${name}`, sha, null, 'labwright: create branch');
    } catch (err) {
      if (err instanceof GitError && err.code === 'cas_failed') throw new GitError('exists', `branch already exists: ${name}`);
      throw err;
    }
    return sha;
  }

  /** Deletes a branch; with `expectedSha`, only if it still points there (else 'cas_failed'). */
  async deleteBranch(name: string, expectedSha?: string): Promise<void> {
    if (!isValidBranchName(name)) throw new GitError('invalid_ref', `invalid branch name: ${name}`);
    const current = await this.branchSha(name);
    if (!current) throw new GitError('not_found', `branch not found: ${name}`);
    if (expectedSha !== undefined && expectedSha !== current) throw new GitError('cas_failed', `branch ${name} has moved`);
    await casUpdateRef(this.path, `refs/heads/${name}`, ZERO_SHA, current, 'labwright: delete branch');
  }

  /**
   * Compare-and-swap of a full ref: `oldSha` null requires the ref to be
   * absent; `newSha` ZERO_SHA deletes it. Throws 'cas_failed' on mismatch.
   */
  async updateRef(ref: string, newSha: string, oldSha: string | null): Promise<void> {
    if (!isValidRefName(ref)) throw new GitError('invalid_ref', `invalid ref: ${ref}`);
    return casUpdateRef(this.path, ref, newSha, oldSha);
  }

  static isValidBranchName(name: string): boolean {
    return isValidBranchName(name);
  }

  // ---- commits and trees -----------------------------------------------

  getCommit(sha: string): Promise<Commit | null> {
    return read.getCommit(this.path, sha);
  }

  /** Several commits with one spawn, in the order given. */
  getCommits(shas: string[]): Promise<Commit[]> {
    return read.getCommits(this.path, shas);
  }

  /** Paths each commit adds, modifies and removes (push event payloads), one spawn. */
  changedFiles(shas: string[]): Promise<Map<string, read.CommitFileChanges>> {
    return read.changedFilesOf(this.path, shas);
  }

  listCommits(opts: read.ListCommitsOptions): Promise<Commit[]> {
    return read.listCommits(this.path, opts);
  }

  /** Content search of `ref` (the search API's blobs scope). */
  grepFiles(ref: string, query: string, limit: number): Promise<read.FoundBlob[]> {
    return read.grepFiles(this.path, ref, query, limit);
  }

  countCommits(ref: string, opts: { path?: string; firstParent?: boolean; exclude?: string } = {}): Promise<number> {
    return read.countCommits(this.path, ref, opts);
  }

  /** Shas of commits in head not in base, oldest first (input for rebaseOnto). */
  async commitsBetween(base: string, head: string, opts: { noMerges?: boolean } = {}): Promise<string[]> {
    const commits = await read.listCommits(this.path, { ref: head, exclude: base, reverse: true, noMerges: opts.noMerges ?? true });
    return commits.map((c) => c.id);
  }

  blame(sha: string, filePath: string, start: number, end: number): Promise<read.BlameLine[]> {
    return read.blame(this.path, sha, filePath, start, end);
  }

  readBlob(ref: string, filePath: string): Promise<read.Blob | null> {
    return read.readBlob(this.path, ref, filePath);
  }

  listTree(opts: { ref: string; path?: string; recursive?: boolean }): Promise<read.TreeItem[]> {
    return read.listTree(this.path, opts);
  }

  lastCommitForPath(ref: string, path: string): Promise<Commit | null> {
    return read.lastCommitForPath(this.path, ref, path);
  }

  commitFiles(opts: write.CommitFilesOptions): Promise<string> {
    return write.commitFiles(this.path, opts);
  }

  /** A commit from an existing tree (no ref is moved). */
  createCommit(opts: { tree: string; parents: string[]; message: string; author: Identity; committer?: Identity }): Promise<string> {
    return write.createCommit(this.path, opts);
  }

  // ---- comparing ---------------------------------------------------------

  compare(from: string, to: string, opts: read.CompareOptions = {}): Promise<read.CompareResult> {
    return read.compare(this.path, from, to, opts);
  }

  /** Diff entries between two revisions without merge base. */
  diff(base: string, head: string, limits: DiffLimits = {}): Promise<{ diffs: Diff[]; overflow: boolean }> {
    return read.diffBetween(this.path, base, head, limits);
  }

  rawDiff(base: string, head: string): Promise<string> {
    return read.rawDiff(this.path, base, head);
  }

  mergeBase(a: string, b: string): Promise<string | null> {
    return read.mergeBase(this.path, a, b);
  }

  isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return read.isAncestor(this.path, ancestor, descendant);
  }

  /** ahead = commits in `a` not in `b`; behind = commits in `b` not in `a`. */
  countDivergence(a: string, b: string): Promise<{ ahead: number; behind: number }> {
    return read.countDivergence(this.path, a, b);
  }

  // ---- merging -------------------------------------------------------------

  mergeTree(ours: string, theirs: string): Promise<merge.MergeTreeResult> {
    return merge.mergeTree(this.path, ours, theirs);
  }

  createMergeCommit(opts: merge.MergeCommitOptions): Promise<string> {
    return merge.createMergeCommit(this.path, opts);
  }

  squashCommit(opts: merge.SquashOptions): Promise<string> {
    return merge.squashCommit(this.path, opts);
  }

  rebaseOnto(opts: merge.RebaseOptions): Promise<string> {
    return merge.rebaseOnto(this.path, opts);
  }

  /** A cherry-pick or revert of one commit onto `onto`, as a new commit (no ref is moved). */
  applyChange(opts: merge.ChangeOptions, revert: boolean): Promise<merge.ChangeOutcome> {
    return merge.applyChange(this.path, opts, revert);
  }

  /** Whether `target` can be fast-forwarded to `source` (target is an ancestor of source). */
  fastForwardPossible(target: string, source: string): Promise<boolean> {
    return read.isAncestor(this.path, target, source);
  }
}
