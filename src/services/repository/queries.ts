// Repository queries the git layer does not offer (yet): commit stats, merged branches, and the
// tree listing's keyset position. Each is one git spawn.
import { DIFF_TREE_ARGS, parseDiffTree } from '../../git/diff.js';
import { runGit } from '../../git/exec.js';
import type { Diff, GitRepository } from '../../git/index.js';
import type { CommitStats } from '../../api/v4/entities/commit.js';

/** Lines added and removed by a commit against its first parent (or the empty tree for a root). */
export async function commitStats(repo: GitRepository, sha: string, parent: string | undefined): Promise<CommitStats> {
  const args = ['diff-tree', '-r', '-z', '--numstat', '-M', '--no-ext-diff', '--no-textconv'];
  if (parent) args.push(parent, sha);
  else args.push('--root', sha);
  const res = await runGit(args, { gitDir: repo.path });
  let additions = 0;
  let deletions = 0;
  // With -z each record is "<added>\t<deleted>\t<path>\0"; binary files show "-".
  for (const record of res.stdout.toString('utf8').split('\0')) {
    const m = /^(\d+|-)\t(\d+|-)\t/.exec(record.replace(/^\n/, ''));
    if (!m) continue;
    if (m[1] !== '-') additions += Number(m[1]);
    if (m[2] !== '-') deletions += Number(m[2]);
  }
  return { additions, deletions, total: additions + deletions };
}

const NUMSTAT_RE = /^(\d+|-)\t(\d+|-)\t/;

/**
 * Stats of many commits (each against its first parent) in one `git diff-tree --stdin` spawn, for
 * lists: one spawn per commit made `?with_stats=true&per_page=100` start 100 processes.
 */
export async function commitStatsBatch(repo: GitRepository, commits: Array<{ id: string; parent_ids: string[] }>): Promise<Map<string, CommitStats>> {
  const out = new Map<string, CommitStats>();
  for (const c of commits) out.set(c.id, { additions: 0, deletions: 0, total: 0 });
  if (commits.length === 0) return out;
  const input = commits.map((c) => (c.parent_ids[0] ? `${c.id} ${c.parent_ids[0]}` : c.id)).join('\n') + '\n';
  const res = await runGit(['diff-tree', '--stdin', '--root', '-r', '-z', '--numstat', '-M', '--no-ext-diff', '--no-textconv'], { gitDir: repo.path, input });
  // Tokens are NUL-separated: a commit id alone (the header of the next commit's records), a
  // numstat record "<added>\t<deleted>\t<path>", or, for a rename ("<a>\t<d>\t"), two paths.
  let current: CommitStats | undefined;
  let skipPaths = 0;
  for (const raw of res.stdout.toString('utf8').split('\0')) {
    const token = raw.replace(/^\n/, '');
    if (skipPaths > 0) {
      skipPaths--;
      continue;
    }
    const m = NUMSTAT_RE.exec(token);
    if (m && current) {
      if (m[1] !== '-') current.additions += Number(m[1]);
      if (m[2] !== '-') current.deletions += Number(m[2]);
      current.total = current.additions + current.deletions;
      if (token.length === m[0].length) skipPaths = 2;
      continue;
    }
    if (out.has(token)) current = out.get(token);
  }
  return out;
}

/** Names of branches whose tips are reachable from `target` (target itself excluded), in one spawn. */
export async function mergedBranches(repo: GitRepository, target: string | null): Promise<Set<string>> {
  if (!target) return new Set();
  const res = await runGit(
    ['for-each-ref', `--merged=refs/heads/${target}`, '--format=%(refname)', 'refs/heads/'],
    { gitDir: repo.path, okCodes: [0, 128, 129] },
  );
  if (res.code !== 0) return new Set();
  const names = res.stdout
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((r) => r.slice('refs/heads/'.length))
    .filter((n) => n !== target);
  return new Set(names);
}

/** A commit's changes against its first parent (against nothing for a root commit). */
export async function commitDiff(repo: GitRepository, sha: string, parent: string | undefined): Promise<Diff[]> {
  const args = [...DIFF_TREE_ARGS, '--no-commit-id'];
  if (parent) args.push(parent, sha);
  else args.push('--root', sha);
  const res = await runGit(args, { gitDir: repo.path });
  return parseDiffTree(res.stdout);
}
