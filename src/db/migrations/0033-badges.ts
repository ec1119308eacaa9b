// Project and group badges (GitLab's badges table: ProjectBadge and GroupBadge).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const badges: LabwrightMigration = {
  name: '0033-badges',
  async up(ctx) {
    await createTable(ctx, 'badges')
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('project_id', 'integer')
      .addColumn('group_id', 'integer')
      .addColumn('name', 'text')
      .addColumn('link_url', 'text', (c) => c.notNull())
      .addColumn('image_url', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'badges_project', 'badges', 'project_id, id');
    await index(ctx, 'badges_group', 'badges', 'group_id, id');
    await notifyChanges(ctx, 'badges');
  },
};
