// Wiki pages' metadata (GitLab's wiki_page_meta): the pages themselves are files in the project's
// wiki repository (<repos>/<id>.wiki.git); a meta row gives a page a stable id (the API's
// `wiki_page_meta_id`, the target of its events) that survives renames. `canonical_slug` is the
// page's current slug, null once another page took it over.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const wikiPages: LabwrightMigration = {
  name: '0029-wiki-pages',
  async up(ctx) {
    await createTable(ctx, 'wiki_page_meta')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('canonical_slug', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'wiki_page_meta_slug', 'wiki_page_meta', 'project_id, canonical_slug');
    await notifyChanges(ctx, 'wiki_page_meta');
  },
};
