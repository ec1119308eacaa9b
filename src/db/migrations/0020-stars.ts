// Stars (GitLab's users_star_projects): who starred which project, and the project's star count
// kept beside it (GitLab's projects.star_count).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const stars: LabwrightMigration = {
  name: '0020-stars',
  async up(ctx) {
    await createTable(ctx, 'users_star_projects')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'users_star_projects_user_project', 'users_star_projects', 'user_id, project_id');
    await index(ctx, 'users_star_projects_project', 'users_star_projects', 'project_id, id');
    await ctx.db.schema.alterTable('projects').addColumn('star_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await notifyChanges(ctx, 'users_star_projects');
  },
};
