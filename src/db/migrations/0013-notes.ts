// Notes (comments) and discussions on merge requests: GitLab's notes table, with the counts a
// merge request shows kept on its row so lists never count per item.
import { sql } from 'kysely';
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const notes: LabwrightMigration = {
  name: '0013-notes',
  async up(ctx) {
    await createTable(ctx, 'notes')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('noteable_type', 'text', (c) => c.notNull())
      .addColumn('noteable_id', 'integer', (c) => c.notNull())
      .addColumn('author_id', 'integer', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      // 40 hexadecimal characters; the notes of one thread share it.
      .addColumn('discussion_id', 'text', (c) => c.notNull())
      // null (a comment), 'DiscussionNote' (a note of a thread), 'DiffNote' (of a thread on the diff).
      .addColumn('type', 'text')
      .addColumn('system', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('internal', 'integer', (c) => c.notNull().defaultTo(0))
      // A thread on a line of the diff (DiffNote): GitLab's position as JSON, its line code, and
      // the commit it was written on when one was named.
      .addColumn('position', 'text')
      .addColumn('line_code', 'text')
      .addColumn('commit_id', 'text')
      .addColumn('resolved_at', 'text')
      .addColumn('resolved_by_id', 'integer')
      .addColumn('updated_by_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'notes_noteable', 'notes', 'noteable_id, noteable_type, created_at, id');
    await index(ctx, 'notes_discussion', 'notes', 'noteable_id, noteable_type, discussion_id');
    await index(ctx, 'notes_project', 'notes', 'project_id');
    // Comments on commits (noteable_type 'Commit', noteable_id 0) are found by their commit.
    await index(ctx, 'notes_project_commit', 'notes', 'project_id, commit_id');
    await index(ctx, 'notes_author', 'notes', 'author_id');
    // `user_notes_count`, and the notes still to be resolved (`blocking_discussions_resolved`,
    // the discussions merge check), kept by every note write in its transaction.
    await sql.raw('alter table merge_requests add column user_notes_count integer not null default 0').execute(ctx.db);
    await sql.raw('alter table merge_requests add column unresolved_notes_count integer not null default 0').execute(ctx.db);
    await notifyChanges(ctx, 'notes');
  },
};
