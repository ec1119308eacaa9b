// To-dos of groups and projects themselves (GitLab's todos.group_id): an access request asks the
// Owners of a group or the Maintainers of a project, a failed transfer tells the requester. Such
// a to-do has a group and no project, so project_id may be null; `body` keeps a failed transfer's
// reason (GitLab keeps it in the namespace's state metadata).
import { sql } from 'kysely';
import { createTable, index, type LabwrightMigration } from './helpers.js';

const COLUMNS = 'id, user_id, project_id, target_type, target_id, author_id, action, note_id, state, resolved_by_action, created_at, updated_at';

export const todoGroups: LabwrightMigration = {
  name: '0035-todo-groups',
  async up(ctx) {
    if (ctx.dialect === 'postgres') {
      await sql.raw('alter table todos alter column project_id drop not null').execute(ctx.db);
      await sql.raw('alter table todos add column group_id integer').execute(ctx.db);
      await sql.raw('alter table todos add column body text').execute(ctx.db);
    } else {
      // SQLite cannot drop a NOT NULL: the table is made again with its rows, ids and indexes.
      await createTable(ctx, 'todos_new')
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('project_id', 'integer')
        .addColumn('group_id', 'integer')
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'integer', (c) => c.notNull())
        .addColumn('author_id', 'integer', (c) => c.notNull())
        .addColumn('action', 'integer', (c) => c.notNull())
        .addColumn('note_id', 'integer')
        .addColumn('body', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('resolved_by_action', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await sql.raw(`insert into todos_new (${COLUMNS}) select ${COLUMNS} from todos`).execute(ctx.db);
      // The counter goes on from the old table's (ids of deleted to-dos are never handed out again).
      await sql.raw("delete from sqlite_sequence where name = 'todos_new'").execute(ctx.db);
      await sql.raw("insert into sqlite_sequence (name, seq) select 'todos_new', seq from sqlite_sequence where name = 'todos'").execute(ctx.db);
      await sql.raw('drop table todos').execute(ctx.db);
      await sql.raw('alter table todos_new rename to todos').execute(ctx.db);
      await index(ctx, 'todos_user_state', 'todos', 'user_id, state, id');
      await index(ctx, 'todos_target', 'todos', 'target_id, target_type, user_id');
      await index(ctx, 'todos_project', 'todos', 'project_id');
      await index(ctx, 'todos_author', 'todos', 'author_id');
    }
    await index(ctx, 'todos_group', 'todos', 'group_id');
  },
};
