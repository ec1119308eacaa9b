// Merge requests (spec document 2): mounts the route groups of this folder.
import type { FastifyInstance } from 'fastify';
import { reconcileMerges } from '../../../services/merge-requests/merge.js';
import { registerMergeRequestCrudRoutes } from './crud-routes.js';
import { registerMergeRequestDiffRoutes } from './diff-routes.js';
import { registerMergeRequestExtraRoutes } from './extra-routes.js';
import { registerMergeRequestNoteRoutes } from './note-routes.js';
import { registerMergeRequestListRoutes } from './list-routes.js';
import { registerMergeRequestMergeRoutes } from './merge-routes.js';
import { registerMergeRequestTimeRoutes } from './time-routes.js';

export function registerMergeRequestRoutes(app: FastifyInstance): void {
  registerMergeRequestListRoutes(app);
  registerMergeRequestCrudRoutes(app);
  registerMergeRequestMergeRoutes(app);
  registerMergeRequestDiffRoutes(app);
  registerMergeRequestExtraRoutes(app);
  registerMergeRequestNoteRoutes(app);
  registerMergeRequestTimeRoutes(app);
  // Start-up reconciliation of merges interrupted between the ref move and the database record.
  app.addHook('onReady', async function reconcileInterruptedMerges() {
    const fixed = await reconcileMerges(app.lw);
    if (fixed) app.lw.log.warn({ fixed }, 'reconciled interrupted merges');
  });
}
