// The pre-receive hook that enforces protected branches and tags on `git push` (GitLab's
// Gitlab::Checks::BranchCheck and TagCheck, which GitLab runs from its own pre-receive hook).
// The server decides, per push, what the pusher may do and hands that to git as a policy in the
// environment; the hook only applies it to the refs the push updates, with the new objects still
// in quarantine, so a refused push leaves nothing behind. Any refusal declines the whole push.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

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
}

export const POLICY_ENV = 'LABWRIGHT_PUSH_POLICY';
export const NODE_ENV_VAR = 'LABWRIGHT_HOOK_NODE';

/** The hook itself, run by git with the policy in its environment (plain JavaScript, no imports of ours). */
const HOOK_SCRIPT = String.raw`// Written by Labwright (src/git/pre-receive-hook.ts); rewritten at start-up. Do not edit.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const policy = JSON.parse(process.env.${POLICY_ENV} || 'null');
if (!policy) {
  process.stderr.write('GitLab: The push could not be checked.\n');
  process.exit(1);
}
const ZERO = /^0+$/;
// A name that starts with a full object id would read as one.
const SHA_START = /^[0-9a-f]{40}/i;
// GitLab's GitRefValidator: no option-like name, nothing that reads as a full ref.
const invalidName = (name) => name.startsWith('-') || name === 'HEAD' || ['refs/heads/', 'refs/remotes/', 'refs/tags/'].some((p) => name.startsWith(p));

function matcher(pattern) {
  if (!pattern.includes('*')) return (ref) => ref === pattern;
  const body = pattern.split('*').map((s) => s.replace(/[.*+?^$\{\}()|[\]\\/-]/g, '\\$&')).join('.*?');
  const re = new RegExp('^' + body + '$', 's');
  return (ref) => re.test(ref);
}
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
function inProtectedBranch(sha) {
  const out = git(['for-each-ref', '--contains=' + sha, '--format=%(refname)', 'refs/heads/']).out;
  return out.split('\n').filter((l) => l.startsWith('refs/heads/')).some((l) => branches.some((r) => r.m(l.slice(11))));
}

function checkBranch(name, oldSha, newSha) {
  const creation = ZERO.test(oldSha);
  const deletion = ZERO.test(newSha);
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
  const creation = ZERO.test(oldSha);
  const deletion = ZERO.test(newSha);
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

for (const line of readFileSync(0, 'utf8').split('\n')) {
  const [oldSha, newSha, ref] = line.trim().split(' ');
  if (!ref) continue;
  let message = null;
  if (ref.startsWith('refs/heads/')) message = checkBranch(ref.slice(11), oldSha, newSha);
  else if (ref.startsWith('refs/tags/')) message = checkTag(ref.slice(10), oldSha, newSha);
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
    const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    await writeFile(tmp, content, { mode });
    await rename(tmp, path);
  }
  await chmod(path, mode);
}

const installed = new Map<string, Promise<string>>();

/** Writes the hooks directory once per process; returns it (for core.hooksPath). */
export function installPushHooks(dataDir: string): Promise<string> {
  const dir = join(dataDir, 'git-hooks');
  let pending = installed.get(dir);
  if (!pending) {
    pending = (async () => {
      await mkdir(dir, { recursive: true });
      await writeIfChanged(join(dir, 'pre-receive.mjs'), HOOK_SCRIPT, 0o644);
      await writeIfChanged(join(dir, 'pre-receive'), HOOK_WRAPPER, 0o755);
      return dir;
    })();
    pending.catch(() => installed.delete(dir));
    installed.set(dir, pending);
  }
  return pending;
}

/** The environment that makes git http-backend's receive-pack run the hook with `policy`. */
export function pushHookEnv(hooksDir: string, policy: PushPolicy): Record<string, string> {
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'core.hooksPath',
    GIT_CONFIG_VALUE_0: hooksDir,
    [POLICY_ENV]: JSON.stringify(policy),
    [NODE_ENV_VAR]: process.execPath,
  };
}
