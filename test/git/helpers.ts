/** Shared fixtures for the git storage tests: temp dirs, repositories, a git runner. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitRepository, initBareRepository, type Identity } from '../../src/git/repository.js';

const tempDirs: string[] = [];

export function makeTempDir(prefix = 'labwright-git-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function cleanupTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Environment for git commands run by the tests themselves (clients, fsck...). */
export function testGitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Test Client',
    GIT_AUTHOR_EMAIL: 'client@example.com',
    GIT_COMMITTER_NAME: 'Test Client',
    GIT_COMMITTER_EMAIL: 'client@example.com',
    LC_ALL: 'C',
    ...extra,
  };
}

/** Runs git synchronously in `cwd` and returns trimmed stdout. */
export function git(cwd: string, args: string[], extraEnv: Record<string, string> = {}): string {
  return execFileSync('git', args, { cwd, env: testGitEnv(extraEnv), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export const alice: Identity = { name: 'Alice Example', email: 'alice@example.com', date: '2024-01-02T03:04:05+01:00' };
export const bob: Identity = { name: 'Bob Example', email: 'bob@example.com', date: '2024-02-03T04:05:06-05:00' };

export async function newRepo(defaultBranch = 'main'): Promise<{ dir: string; path: string; repo: GitRepository }> {
  const dir = makeTempDir();
  const path = join(dir, 'group', 'project.git');
  await initBareRepository(path, { defaultBranch });
  return { dir, path, repo: new GitRepository(path) };
}

/** Commits `files` (path → content) on `branch`, creating or updating them; returns the new sha. */
export async function commit(repo: GitRepository, branch: string, files: Record<string, string | Buffer | null>, message = 'change', author: Identity = alice): Promise<string> {
  const parent = await repo.branchSha(branch);
  const actions = [];
  for (const [file_path, content] of Object.entries(files)) {
    if (content === null) {
      actions.push({ action: 'delete' as const, file_path });
      continue;
    }
    const exists = parent ? (await repo.readBlob(parent, file_path)) !== null : false;
    actions.push({ action: exists ? ('update' as const) : ('create' as const), file_path, content: Buffer.from(content) });
  }
  return repo.commitFiles({ branch, startSha: parent, expectedOldSha: parent, message, author, actions });
}
