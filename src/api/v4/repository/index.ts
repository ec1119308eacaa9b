// The repository API: branches, tags, files, commits, compare and tree under /projects/:id/repository.
import type { FastifyInstance } from 'fastify';
import { registerArchiveRoutes } from './archive.js';
import { registerBlobRoutes } from './blobs.js';
import { registerBranchRoutes } from './branches.js';
import { registerCommitChangeRoutes } from './commit-changes.js';
import { registerCommitCommentRoutes } from './commit-comments.js';
import { registerCommitRoutes } from './commits.js';
import { registerCompareRoutes } from './compare.js';
import { registerFileRoutes } from './files.js';
import { registerTagRoutes } from './tags.js';
import { registerTreeRoutes } from './tree.js';

export function registerRepositoryRoutes(app: FastifyInstance): void {
  registerArchiveRoutes(app);
  registerBlobRoutes(app);
  registerBranchRoutes(app);
  registerCommitChangeRoutes(app);
  registerCommitCommentRoutes(app);
  registerCommitRoutes(app);
  registerCompareRoutes(app);
  registerFileRoutes(app);
  registerTagRoutes(app);
  registerTreeRoutes(app);
}
