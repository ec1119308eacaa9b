// The pre-receive hook that enforces protected branches and tags on `git push` (GitLab's
// Gitlab::Checks::BranchCheck and TagCheck, which GitLab runs from its own pre-receive hook).
// The server decides, per push, what the pusher may do and hands that to git as a policy in the
// environment; the hook only applies it to the refs the push updates, with the new objects still
// in quarantine, so a refused push leaves nothing behind. Any refusal declines the whole push.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { refMatcher } from './ref-matcher.js';

/** One protected branch rule, already evaluated for the pusher. */
export interface BranchPolicy {
  /** The rule's name or pattern (`*` matches anything, `/` included). */
  p: string;
  push: boolean;
  merge: boolean;
  force: boolean;
}

export interface TagPolicy {
  p: string;
  create: boolean;
}

export interface PushPolicy {
  defaultBranch: string | null;
  /** The repository had no branch before this push. */
  empty: boolean;
  /** An empty repository's branches are protected (the namespace protects default branches). */
  emptyProtected: boolean;
  /** The pusher may make the first push to an empty, protected repository. */
  emptyPush: boolean;
  /** GitLab's words to a pusher refused the first push. */
  emptyMessage: string;
  /** Maintainers (and administrators) may delete protected refs, through the API only. */
  canDeleteProtected: boolean;
  branches: BranchPolicy[];
  tags: TagPolicy[];
  /**
   * A collaborator's push (allow_collaboration): only these existing branches may be updated;
   * every other ref, and creating or deleting these, is refused. Null for members' pushes.
   */
  onlyBranches?: string[] | null;
  /** What a push outside `onlyBranches` is told (default: not allowed to push code). */
  onlyBranchesMessage?: string;
  /** A snippet's push: the most files a pushed commit may hold, and at least one (GitLab's PushFileCountCheck). */
  maxFiles?: number | null;
  /** A snippet's push: the largest file it may hold, in bytes (the snippet size limit). */
  maxFileBytes?: number | null;
}

export const POLICY_ENV = 'LABWRIGHT_PUSH_POLICY';
export const NODE_ENV_VAR = 'LABWRIGHT_HOOK_NODE';

