/**
 * Read-side queries (history, trees, blobs, refs, diffs). Each function costs
 * one git spawn unless noted; lists are produced by a single for-each-ref /
 * log / ls-tree run rather than one spawn per item.
 */
import { LOG_FORMAT, makeCommitFromFields, parseLog, type Commit } from './commits.js';
import { applyDiffLimits, DIFF_TREE_ARGS, parseDiffTree, type Diff, type DiffLimits } from './diff.js';
import { GitError } from './errors.js';
import { runGit, spawnGit } from './exec.js';
import { catFileBatch, entryType, fullMode, parseTree } from './objects.js';
import { assertRepoPath, baseName, normalizeDir, parentDir } from './paths.js';
import { isSafeRevision } from './refname.js';
import { resolveCommits } from './merge.js';

function assertRev(rev: string): void {
  if (!isSafeRevision(rev)) throw new GitError('invalid_ref', `invalid revision: ${JSON.stringify(rev)}`);
}

/** git's wording when a revision given on the command line does not resolve. */
const UNKNOWN_REV = /unknown revision|bad revision|ambiguous argument|not a valid|Not a valid object name|bad object|invalid object/i;

export async function resolveRef(gitDir: string, ref: string): Promise<string | null> {
  if (!isSafeRevision(ref)) return null;
  const res = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { gitDir, okCodes: [0, 1, 128] });
  return res.code === 0 ? res.stdout.toString('utf8').trim() : null;
}

export async function getCommit(gitDir: string, rev: string): Promise<Commit | null> {
  if (!isSafeRevision(rev)) return null;
  const res = await runGit(['log', '-1', '-z', LOG_FORMAT, '--end-of-options', `${rev}^{commit}`, '--'], { gitDir, okCodes: [0, 128] });
  if (res.code !== 0) return null;
  return parseLog(res.stdout)[0] ?? null;
}

/** Several commits in one spawn, in the given order. Throws not_found if any is missing. */
export async function getCommits(gitDir: string, revs: string[]): Promise<Commit[]> {
  if (revs.length === 0) return [];
  revs.forEach(assertRev);
  const res = await runGit(['log', '--no-walk=unsorted', '-z', LOG_FORMAT, '--end-of-options', ...revs, '--'], { gitDir, okCodes: [0, 128] });
  if (res.code !== 0) throw new GitError('not_found', 'commit not found', res.stderr);
  const byId = new Map(parseLog(res.stdout).map((c) => [c.id, c]));
  // --no-walk shows each commit once; map back so duplicates and non-sha revs keep their slot.
  if (byId.size === revs.length && revs.every((r) => byId.has(r))) return revs.map((r) => byId.get(r)!);
  const ids = await resolveCommits(gitDir, revs);
  return ids.map((id) => byId.get(id)!);
}

function gitDateArg(value: Date | string): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) throw new GitError('failed', `invalid date: ${String(value)}`);
  return date.toISOString();
}

export interface ListCommitsOptions {
  ref: string;
  path?: string;
  since?: Date | string;
  until?: Date | string;
  offset?: number;
  limit?: number;
  firstParent?: boolean;
  /** Exclude commits reachable from this revision (`ref` ^exclude). */
  exclude?: string;
  reverse?: boolean;
  noMerges?: boolean;
  /** Only commits whose message contains this text (any case). */
  grep?: string;
}

