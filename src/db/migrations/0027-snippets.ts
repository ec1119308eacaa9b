// Snippets (GitLab's snippets table, personal and project ones): each snippet's files live in its
// own bare git repository (data/snippets/<id>.git); the row keeps its attributes and the paths of
// its files (for lists without a git call per snippet).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const snippets: LabwrightMigration = {
  name: '0027-snippets',
  async up(ctx) {
    await createTable(ctx, 'snippets')
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('project_id', 'integer')
      .addColumn('author_id', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('visibility', 'text', (c) => c.notNull())
      .addColumn('file_paths', 'text', (c) => c.notNull())
      .addColumn('default_branch', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'snippets_project', 'snippets', 'project_id, id');
    await index(ctx, 'snippets_author', 'snippets', 'author_id, id');
    await index(ctx, 'snippets_visibility', 'snippets', 'visibility, id');
    await notifyChanges(ctx, 'snippets');
  },
};
