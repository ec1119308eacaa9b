// Subscriptions to merge requests (GitLab's subscriptions table): an explicit choice of a user,
// which wins over being a participant.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const subscriptions: LabwrightMigration = {
  name: '0015-subscriptions',
  async up(ctx) {
    await createTable(ctx, 'subscriptions')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('subscribable_type', 'text', (c) => c.notNull())
      .addColumn('subscribable_id', 'integer', (c) => c.notNull())
      .addColumn('subscribed', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'subscriptions_unique', 'subscriptions', 'subscribable_id, subscribable_type, user_id');
    await notifyChanges(ctx, 'subscriptions');
  },
};