/** History in `git log` order. Throws not_found when `ref` does not resolve. */
export async function listCommits(gitDir: string, opts: ListCommitsOptions): Promise<Commit[]> {
  assertRev(opts.ref);
  const args = ['log', '-z', LOG_FORMAT];
  if (opts.offset) args.push(`--skip=${Math.max(0, Math.floor(opts.offset))}`);
  if (opts.limit !== undefined) args.push(`--max-count=${Math.max(0, Math.floor(opts.limit))}`);
  if (opts.firstParent) args.push('--first-parent');
  if (opts.noMerges) args.push('--no-merges');
  if (opts.reverse) args.push('--reverse');
  if (opts.since !== undefined) args.push(`--since=${gitDateArg(opts.since)}`);
  if (opts.until !== undefined) args.push(`--until=${gitDateArg(opts.until)}`);
  // A literal, case-insensitive search of the messages (the search API's commits scope).
  if (opts.grep !== undefined) args.push('--regexp-ignore-case', '--fixed-strings', `--grep=${opts.grep}`);
  args.push('--end-of-options', opts.ref);
  if (opts.exclude !== undefined) {
    assertRev(opts.exclude);
    args.push(`^${opts.exclude}`);
  }
  args.push('--');
  const dir = normalizeDir(opts.path);
  if (dir) args.push(dir);
  // GIT_LITERAL_PATHSPECS: a path like ":(glob)*" must mean that file, not pathspec magic.
  const res = await runGit(args, { gitDir, okCodes: [0, 128], env: { GIT_LITERAL_PATHSPECS: '1' } });
  if (res.code !== 0) {
    if (UNKNOWN_REV.test(res.stderr)) throw new GitError('not_found', `revision not found: ${opts.ref}`, res.stderr);
    throw new GitError('failed', 'git log failed', res.stderr);
  }
  return parseLog(res.stdout);
}

export async function countCommits(gitDir: string, ref: string, opts: { path?: string; firstParent?: boolean; exclude?: string } = {}): Promise<number> {
  assertRev(ref);
  const args = ['rev-list', '--count'];
  if (opts.firstParent) args.push('--first-parent');
  args.push('--end-of-options', ref);
  if (opts.exclude !== undefined) {
    assertRev(opts.exclude);
    args.push(`^${opts.exclude}`);
  }
  args.push('--');
  const dir = normalizeDir(opts.path);
  if (dir) args.push(dir);
  const res = await runGit(args, { gitDir, okCodes: [0, 128], env: { GIT_LITERAL_PATHSPECS: '1' } });
  if (res.code !== 0) throw new GitError('not_found', `revision not found: ${ref}`, res.stderr);
  return Number(res.stdout.toString('utf8').trim());
}

export interface Blob {
  content: Buffer;
  blobId: string;
  size: number;
  mode: string;
}

/** A file's content and mode, from one cat-file spawn (the parent tree supplies the mode). */
export async function readBlob(gitDir: string, ref: string, filePath: string): Promise<Blob | null> {
  if (!isSafeRevision(ref)) return null;
  assertRepoPath(filePath);
  const dir = parentDir(filePath);
  const [tree, blob] = await catFileBatch(gitDir, [dir ? `${ref}:${dir}` : `${ref}^{tree}`, `${ref}:${filePath}`]);
  if (!tree || tree.type !== 'tree' || !blob || blob.type !== 'blob') return null;
  const name = baseName(filePath);
  const entry = parseTree(tree.content, tree.oid.length / 2).find((e) => e.name === name);
  return { content: blob.content, blobId: blob.oid, size: blob.size, mode: fullMode(entry?.mode ?? '100644') };
}

export interface TreeItem {
  id: string;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  path: string;
  mode: string;
}

/** Entries of a directory (or the whole subtree, trees included, when recursive), in git's tree order. */
export async function listTree(gitDir: string, opts: { ref: string; path?: string; recursive?: boolean }): Promise<TreeItem[]> {
  assertRev(opts.ref);
  const dir = normalizeDir(opts.path);
  const args = ['ls-tree', '-z'];
  if (opts.recursive) args.push('-r', '-t');
  args.push('--end-of-options', dir ? `${opts.ref}:${dir}` : `${opts.ref}^{tree}`);
  const res = await runGit(args, { gitDir, okCodes: [0, 128] });
  if (res.code !== 0) throw new GitError('not_found', dir ? `tree not found: ${dir}` : `revision not found: ${opts.ref}`, res.stderr);
  const items: TreeItem[] = [];
  for (const record of res.stdout.toString('utf8').split('\0')) {
    if (!record) continue;
    // "<mode> <type> <oid>\t<path relative to dir>"
    const tab = record.indexOf('\t');
    const [mode, , id] = record.slice(0, tab).split(' ');
    const rel = record.slice(tab + 1);
    items.push({ id: id!, name: baseName(rel), type: entryType(mode!), path: dir ? `${dir}/${rel}` : rel, mode: mode! });
  }
  return items;
}

