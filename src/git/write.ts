/**
 * Creating commits without a work tree: blobs via `hash-object -w`, the new
 * tree via a throw-away index (GIT_INDEX_FILE + read-tree + update-index +
 * write-tree), the commit via `commit-tree`, and the branch move via a
 * compare-and-swap `update-ref`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityEnv, type Identity } from './commits.js';
import { GitError } from './errors.js';
import { runGit } from './exec.js';
import { catFileBatch, parseTree, type TreeEntry } from './objects.js';
import { ancestorDirs, assertRepoPath, baseName, parentDir } from './paths.js';
import { isValidBranchName, isSafeRevision } from './refname.js';
import { casUpdateRef, isSha, ZERO_SHA } from './refs.js';

export interface FileAction {
  action: 'create' | 'update' | 'delete' | 'move' | 'chmod';
  file_path: string;
  previous_path?: string;
  content?: Buffer | string;
  execute_filemode?: boolean;
}

export interface CommitFilesOptions {
  branch: string;
  /** Parent commit (sha or revision), or null for an orphan first commit. */
  startSha: string | null;
  message: string;
  author: Identity;
  committer?: Identity;
  actions: FileAction[];
  /** CAS value for refs/heads/<branch>; null = the branch must not exist yet. */
  expectedOldSha: string | null;
}

export interface CommitTreeOptions {
  tree: string;
  parents: string[];
  message: string;
  author: Identity;
  committer?: Identity;
}

/** `git commit-tree`: message on stdin so any text survives, signing disabled whatever the config says. */
export async function createCommit(gitDir: string, opts: CommitTreeOptions): Promise<string> {
  const args = ['commit-tree', '--no-gpg-sign'];
  for (const parent of opts.parents) args.push('-p', parent);
  args.push('-F', '-', opts.tree);
  const { stdout } = await runGit(args, { gitDir, input: opts.message, env: identityEnv(opts.author, opts.committer) });
  return stdout.toString('utf8').trim();
}

/** Above this many blobs, one `--stdin-paths` spawn over temp files beats one spawn per blob. */
const PARALLEL_HASH_LIMIT = 4;
/** Temp files written at once. */
const WRITE_BATCH = 32;

