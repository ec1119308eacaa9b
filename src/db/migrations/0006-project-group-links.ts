// Projects shared with groups (GitLab's project_group_links): members of the group, inherited
// ones included, get the lower of the link's level and their own on the project.
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const projectGroupLinks: LabwrightMigration = {
  name: '0006-project-group-links',
  async up(ctx) {
    await createTable(ctx, 'project_group_links')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('group_id', 'integer', (c) => c.notNull())
      .addColumn('group_access', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'project_group_links_pair', 'project_group_links', 'project_id, group_id');
    // Lists start from the group side (/groups/:id/projects/shared, membership conditions).
    await index(ctx, 'project_group_links_group', 'project_group_links', 'group_id');
  },
};