export async function lastCommitForPath(gitDir: string, ref: string, path: string): Promise<Commit | null> {
  try {
    return (await listCommits(gitDir, { ref, path, limit: 1 }))[0] ?? null;
  } catch (err) {
    if (err instanceof GitError && err.code === 'not_found') return null;
    throw err;
  }
}

export async function mergeBase(gitDir: string, a: string, b: string): Promise<string | null> {
  assertRev(a);
  assertRev(b);
  const res = await runGit(['merge-base', '--end-of-options', a, b], { gitDir, okCodes: [0, 1, 128] });
  if (res.code === 128) throw new GitError('not_found', 'revision not found', res.stderr);
  return res.code === 0 ? res.stdout.toString('utf8').trim() : null;
}

/** Whether `ancestor` is reachable from `descendant` (a commit is its own ancestor). */
export async function isAncestor(gitDir: string, ancestor: string, descendant: string): Promise<boolean> {
  assertRev(ancestor);
  assertRev(descendant);
  const res = await runGit(['merge-base', '--is-ancestor', '--end-of-options', ancestor, descendant], { gitDir, okCodes: [0, 1, 128] });
  if (res.code === 128) throw new GitError('not_found', 'revision not found', res.stderr);
  return res.code === 0;
}

/** ahead = commits in `a` not in `b`; behind = commits in `b` not in `a`. */
export async function countDivergence(gitDir: string, a: string, b: string): Promise<{ ahead: number; behind: number }> {
  assertRev(a);
  assertRev(b);
  const res = await runGit(['rev-list', '--left-right', '--count', '--end-of-options', `${a}...${b}`], { gitDir, okCodes: [0, 128] });
  if (res.code !== 0) throw new GitError('not_found', 'revision not found', res.stderr);
  const [ahead, behind] = res.stdout.toString('utf8').trim().split(/\s+/).map(Number);
  return { ahead: ahead ?? 0, behind: behind ?? 0 };
}

export interface CompareResult {
  /** Oldest first. */
  commits: Commit[];
  diffs: Diff[];
  base_sha: string;
  head_sha: string;
  start_sha: string;
  /** True when diff limits cut or collapsed files. */
  overflow: boolean;
}

export interface CompareOptions extends DiffLimits {
  /** Diff `from` and `to` directly instead of from their merge base. */
  straight?: boolean;
  maxCommits?: number;
}

/** Commits from..to and the diff from the merge base (or `from` when straight) to `to`. */
export async function compare(gitDir: string, from: string, to: string, opts: CompareOptions = {}): Promise<CompareResult> {
  const [start, head] = await resolveCommits(gitDir, [from, to]);
  const base = opts.straight ? start! : ((await mergeBase(gitDir, start!, head!)) ?? start!);
  const logArgs = ['log', '-z', LOG_FORMAT, '--reverse'];
  if (opts.maxCommits !== undefined) logArgs.push(`--max-count=${opts.maxCommits}`);
  logArgs.push(head!, `^${start}`, '--');
  const [log, diff] = await Promise.all([
    runGit(logArgs, { gitDir }),
    runGit([...DIFF_TREE_ARGS, base, head!], { gitDir }),
  ]);
  const limited = applyDiffLimits(parseDiffTree(diff.stdout), opts);
  return { commits: parseLog(log.stdout), diffs: limited.diffs, base_sha: base, head_sha: head!, start_sha: start!, overflow: limited.overflow };
}

