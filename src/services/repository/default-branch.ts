// The project's default branch follows the repository: when it is unset (empty repository) or names
// a branch that no longer exists, the first branch that appears becomes the default, and the bare
// repository's HEAD follows so clones check it out.
import type { AppContext } from '../../context.js';
import type { GitRepository } from '../../git/index.js';
import { protectDefaultBranch } from './protected-refs-write.js';

/** Branches preferred when a push brings several at once. */
const PREFERRED = ['main', 'master'];

export function pickDefaultBranch(candidates: string[]): string | null {
  for (const name of PREFERRED) if (candidates.includes(name)) return name;
  return candidates[0] ?? null;
}

/**
 * Sets `default_branch` (and HEAD) to one of `candidates` when the current default is missing.
 * The update is conditional on the value read, so a concurrent change by someone else wins.
 * Returns the default branch in force afterwards.
 */
export async function adoptDefaultBranch(
  app: AppContext,
  projectId: number,
  repo: GitRepository,
  candidates: string[],
): Promise<string | null> {
  const row = await app.db.selectFrom('projects').select('default_branch').where('id', '=', projectId).executeTakeFirst();
  if (!row) return null;
  const current = row.default_branch;
  if (current !== null && (await repo.branchSha(current)) !== null) {
    if ((await repo.headBranch()) !== current) await repo.setHead(current);
    return current;
  }
  const existing: string[] = [];
  for (const name of candidates) if ((await repo.branchSha(name)) !== null) existing.push(name);
  let chosen = pickDefaultBranch(existing);
  if (chosen === null) {
    // Nothing usable among the candidates: fall back to any branch the repository has.
    chosen = pickDefaultBranch((await repo.listBranches()).map((b) => b.name));
  }
  if (chosen === null) return current;
  await repo.setHead(chosen);
  const result = await app.db
    .updateTable('projects')
    .set({ default_branch: chosen, updated_at: new Date().toISOString() })
    .where('id', '=', projectId)
    .where((eb) => (current === null ? eb('default_branch', 'is', null) : eb('default_branch', '=', current)))
    .executeTakeFirst();
  // The default branch appeared: protect it as the namespace says (GitLab's after_create_default_branch).
  if (Number(result.numUpdatedRows) > 0) await protectDefaultBranch(app, projectId, chosen);
  return chosen;
}

/** The branch a ref-less read falls back to: the project's default, else HEAD's branch. */
export async function defaultRef(repo: GitRepository, defaultBranch: string | null): Promise<string | null> {
  if (defaultBranch) return defaultBranch;
  return repo.headBranch();
}
