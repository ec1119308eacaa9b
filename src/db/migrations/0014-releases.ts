// Releases: a tag's release notes, asset links and milestones (GitLab's releases, release_links
// and milestone_releases tables).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const releases: LabwrightMigration = {
  name: '0014-releases',
  async up(ctx) {
    await createTable(ctx, 'releases')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('description', 'text')
      .addColumn('author_id', 'integer')
      // The commit the tag pointed to when the release was made.
      .addColumn('sha', 'text')
      .addColumn('released_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'releases_project_tag', 'releases', 'project_id, tag');
    await index(ctx, 'releases_project_released', 'releases', 'project_id, released_at');

    await createTable(ctx, 'release_links')
      .addColumn('release_id', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('filepath', 'text')
      .addColumn('link_type', 'text', (c) => c.notNull().defaultTo('other'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'release_links_name', 'release_links', 'release_id, name');
    await uniqueIndex(ctx, 'release_links_url', 'release_links', 'release_id, url');
    await uniqueIndex(ctx, 'release_links_filepath', 'release_links', 'release_id, filepath');

    await createTable(ctx, 'release_milestones')
      .addColumn('release_id', 'integer', (c) => c.notNull())
      .addColumn('milestone_id', 'integer', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'release_milestones_unique', 'release_milestones', 'release_id, milestone_id');
    await index(ctx, 'release_milestones_milestone', 'release_milestones', 'milestone_id');

    for (const table of ['releases', 'release_links', 'release_milestones']) await notifyChanges(ctx, table);
  },
};