/** Diff entries between two revisions (no merge base involved). */
export async function diffBetween(gitDir: string, base: string, head: string, limits: DiffLimits = {}): Promise<{ diffs: Diff[]; overflow: boolean }> {
  const [a, b] = await resolveCommits(gitDir, [base, head]);
  const res = await runGit([...DIFF_TREE_ARGS, a!, b!], { gitDir });
  return applyDiffLimits(parseDiffTree(res.stdout), limits);
}

/** Full patch text between two revisions, as `git diff base head` prints it (with rename detection). */
export async function rawDiff(gitDir: string, base: string, head: string): Promise<string> {
  const [a, b] = await resolveCommits(gitDir, [base, head]);
  const res = await runGit(['diff-tree', '-r', '-p', '-M', '--no-color', '--no-ext-diff', '--no-textconv', a!, b!], { gitDir });
  return res.stdout.toString('utf8');
}

export interface Branch {
  name: string;
  sha: string;
  commit?: Commit;
}

const BRANCH_COMMIT_FORMAT =
  '--format=%(refname)%00%(objectname)%00%(parent)%00%(authorname)%00%(authoremail:trim)%00%(authordate:iso-strict)' +
  '%00%(committername)%00%(committeremail:trim)%00%(committerdate:iso-strict)%00%(contents)%00';

/** All branches sorted by name (git's byte order), optionally with their tip commits, in one spawn. */
export async function listBranches(gitDir: string, opts: { withCommit?: boolean } = {}): Promise<Branch[]> {
  if (!opts.withCommit) {
    const res = await runGit(['for-each-ref', '--sort=refname', '--format=%(refname)%00%(objectname)', 'refs/heads/'], { gitDir });
    return res.stdout.toString('utf8').split('\n').filter(Boolean).map((line) => {
      const [ref, sha] = line.split('\0');
      return { name: ref!.slice('refs/heads/'.length), sha: sha! };
    });
  }
  const res = await runGit(['for-each-ref', '--sort=refname', BRANCH_COMMIT_FORMAT, 'refs/heads/'], { gitDir });
  // Messages contain newlines, so records are split by a fixed count of NUL-terminated fields.
  const fields = res.stdout.toString('utf8').split('\0');
  const branches: Branch[] = [];
  for (let i = 0; i + 10 <= fields.length; i += 10) {
    const ref = fields[i]!.replace(/^\n/, '');
    const sha = fields[i + 1]!;
    branches.push({ name: ref.slice('refs/heads/'.length), sha, commit: makeCommitFromFields(sha, fields.slice(i + 2, i + 10)) });
  }
  return branches;
}

export interface Tag {
  name: string;
  /** What the ref points to: the tag object for annotated tags, else the commit. */
  sha: string;
  /** The object the tag finally points to, through any tags of tags; null if it is missing. */
  target: string | null;
  /** That object's type ('commit' for nearly every tag; 'tree' or 'blob' are possible). */
  targetType: string | null;
  annotated: boolean;
  /** Annotation message, null for lightweight tags. */
  message: string | null;
  /** The tagger's date (ISO 8601) of an annotated tag, null for lightweight tags. */
  createdAt: string | null;
  /** git's creator date: the tagger's date of an annotated tag, else the commit's committer date. */
  creatorDate: string | null;
}

/** Tag names in git's version order (`version:refname`, GitLab's `order_by=version` through Gitaly), ascending. */
export async function tagNamesByVersion(gitDir: string): Promise<string[]> {
  const res = await runGit(['for-each-ref', '--sort=version:refname', '--format=%(refname:lstrip=2)', 'refs/tags/'], { gitDir });
  return res.stdout.toString('utf8').split('\n').filter(Boolean);
}

