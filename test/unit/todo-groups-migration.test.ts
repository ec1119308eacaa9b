// Migration 0035 lets a to-do belong to a group instead of a project (SQLite makes the table
// again): the to-dos before it keep their ids, fields and indexes, and new ids follow theirs.
import { afterAll, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { migrateBefore } from '../helpers/migrations.js';
import { createFreshStorage, type FreshStorage } from '../helpers/server.js';

let storage: FreshStorage;
let database: Database;

afterAll(async () => {
  await database?.close();
  await storage?.destroy();
});

it('keeps the existing to-dos and takes group to-dos afterwards', async () => {
  storage = await createFreshStorage('labwright-todo-migration-');
  database = createDatabase({ databaseUrl: storage.databaseUrl || null, dataDir: storage.dataDir, readCache: false });
  await migrateBefore(database, '0035-todo-groups');
  const at = '2024-01-01T00:00:00.000Z';
  const old = (id: number, userId: number) => ({ id, user_id: userId, project_id: 7, target_type: 'Issue', target_id: 3, author_id: 1, action: 2, note_id: 9, state: 'pending', resolved_by_action: null, created_at: at, updated_at: at });
  await database.db.insertInto('todos').values([old(5, 1), old(8, 2), old(12, 3)] as never).execute();
  // A deleted to-do's id is not handed out again after the table is made anew.
  await database.db.deleteFrom('todos').where('id', '=', 12).execute();
  await migrateToLatest(database);
  const rows = await database.db.selectFrom('todos').selectAll().orderBy('id').execute();
  expect(rows).toEqual([
    { ...old(5, 1), group_id: null, body: null },
    { ...old(8, 2), group_id: null, body: null },
  ]);
  const added = await database.db
    .insertInto('todos')
    .values({ user_id: 1, project_id: null, group_id: 4, target_type: 'Namespace', target_id: 4, author_id: 1, action: 20, note_id: null, body: 'why', state: 'pending', resolved_by_action: null, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  // SQLite keeps counting after the old ids (PostgreSQL's sequence never saw the explicit ones).
  if (database.dialect === 'sqlite') expect(added.id).toBe(13);
  // The list's index is still there (the to-do page reads by user, state and id).
  if (database.dialect === 'sqlite') {
    const indexes = await database.db.selectFrom('sqlite_master' as never).select('name' as never).where('tbl_name' as never, '=', 'todos' as never).where('type' as never, '=', 'index' as never).execute();
    expect((indexes as Array<{ name: string }>).map((i) => i.name).sort()).toEqual(['todos_author', 'todos_group', 'todos_project', 'todos_target', 'todos_user_state']);
  }
});
