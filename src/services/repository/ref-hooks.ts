// After-the-fact notifications of branch changes, whatever moved them (git push, the files or
// commits API, branch create/delete). Other modules (merge requests) register a listener here
// instead of the repository code knowing about them. Listeners run after the ref moved; their
// failures are logged, never turned into an error for the writer whose change already happened.
import type { AppContext } from '../../context.js';
import type { RefChange } from '../../git/index.js';

export type RefChangeListener = (app: AppContext, projectId: number, changes: RefChange[], userId: number | null) => Promise<void> | void;

export const refChangeListeners: RefChangeListener[] = [];

export async function notifyRefChanges(app: AppContext, projectId: number, changes: RefChange[], userId: number | null): Promise<void> {
  if (changes.length === 0) return;
  for (const listener of refChangeListeners) {
    try {
      await listener(app, projectId, changes, userId);
    } catch (err) {
      app.log.error({ err, projectId }, 'ref change listener failed');
    }
  }
}