/** Every tag, or with `name` only that tag (none or one: a ref name holds no glob characters). */
export async function listTags(gitDir: string, name?: string): Promise<Tag[]> {
  const res = await runGit(
    ['for-each-ref', '--sort=refname', '--format=%(refname)%00%(objectname)%00%(objecttype)%00%(taggerdate:iso-strict)%00%(creatordate:iso-strict)%00%(contents)%00', name === undefined ? 'refs/tags/' : `refs/tags/${name}`],
    { gitDir },
  );
  // Messages contain newlines, so records are split by a fixed count of NUL-terminated fields.
  const fields = res.stdout.toString('utf8').split('\0');
  const tags: Tag[] = [];
  for (let i = 0; i + 6 <= fields.length; i += 6) {
    const ref = fields[i]!.replace(/^\n/, '');
    const annotated = fields[i + 2] === 'tag';
    // A pattern also matches the refs below it (refs/tags/v1 matches refs/tags/v1/x).
    if (name !== undefined && ref !== `refs/tags/${name}`) continue;
    tags.push({
      name: ref.slice('refs/tags/'.length),
      sha: fields[i + 1]!,
      target: annotated ? null : fields[i + 1]!,
      targetType: annotated ? null : fields[i + 2]!,
      annotated,
      message: annotated ? fields[i + 5]! : null,
      createdAt: annotated && fields[i + 3] ? fields[i + 3]! : null,
      creatorDate: fields[i + 4] || null,
    });
  }
  // Annotated tags are peeled to the object they finally name (a tag of a tag included), with one spawn.
  const annotated = tags.filter((t) => t.annotated);
  if (annotated.length) {
    const peeled = await runGit(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { gitDir, input: annotated.map((t) => `${t.sha}^{}\n`).join('') });
    const lines = peeled.stdout.toString('utf8').split('\n');
    annotated.forEach((t, k) => {
      const m = /^([0-9a-f]{40,64}) (\w+)$/.exec(lines[k] ?? '');
      if (m) {
        t.target = m[1]!;
        t.targetType = m[2]!;
      }
    });
  }
  return tags;
}

export interface CommitFileChanges {
  added: string[];
  modified: string[];
  removed: string[];
}

/**
 * The paths each commit adds, modifies and removes against its first parent (a root commit: all
 * added), for several commits with one spawn (`git diff-tree --stdin`). Merge commits list none.
 */
export async function changedFilesOf(gitDir: string, shas: string[]): Promise<Map<string, CommitFileChanges>> {
  const out = new Map<string, CommitFileChanges>();
  if (shas.length === 0) return out;
  for (const s of shas) if (!/^[0-9a-f]{40,64}$/.test(s)) throw new GitError('failed', `not a commit id: ${s}`);
  const res = await runGit(['diff-tree', '--stdin', '-r', '--root', '--no-renames', '--name-status', '-z'], { gitDir, input: shas.join('\n') + '\n', okCodes: [0, 128] });
  if (res.code !== 0) throw new GitError('not_found', 'commit not found', res.stderr);
  // "<sha>\0" opens each commit, then "<status>\0<path>\0" pairs; a status is never a sha, so a
  // token where a status may stand is one or the other.
  const parts = res.stdout.toString('utf8').split('\0');
  let current: CommitFileChanges | null = null;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p === '') continue;
    if (/^[0-9a-f]{40,64}$/.test(p)) {
      current = { added: [], modified: [], removed: [] };
      out.set(p, current);
      continue;
    }
    const path = parts[++i];
    if (!current || path === undefined) continue;
    if (p.startsWith('A')) current.added.push(path);
    else if (p.startsWith('D')) current.removed.push(path);
    else current.modified.push(path);
  }
  return out;
}

export interface FoundBlob {
  path: string;
  /** The first line of `data` (1-based). */
  startline: number;
  /** The matching lines with two lines of context around them. */
  data: string;
}

/** Lines one blob search result holds at most (a longer run of matches continues in the next one). */
const MAX_RESULT_LINES = 50;

/**
 * Files of `ref` whose content contains `query` (literally, any case; binary files skipped), as
 * GitLab's basic blob search: one result per group of matching lines with two lines of context.
 * At most `limit` results: git's output is read as it comes and git is stopped once they are
 * complete, so a common term in a large repository costs what the page needs.
 */
