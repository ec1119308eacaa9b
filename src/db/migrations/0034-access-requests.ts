// Access requests (GitLab keeps them as members with requested_at; here a table of their own, so
// that no membership query has to leave them out): a user asking to join a project or a group.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const accessRequests: LabwrightMigration = {
  name: '0034-access-requests',
  async up(ctx) {
    await createTable(ctx, 'access_requests')
      .addColumn('source_type', 'text', (c) => c.notNull())
      .addColumn('source_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('requested_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'access_requests_source_user', 'access_requests', 'source_type, source_id, user_id');
    await notifyChanges(ctx, 'access_requests');
  },
};
