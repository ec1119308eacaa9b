// Project statistics kept on the project row: the repository size (group statistics and
// namespaces add it up) measured again after every change of refs, whatever made it (before, only
// git pushes measured it: commits through the API and merges did not), and the number of commits
// on the default branch counted again when that branch moves.
import type { AppContext } from '../../context.js';
import type { RefChange } from '../../git/index.js';
import { GitRepository } from '../../git/repository.js';
import { repoPathFor } from '../projects/lookup.js';
import { refChangeListeners } from './ref-hooks.js';

/** The largest value the 32-bit size columns hold: a size past 2 GiB is shown as that (the statistic saturates rather than failing). */
export function storedSize(bytes: number): number {
  return Math.min(Math.max(0, Math.round(bytes)), 2147483647);
}

/** Measures a project's repository again; `changes` (when given) limit the commit count to moves of the default branch. */
export async function measureRepository(app: AppContext, projectId: number, changes?: RefChange[]): Promise<void> {
  const repo = new GitRepository(repoPathFor(app, projectId));
  const row = await app.db.selectFrom('projects').select('default_branch').where('id', '=', projectId).executeTakeFirst();
  if (!row) return;
  const branch = row.default_branch;
  const recount = branch !== null && (!changes || changes.some((c) => c.ref === `refs/heads/${branch}`));
  const size = await repo.repositorySize();
  let commits: number | undefined;
  if (recount) commits = (await repo.branchSha(branch).catch(() => null)) ? await repo.countCommits(`refs/heads/${branch}`) : 0;
  await app.db
    .updateTable('projects')
    .set({ repository_size: storedSize(size), ...(commits !== undefined ? { commit_count: commits } : {}) })
    .where('id', '=', projectId)
    .execute();
}

/** The sizes Labwright measures: the repository, the wiki repository, the project's snippet repositories, its uploads. */
export interface MeasuredSizes {
  repository: number;
  wiki: number;
  snippets: number;
  uploads: number;
}

/**
 * The storage sizes GitLab reports (project and group statistics) from the ones Labwright keeps:
 * the repositories and uploads on disk. No LFS, artifacts or packages exist here.
 */
export function storageSizes(m: MeasuredSizes) {
  return {
    storage_size: m.repository + m.wiki + m.snippets + m.uploads,
    repository_size: m.repository,
    wiki_size: m.wiki,
    lfs_objects_size: 0,
    job_artifacts_size: 0,
    pipeline_artifacts_size: 0,
    packages_size: 0,
    snippets_size: m.snippets,
    uploads_size: m.uploads,
  };
}

let registered = false;

export function registerRepositorySize(): void {
  if (registered) return;
  registered = true;
  refChangeListeners.push(async function measureAfterRefChange(app, projectId, changes) {
    await measureRepository(app, projectId, changes);
  });
}