export function grepFiles(gitDir: string, ref: string, query: string, limit: number): Promise<FoundBlob[]> {
  assertRev(ref);
  // The ref was checked by assertRev (never an option); git grep takes no --end-of-options before it.
  const args = ['grep', '-I', '-i', '-F', '-n', '--null', '-C', '2', '--no-color', '-e', query, ref, '--'];
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, { gitDir });
    const out: FoundBlob[] = [];
    const prefix = `${ref}:`;
    let current: FoundBlob | null = null;
    let lines = 0;
    let lastLine = -1;
    let pending = '';
    let stderr = '';
    let done = false;
    const close = () => {
      if (current) out.push(current);
      current = null;
    };
    const finish = () => {
      if (done) return;
      done = true;
      child.kill('SIGKILL');
      resolve(out.slice(0, limit));
    };
    const line = (text: string) => {
      if (text === '--' || text === '') {
        close();
        return;
      }
      const nul = text.indexOf('\u0000');
      if (nul < 0) return;
      let path = text.slice(0, nul);
      if (path.startsWith(prefix)) path = path.slice(prefix.length);
      const rest = text.slice(nul + 1);
      const m = /^(\d+)[:\-\u0000]/.exec(rest);
      if (!m) return;
      const lineNo = Number(m[1]);
      if (!current || current.path !== path || lineNo !== lastLine + 1 || lines >= MAX_RESULT_LINES) {
        close();
        current = { path, startline: lineNo, data: '' };
        lines = 0;
      }
      current.data += `${rest.slice(m[0].length)}\n`;
      lines++;
      lastLine = lineNo;
    };
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      if (done) return;
      pending += chunk;
      let i: number;
      while ((i = pending.indexOf('\n')) >= 0) {
        line(pending.slice(0, i));
        pending = pending.slice(i + 1);
        // One more result than asked for may still be growing: stop once `limit` are complete.
        if (out.length >= limit) return finish();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => {
      if (!done) {
        done = true;
        reject(new GitError('failed', `git grep: ${err.message}`));
      }
    });
    child.on('close', (code) => {
      if (done) return;
      if (pending) line(pending);
      close();
      if (code === 0 || code === 1) return finish();
      done = true;
      // A revision that does not resolve (or is no tree) finds nothing.
      if (UNKNOWN_REV.test(stderr) || /unable to resolve revision|not a tree object|bad revision/i.test(stderr)) reject(new GitError('not_found', `revision not found: ${ref}`, stderr));
      else reject(new GitError('failed', 'git grep failed', stderr));
    });
    child.stdin!.end();
  });
}

/** One line of `git blame`: the commit it last came from and its text (no line ending). */
export interface BlameLine {
  commitId: string;
  text: Buffer;
}

/**
 * `git blame --porcelain` of `filePath` at commit `sha`, lines `start`..`end` (1-based, inclusive;
 * the caller keeps them within the file). One spawn; the commits' details are read separately.
 */
export async function blame(gitDir: string, sha: string, filePath: string, start: number, end: number): Promise<BlameLine[]> {
  assertRev(sha);
  assertRepoPath(filePath);
  const res = await runGit(['blame', '--porcelain', '-L', `${start},${end}`, sha, '--', filePath], { gitDir, okCodes: [0, 128] });
  if (res.code !== 0) throw new GitError('not_found', `cannot blame ${filePath}`, res.stderr);
  const out = res.stdout;
  const lines: BlameLine[] = [];
  let pos = 0;
  let current = '';
  while (pos < out.length) {
    let nl = out.indexOf(0x0a, pos);
    if (nl < 0) nl = out.length;
    if (out[pos] === 0x09) {
      // "\t<content>": the line itself (a CRLF file's CR kept, as GitLab), for the header before it.
      lines.push({ commitId: current, text: out.subarray(pos + 1, nl) });
    } else {
      const head = out.subarray(pos, Math.min(nl, pos + 41)).toString('latin1');
      // A header line starts with a 40-hex sha; key-value lines (author, summary, …) do not matter here.
      if (/^[0-9a-f]{40} /.test(head)) current = head.slice(0, 40);
    }
    pos = nl + 1;
  }
  return lines;
}
