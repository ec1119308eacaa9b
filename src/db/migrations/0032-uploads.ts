// Project Markdown uploads (GitLab's uploads table for FileUploader): each file is kept under
// data/uploads/<id>, found by its project, secret and name; projects count their uploads' bytes.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const uploads: LabwrightMigration = {
  name: '0032-uploads',
  async up(ctx) {
    await createTable(ctx, 'uploads')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('uploaded_by_user_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'uploads_project_secret', 'uploads', 'project_id, secret');
    await index(ctx, 'uploads_project_created', 'uploads', 'project_id, created_at');
    await ctx.db.schema.alterTable('projects').addColumn('uploads_size', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await notifyChanges(ctx, 'uploads');
  },
};
