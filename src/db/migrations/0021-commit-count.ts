// Project statistics: the number of commits on the default branch (GitLab's
// project_statistics.commit_count), counted again when that branch moves.
import type { LabwrightMigration } from './helpers.js';

export const commitCount: LabwrightMigration = {
  name: '0021-commit-count',
  async up(ctx) {
    await ctx.db.schema.alterTable('projects').addColumn('commit_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};