/** The hook itself, run by git with the policy file named in its environment (plain JavaScript, no imports of ours). */
const HOOK_SCRIPT = String.raw`// Written by Labwright (src/git/pre-receive-hook.ts); rewritten at start-up. Do not edit.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let policy = null;
try {
  policy = JSON.parse(readFileSync(process.env.${POLICY_ENV} || '', 'utf8'));
} catch {
  policy = null;
}
if (!policy || !Array.isArray(policy.branches) || !Array.isArray(policy.tags)) {
  process.stderr.write('GitLab: The push could not be checked.\n');
  process.exit(1);
}
const ZERO = /^0+$/;
// A name that starts with a full object id would read as one.
const SHA_START = /^[0-9a-f]{40}/i;
// GitLab's GitRefValidator: no option-like name, nothing that reads as a full ref.
const invalidName = (name) => name.startsWith('-') || name === 'HEAD' || ['refs/heads/', 'refs/remotes/', 'refs/tags/'].some((p) => name.startsWith(p));

// RefMatcher without backtracking: src/git/ref-matcher.ts, written in here.
const matcher = ${refMatcher.toString()};
const branches = policy.branches.map((r) => Object.assign({}, r, { m: matcher(r.p) }));
const tags = policy.tags.map((r) => Object.assign({}, r, { m: matcher(r.p) }));

function git(args) {
  try {
    return { ok: true, out: execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) };
  } catch {
    return { ok: false, out: '' };
  }
}
const isAncestor = (a, b) => git(['merge-base', '--is-ancestor', a, b]).ok;
// The repository as it is now, not as it was when the push began: another push may have landed since.
const anyBranch = git(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/']);
if (!anyBranch.ok) {
  process.stderr.write('GitLab: The push could not be checked.\n');
  process.exit(1);
}
policy.empty = anyBranch.out.trim() === '';
if (!policy.defaultBranch && !policy.empty) {
  const head = git(['symbolic-ref', '-q', 'HEAD']).out.trim();
  if (head.startsWith('refs/heads/') && git(['rev-parse', '-q', '--verify', head]).ok) policy.defaultBranch = head.slice(11);
}
function inProtectedBranch(sha) {
  const out = git(['for-each-ref', '--contains=' + sha, '--format=%(refname)', 'refs/heads/']).out;
  return out.split('\n').filter((l) => l.startsWith('refs/heads/')).some((l) => branches.some((r) => r.m(l.slice(11))));
}

function checkBranch(name, oldSha, newSha) {
  // A zero new value deletes, whatever the old value says (git deletes a ref given 0 -> 0 too).
  const deletion = ZERO.test(newSha);
  const creation = !deletion && ZERO.test(oldSha);
  if (deletion && name === policy.defaultBranch) return 'The default branch of a project cannot be deleted.';
  if (!deletion && SHA_START.test(name)) return 'You cannot create a branch with a SHA-1 or SHA-256 branch name.';
  if (creation && invalidName(name)) return 'You cannot create a branch with an invalid name.';
  const rules = branches.filter((r) => r.m(name));
  const emptyRule = policy.empty && policy.emptyProtected;
  if (!emptyRule && rules.length === 0) return null;
  if (!creation && !deletion && !rules.some((r) => r.force) && !isAncestor(oldSha, newSha)) {
    return 'You are not allowed to force push code to a protected branch on this project.';
  }
  const canPush = (policy.empty && policy.emptyPush) || rules.some((r) => r.push);
  const canMerge = (policy.empty && policy.emptyPush) || rules.some((r) => r.merge);
  if (policy.empty) return canPush ? null : policy.emptyMessage;
  if (creation) {
    if (canPush) return null;
    if (!canMerge) return 'You are not allowed to create protected branches on this project.';
    if (!inProtectedBranch(newSha)) return 'You can only use an existing protected branch ref as the basis of a new protected branch.';
    return 'You can only create protected branches using the web interface and API.';
  }
  if (deletion) {
    return policy.canDeleteProtected
      ? 'You can only delete protected branches using the web interface.'
      : 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.';
  }
  return canPush ? null : 'You are not allowed to push code to protected branches on this project.';
}

function checkTag(name, oldSha, newSha) {
  const deletion = ZERO.test(newSha);
  const creation = !deletion && ZERO.test(oldSha);
  if (creation && name === policy.defaultBranch) return 'You cannot use default branch name to create a tag';
  if (creation && invalidName(name)) return 'You cannot create a tag with a prohibited pattern.';
  if (!deletion && SHA_START.test(name)) return 'You cannot create a tag with a SHA-1 or SHA-256 tag name.';
  const rules = tags.filter((r) => r.m(name));
  if (rules.length === 0) return null;
  if (!creation && !deletion) return 'Protected tags cannot be updated.';
  if (deletion) {
    return policy.canDeleteProtected
      ? 'You can only delete protected tags using the web interface.'
      : 'You are not allowed to delete protected tags from this project. Only a project maintainer or owner can delete a protected tag.';
  }
  return rules.some((r) => r.create) ? null : 'You are not allowed to create this tag as it is protected.';
}

// A collaborator (policy.onlyBranches) updates the listed existing branches and nothing else.
function collaborationAllows(ref, oldSha, newSha) {
  if (!Array.isArray(policy.onlyBranches)) return true;
  if (!ref.startsWith('refs/heads/') || ZERO.test(oldSha) || ZERO.test(newSha)) return false;
  return policy.onlyBranches.includes(ref.slice(11));
}

// A snippet's repository holds 1 to maxFiles files (submodule entries are no files), each at most maxFileBytes.
function fileCountProblem(newSha) {
  if (typeof policy.maxFiles !== 'number' || ZERO.test(newSha)) return null;
  const listed = git(['ls-tree', '-r', '-l', '-z', newSha]);
  if (!listed.ok) return 'The push could not be checked.';
  let count = 0;
  let largest = 0;
  for (const record of listed.out.split('\0')) {
    const fields = record.slice(0, record.indexOf('\t')).trim().split(/\s+/);
    if (fields[1] !== 'blob') continue;
    count += 1;
    largest = Math.max(largest, Number(fields[3]) || 0);
  }
  if (count > policy.maxFiles) return 'The repository can contain at most ' + policy.maxFiles + ' file(s).';
  if (count === 0) return 'The repository must contain at least 1 file.';
  if (typeof policy.maxFileBytes === 'number' && largest > policy.maxFileBytes) return 'Content is too long (more than ' + Math.round(policy.maxFileBytes / 1048576) + ' MiB). The maximum size is ' + Math.round(policy.maxFileBytes / 1048576) + ' MiB.';
  return null;
}

for (const line of readFileSync(0, 'utf8').split('\n')) {
  const [oldSha, newSha, ref] = line.trim().split(' ');
  if (!ref) continue;
  let message = null;
  if (!collaborationAllows(ref, oldSha, newSha)) message = policy.onlyBranchesMessage || 'You are not allowed to push code to this project.';
  if (!message) message = fileCountProblem(newSha);
  if (!message && ref.startsWith('refs/heads/')) message = checkBranch(ref.slice(11), oldSha, newSha);
  else if (!message && ref.startsWith('refs/tags/')) message = checkTag(ref.slice(10), oldSha, newSha);
  if (message) {
    process.stderr.write('GitLab: ' + message + '\n');
    process.exit(1);
  }
}
`;

