// Resource events of issues and merge requests (GitLab's resource_label_events,
// resource_state_events and resource_milestone_events in one table, by kind): which labels and
// milestones were added or removed and which states taken, by whom and when.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const resourceEvents: LabwrightMigration = {
  name: '0028-resource-events',
  async up(ctx) {
    await createTable(ctx, 'resource_events')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('resource_type', 'text', (c) => c.notNull())
      .addColumn('resource_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer')
      .addColumn('action', 'text')
      .addColumn('label_id', 'integer')
      .addColumn('milestone_id', 'integer')
      .addColumn('state', 'text')
      .addColumn('source_commit', 'text')
      .addColumn('source_merge_request_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'resource_events_resource', 'resource_events', 'resource_id, resource_type, kind, id');
    await notifyChanges(ctx, 'resource_events');
  },
};
