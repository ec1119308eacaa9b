// To-do items (GitLab's todos table): one per user, target and reason (assigned, mentioned, ...),
// pending until done. Targets here are issues and merge requests of a project.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const todos: LabwrightMigration = {
  name: '0031-todos',
  async up(ctx) {
    await createTable(ctx, 'todos')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('target_type', 'text', (c) => c.notNull())
      .addColumn('target_id', 'integer', (c) => c.notNull())
      .addColumn('author_id', 'integer', (c) => c.notNull())
      .addColumn('action', 'integer', (c) => c.notNull())
      .addColumn('note_id', 'integer')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('resolved_by_action', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'todos_user_state', 'todos', 'user_id, state, id');
    await index(ctx, 'todos_target', 'todos', 'target_id, target_type, user_id');
    await index(ctx, 'todos_project', 'todos', 'project_id');
    await index(ctx, 'todos_author', 'todos', 'author_id');
    await notifyChanges(ctx, 'todos');
  },
};