/** The shell entry point git runs: node with the script beside it, without the server's NODE_OPTIONS. */
const HOOK_WRAPPER = `#!/bin/sh
# Written by Labwright (src/git/pre-receive-hook.ts). Do not edit.
unset NODE_OPTIONS
exec "$${NODE_ENV_VAR}" "$0.mjs"
`;

async function writeIfChanged(path: string, content: string, mode: number): Promise<void> {
  const current = await readFile(path, 'utf8').catch(() => null);
  if (current !== content) {
    // Another process may write the same file at the same time: each writes its own copy and renames it into place.
    const tmp = `${path}.${process.pid}.${randomUUID()}`;
    await writeFile(tmp, content, { mode });
    await rename(tmp, path);
  }
  await chmod(path, mode);
}

/**
 * Runs the installed hook once with a policy it cannot read: it must start and refuse. git skips a
 * hook it cannot execute (a file without its x bit, a data directory mounted noexec) and takes the
 * push unchecked, so pushes are served only once the hook is known to run.
 */
function selfTest(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', [POLICY_ENV]: join(dir, 'no-such-policy.json'), [NODE_ENV_VAR]: process.execPath };
    const child = spawn(join(dir, 'pre-receive'), [], { env, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => reject(new Error(`the pre-receive hook cannot run: ${err.message}`)));
    child.on('close', (code) => {
      if (code === 1 && stderr.includes('GitLab: ')) resolve();
      else reject(new Error(`the pre-receive hook did not refuse a push it could not check (exit ${code}): ${stderr.slice(0, 200)}`));
    });
    child.stdin!.on('error', () => {});
    child.stdin!.end(`${'0'.repeat(40)} ${'1'.repeat(40)} refs/heads/self-test\n`);
  });
}

const installed = new Map<string, Promise<string>>();

function install(dir: string): Promise<string> {
  const pending = (async () => {
    await mkdir(dir, { recursive: true });
    await writeIfChanged(join(dir, 'pre-receive.mjs'), HOOK_SCRIPT, 0o644);
    await writeIfChanged(join(dir, 'pre-receive'), HOOK_WRAPPER, 0o755);
    await selfTest(dir);
    return dir;
  })();
  pending.catch(() => installed.delete(dir));
  installed.set(dir, pending);
  return pending;
}

/**
 * The hooks directory, written and tested once per process; before each push its files are checked
 * again (someone may have removed them or their x bit since) and rewritten when they are not right.
 * Rejects when the hook cannot be made to run: the push must then be refused, never taken unchecked.
 */
export async function ensurePushHooks(dataDir: string): Promise<string> {
  const dir = join(dataDir, 'git-hooks');
  const ready = await (installed.get(dir) ?? install(dir));
  try {
    await Promise.all([access(join(ready, 'pre-receive'), constants.X_OK), access(join(ready, 'pre-receive.mjs'), constants.R_OK)]);
    return ready;
  } catch {
    installed.delete(dir);
    return install(dir);
  }
}

/** Server-written refs a push may not touch (GitLab hides them from receive-pack too). */
const HIDDEN_REFS = ['refs/merge-requests/', 'refs/pipelines/', 'refs/environments/', 'refs/keep-around/'];

export interface PreparedPush {
  env: Record<string, string>;
  /** Removes the policy file; call once git is done. */
  cleanup(): Promise<void>;
}

/**
 * Writes the policy to a private file (an environment variable is capped at 128 KB on Linux, which
 * a project with many rules would exceed) and returns the environment that makes git
 * http-backend's receive-pack run the hook with it and refuse updates of hidden refs.
 */
export async function preparePush(dataDir: string, policy: PushPolicy): Promise<PreparedPush> {
  const hooksDir = await ensurePushHooks(dataDir);
  const policyDir = join(dataDir, 'tmp');
  await mkdir(policyDir, { recursive: true, mode: 0o700 });
  const file = join(policyDir, `push-policy-${randomUUID()}.json`);
  await writeFile(file, JSON.stringify(policy), { mode: 0o600 });
  const config: Array<[string, string]> = [['core.hooksPath', hooksDir], ...HIDDEN_REFS.map((ref): [string, string] => ['receive.hideRefs', ref])];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length), [POLICY_ENV]: file, [NODE_ENV_VAR]: process.execPath };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return { env, cleanup: () => unlink(file).catch(() => undefined) };
}
