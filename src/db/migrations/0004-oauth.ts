// OAuth provider tables beyond the foundation's: device grants, web sessions, guess counters.
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const oauth: LabwrightMigration = {
  name: '0004-oauth',
  async up(ctx) {
    await createTable(ctx, 'oauth_device_grants')
      .addColumn('application_id', 'integer', (c) => c.notNull())
      .addColumn('device_code_digest', 'text', (c) => c.notNull())
      .addColumn('user_code_digest', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('expires_in', 'integer', (c) => c.notNull())
      .addColumn('interval', 'integer', (c) => c.notNull())
      .addColumn('last_polling_at', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('resource_owner_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'text')
      .execute();
    await uniqueIndex(ctx, 'oauth_device_grants_device_code', 'oauth_device_grants', 'device_code_digest');
    await uniqueIndex(ctx, 'oauth_device_grants_user_code', 'oauth_device_grants', 'user_code_digest');
    await index(ctx, 'oauth_device_grants_created', 'oauth_device_grants', 'created_at');
    await index(ctx, 'oauth_access_grants_created', 'oauth_access_grants', 'created_at');

    await createTable(ctx, 'web_sessions')
      .addColumn('session_digest', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'web_sessions_digest', 'web_sessions', 'session_digest');
    await index(ctx, 'web_sessions_user', 'web_sessions', 'user_id');

    await createTable(ctx, 'web_throttles')
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('window_start', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'web_throttles_key', 'web_throttles', 'key');
  },
};
