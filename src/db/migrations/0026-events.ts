// Contribution events (GitLab's events with push_event_payloads folded in): what people did in
// projects, for the events APIs (/events, /users/:id/events, /projects/:id/events).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const events: LabwrightMigration = {
  name: '0026-events',
  async up(ctx) {
    await createTable(ctx, 'events')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('author_id', 'integer', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target_type', 'text')
      .addColumn('target_id', 'integer')
      .addColumn('push_action', 'text')
      .addColumn('push_ref_type', 'text')
      .addColumn('push_ref', 'text')
      .addColumn('push_commit_from', 'text')
      .addColumn('push_commit_to', 'text')
      .addColumn('push_commit_title', 'text')
      .addColumn('push_commit_count', 'integer')
      .addColumn('push_ref_count', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'events_project', 'events', 'project_id, id');
    await index(ctx, 'events_author', 'events', 'author_id, id');
    await index(ctx, 'events_target', 'events', 'target_id, target_type');
    await notifyChanges(ctx, 'events');
  },
};
