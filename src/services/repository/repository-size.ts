// The repository size kept on the project row (group statistics and namespaces add it up),
// measured again after every change of refs: creation measured it once, and pushes, commits and
// merges grow it (before, it stayed at its size when created).
import { GitRepository } from '../../git/repository.js';
import { repoPathFor } from '../projects/lookup.js';
import { refChangeListeners } from './ref-hooks.js';

let registered = false;

export function registerRepositorySize(): void {
  if (registered) return;
  registered = true;
  refChangeListeners.push(async function measureRepository(app, projectId) {
    const size = await new GitRepository(repoPathFor(app, projectId)).repositorySize();
    await app.db.updateTable('projects').set({ repository_size: size }).where('id', '=', projectId).execute();
  });
}
