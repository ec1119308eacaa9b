// Project statistics beyond the repository: the wiki repository's size and the sum of the
// project's snippet repositories (each snippet keeps its own), measured after each change.
import type { LabwrightMigration } from './helpers.js';

export const storageSizes: LabwrightMigration = {
  name: '0030-storage-sizes',
  async up(ctx) {
    await ctx.db.schema.alterTable('projects').addColumn('wiki_size', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await ctx.db.schema.alterTable('projects').addColumn('snippets_size', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await ctx.db.schema.alterTable('snippets').addColumn('repository_size', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};