/** Writes blobs to the object database; returns their ids in order. */
export async function hashBlobs(gitDir: string, contents: Buffer[]): Promise<string[]> {
  if (contents.length <= PARALLEL_HASH_LIMIT) {
    return Promise.all(contents.map(async (content) => {
      const { stdout } = await runGit(['hash-object', '-w', '--stdin'], { gitDir, input: content });
      return stdout.toString('utf8').trim();
    }));
  }
  const dir = await mkdtemp(join(tmpdir(), 'labwright-blobs-'));
  try {
    const files = contents.map((_, i) => join(dir, String(i)));
    // A few files at a time: thousands at once run out of file descriptors (EMFILE) for every request.
    for (let i = 0; i < contents.length; i += WRITE_BATCH) {
      await Promise.all(contents.slice(i, i + WRITE_BATCH).map((content, j) => writeFile(files[i + j]!, content)));
    }
    // --no-filters: the temp file names must not select attributes or eol conversion.
    const { stdout } = await runGit(['hash-object', '-w', '--no-filters', '--stdin-paths'], { gitDir, input: files.join('\n') + '\n' });
    const ids = stdout.toString('utf8').trim().split('\n');
    if (ids.length !== contents.length) throw new GitError('failed', 'hash-object returned an unexpected number of ids');
    return ids;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface Entry {
  mode: string;
  oid: string;
}

/**
 * The start tree as far as the actions need it (the directories on their
 * paths) plus the changes applied so far, so that later actions see earlier
 * ones (create then update of the same file in one commit works).
 */
class TreeModel {
  private readonly changes = new Map<string, Entry | null>();

  constructor(private readonly dirs: Map<string, Map<string, TreeEntry>>) {}

  private original(path: string): TreeEntry | null {
    return this.dirs.get(parentDir(path))?.get(baseName(path)) ?? null;
  }

  /** The file at `path` (blob, symlink or submodule), or null. */
  file(path: string): Entry | null {
    if (this.changes.has(path)) return this.changes.get(path)!;
    const entry = this.original(path);
    return entry && entry.mode !== '40000' ? entry : null;
  }

  /** Whether `path` is a directory (in the start tree or because of an earlier action). */
  isDir(path: string): boolean {
    if (this.original(path)?.mode === '40000') return true;
    const prefix = `${path}/`;
    for (const [p, e] of this.changes) if (e && p.startsWith(prefix)) return true;
    return false;
  }

  /** A file may be created at `path` only if nothing is there and no parent is a file. */
  assertCreatable(path: string): void {
    if (this.file(path) || this.isDir(path)) throw new GitError('exists', `a file or directory already exists at ${path}`);
    for (const dir of ancestorDirs(path)) {
      if (dir && this.file(dir)) throw new GitError('exists', `${dir} is a file, cannot create ${path}`);
    }
  }

  existingFile(path: string): Entry {
    const entry = this.file(path);
    if (!entry) throw new GitError('not_found', `file not found: ${path}`);
    return entry;
  }

  set(path: string, entry: Entry | null): void {
    this.changes.set(path, entry);
  }

  /** update-index --index-info -z input; removals first so a file may replace a removed directory. */
  indexInfo(): string {
    const removals: string[] = [];
    const additions: string[] = [];
    for (const [path, entry] of this.changes) {
      if (entry) additions.push(`${entry.mode} ${entry.oid}\t${path}\0`);
      else removals.push(`0 ${ZERO_SHA}\t${path}\0`);
    }
    return removals.join('') + additions.join('');
  }
}

function validateActions(actions: FileAction[]): void {
  for (const a of actions) {
    if (!['create', 'update', 'delete', 'move', 'chmod'].includes(a.action)) {
      throw new GitError('failed', `unknown action: ${String(a.action)}`);
    }
    assertRepoPath(a.file_path);
    if (a.action === 'move') {
      if (a.previous_path === undefined) throw new GitError('invalid_path', 'move requires previous_path');
      assertRepoPath(a.previous_path);
    }
  }
}

function modeFor(requested: boolean | undefined, current: string | undefined): string {
  if (requested === true) return '100755';
  if (requested === false) return '100644';
  return current ?? '100644';
}

/** Loads the start commit and the trees of every directory the actions touch, in one cat-file spawn. */
async function loadStart(gitDir: string, start: string, paths: string[]): Promise<{ parent: string; dirs: Map<string, Map<string, TreeEntry>> }> {
  if (!isSafeRevision(start)) throw new GitError('invalid_ref', `invalid start revision: ${start}`);
  const dirNames = [...new Set(paths.flatMap(ancestorDirs))];
  const queries = [`${start}^{commit}`, ...dirNames.map((d) => (d === '' ? `${start}^{tree}` : `${start}:${d}`))];
  const objects = await catFileBatch(gitDir, queries);
  const commit = objects[0];
  if (!commit || commit.type !== 'commit') throw new GitError('not_found', `start commit not found: ${start}`);
  const dirs = new Map<string, Map<string, TreeEntry>>();
  dirNames.forEach((dir, i) => {
    const obj = objects[i + 1];
    if (obj && obj.type === 'tree') {
      dirs.set(dir, new Map(parseTree(obj.content, obj.oid.length / 2).map((e) => [e.name, e])));
    }
  });
  return { parent: commit.oid, dirs };
}

/** Applies the actions to the model, checking each against the state left by the previous ones. */
function applyActions(model: TreeModel, actions: FileAction[], blobIds: Map<FileAction, string>): void {
  for (const a of actions) {
    const blob = blobIds.get(a);
    switch (a.action) {
      case 'create':
        model.assertCreatable(a.file_path);
        model.set(a.file_path, { mode: modeFor(a.execute_filemode, undefined), oid: blob! });
        break;
      case 'update': {
        const cur = model.existingFile(a.file_path);
        model.set(a.file_path, { mode: modeFor(a.execute_filemode, cur.mode), oid: blob ?? cur.oid });
        break;
      }
      case 'delete':
        model.existingFile(a.file_path);
        model.set(a.file_path, null);
        break;
      case 'chmod': {
        const cur = model.existingFile(a.file_path);
        model.set(a.file_path, { mode: modeFor(a.execute_filemode ?? false, cur.mode), oid: cur.oid });
        break;
      }
      case 'move': {
        const src = model.existingFile(a.previous_path!);
        if (a.previous_path === a.file_path) throw new GitError('exists', `cannot move ${a.file_path} onto itself`);
        model.set(a.previous_path!, null);
        model.assertCreatable(a.file_path);
        model.set(a.file_path, { mode: modeFor(a.execute_filemode, src.mode), oid: blob ?? src.oid });
        break;
      }
    }
  }
}

/**
 * Commits file actions on top of `startSha` and moves the branch with CAS.
 * Returns the new commit id. The tree is built in a private temporary
 * index, so concurrent calls on one repository never interfere before the
 * final ref update, where exactly one of two racing writers wins.
 */
export async function commitFiles(gitDir: string, opts: CommitFilesOptions): Promise<string> {
  if (!isValidBranchName(opts.branch)) throw new GitError('invalid_ref', `invalid branch name: ${opts.branch}`);
  if (opts.expectedOldSha !== null && !isSha(opts.expectedOldSha)) {
    throw new GitError('invalid_ref', 'expectedOldSha must be a full commit id or null');
  }
  validateActions(opts.actions);

  // Blobs do not depend on the start tree: hash them while it is being read.
  const withContent = opts.actions.filter((a) => a.content !== undefined || a.action === 'create');
  const hashing = hashBlobs(gitDir, withContent.map((a) => (Buffer.isBuffer(a.content) ? a.content : Buffer.from(a.content ?? '', 'utf8'))));
  // Marks the promise handled now: it may reject while we are still awaiting the start tree.
  hashing.catch(() => undefined);
  const indexFile = join(tmpdir(), `labwright-index-${randomUUID()}`);
  const indexEnv = { GIT_INDEX_FILE: indexFile };
  try {
    const paths = opts.actions.flatMap((a) => (a.previous_path !== undefined ? [a.file_path, a.previous_path] : [a.file_path]));
    let parent: string | null = null;
    let dirs = new Map<string, Map<string, TreeEntry>>();
    if (opts.startSha !== null) {
      // A full sha cannot move under us, so the index can be filled in parallel with the lookup.
      const early = isSha(opts.startSha) ? runGit(['read-tree', `${opts.startSha}^{tree}`], { gitDir, env: indexEnv }) : null;
      const [loaded, readEarly] = await Promise.allSettled([loadStart(gitDir, opts.startSha, paths), early]);
      if (loaded.status === 'rejected') throw loaded.reason;
      if (readEarly.status === 'rejected') throw readEarly.reason;
      ({ parent, dirs } = loaded.value);
      if (!early) await runGit(['read-tree', `${parent}^{tree}`], { gitDir, env: indexEnv });
    }
    const hashed = await hashing;
    const blobIds = new Map<FileAction, string>(withContent.map((a, i) => [a, hashed[i]!]));
    const model = new TreeModel(dirs);
    applyActions(model, opts.actions, blobIds);

    await runGit(['update-index', '-z', '--index-info'], { gitDir, env: indexEnv, input: model.indexInfo() });
    const tree = (await runGit(['write-tree'], { gitDir, env: indexEnv })).stdout.toString('utf8').trim();
    const commitOpts: CommitTreeOptions = { tree, parents: parent ? [parent] : [], message: opts.message, author: opts.author };
    if (opts.committer) commitOpts.committer = opts.committer;
    const sha = await createCommit(gitDir, commitOpts);
    await casUpdateRef(gitDir, `refs/heads/${opts.branch}`, sha, opts.expectedOldSha, 'labwright: commit files');
    return sha;
  } finally {
    await hashing.catch(() => undefined); // settled either way before we return or rethrow
    await rm(indexFile, { force: true });
    await rm(`${indexFile}.lock`, { force: true });
  }
}
