/**
 * Ref reads and compare-and-swap ref writes. All writes go through
 * `git update-ref <ref> <new> <old>`, which takes the ref lock and checks the
 * old value under it: of two concurrent writers with the same expectation
 * exactly one wins, the other gets GitError('cas_failed').
 */
import { GitError, isGitError } from './errors.js';
import { runGit } from './exec.js';
import { isValidRefName } from './refname.js';

export const ZERO_SHA = '0000000000000000000000000000000000000000';
const SHA_RE = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

export function isSha(value: string): boolean {
  return SHA_RE.test(value);
}

function assertFullRef(ref: string): void {
  if (!ref.startsWith('refs/') || !isValidRefName(ref)) throw new GitError('invalid_ref', `invalid ref name: ${ref}`);
}

function assertSha(value: string, what: string): void {
  if (!isSha(value)) throw new GitError('invalid_ref', `${what} must be a full object id: ${value}`);
}

/** Maps update-ref's stderr to our error codes. */
function classifyRefError(err: unknown, ref: string): unknown {
  if (!isGitError(err, 'failed') || err.stderr === undefined) return err;
  const s = err.stderr;
  let code: GitError['code'] = 'failed';
  let message = `cannot update ${ref}`;
  if (/File name too long/.test(s)) {
    // The files backend cannot store a name this long: the name is at fault, not a race.
    code = 'invalid_ref';
    message = `ref name too long: ${ref.slice(0, 100)}`;
  } else if (/is at [0-9a-f]+ but expected|reference already exists|unable to resolve reference|\.lock': File exists|Unable to create .*\.lock/.test(s)) {
    // Someone else changed (or holds the lock on) the ref: the caller's view is stale.
    code = 'cas_failed';
    message = `${ref} was changed concurrently`;
  } else if (/exists; cannot create|cannot lock ref .* there are still refs under|at the same time/.test(s)) {
    code = 'exists';
    message = `a ref conflicting with ${ref} exists`;
  } else if (/bad name|not a valid/.test(s)) {
    code = 'invalid_ref';
    message = `invalid ref ${ref}`;
  } else if (/nonexistent object/.test(s)) {
    code = 'not_found';
    message = `object for ${ref} does not exist`;
  } else if (/non-commit object/.test(s)) {
    code = 'invalid_ref';
    message = `${ref} can only point to a commit`;
  }
  return new GitError(code, message, s);
}

/**
 * Compare-and-swap: sets `ref` to `newSha` only if it currently is `oldSha`
 * (null = the ref must not exist). `newSha` = ZERO_SHA deletes the ref.
 */
export async function casUpdateRef(gitDir: string, ref: string, newSha: string, oldSha: string | null, reason = 'labwright'): Promise<void> {
  assertFullRef(ref);
  assertSha(newSha, 'new value');
  if (oldSha !== null) assertSha(oldSha, 'old value');
  let args: string[];
  let input: string | undefined;
  if (newSha !== ZERO_SHA) args = ['update-ref', '-m', reason, ref, newSha, oldSha ?? ZERO_SHA];
  else if (oldSha !== null) args = ['update-ref', '-m', reason, '-d', ref, oldSha];
  else {
    // "delete a ref that must not exist": only verify the absence, under the lock.
    args = ['update-ref', '--stdin'];
    input = `verify ${ref} ${ZERO_SHA}\n`;
  }
  try {
    await runGit(args, input === undefined ? { gitDir } : { gitDir, input });
  } catch (err) {
    throw classifyRefError(err, ref);
  }
}

export interface RefInfo {
  ref: string;
  sha: string;
}

/** All refs (or those under `prefixes`) as a map refname → sha, with one spawn. */
export async function readRefs(gitDir: string, prefixes: string[] = []): Promise<Map<string, string>> {
  const { stdout } = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', ...prefixes], { gitDir });
  const refs = new Map<string, string>();
  for (const line of stdout.toString('utf8').split('\n')) {
    if (!line) continue;
    const space = line.indexOf(' ');
    refs.set(line.slice(space + 1), line.slice(0, space));
  }
  return refs;
}

export interface RefChange {
  ref: string;
  /** null when the ref was created */
  before: string | null;
  /** null when the ref was deleted */
  after: string | null;
}

/** Differences between two readRefs() snapshots, e.g. before and after a push. */
export function diffRefs(before: Map<string, string>, after: Map<string, string>): RefChange[] {
  const changes: RefChange[] = [];
  for (const [ref, sha] of after) {
    const old = before.get(ref);
    if (old !== sha) changes.push({ ref, before: old ?? null, after: sha });
  }
  for (const [ref, sha] of before) {
    if (!after.has(ref)) changes.push({ ref, before: sha, after: null });
  }
  return changes.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}
