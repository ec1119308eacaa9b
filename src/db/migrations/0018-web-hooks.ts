// Project webhooks (GitLab's web_hooks of type ProjectHook) and their delivery log (web_hook_logs).
// The URL, the secret token, URL variables and custom headers may carry credentials: they are kept
// encrypted with a key derived from the instance secret (src/services/webhooks/crypto.ts).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const webHooks: LabwrightMigration = {
  name: '0018-web-hooks',
  async up(ctx) {
    await createTable(ctx, 'web_hooks')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('encrypted_url', 'text', (c) => c.notNull())
      // The URL with its variables masked as {name}: what the API shows.
      .addColumn('masked_url', 'text', (c) => c.notNull())
      .addColumn('encrypted_token', 'text')
      .addColumn('encrypted_url_variables', 'text')
      .addColumn('encrypted_custom_headers', 'text')
      .addColumn('name', 'text')
      .addColumn('description', 'text')
      // JSON object of the event flags ({"push_events":true,…}).
      .addColumn('events', 'text', (c) => c.notNull())
      .addColumn('push_events_branch_filter', 'text')
      .addColumn('branch_filter_strategy', 'text', (c) => c.notNull().defaultTo('wildcard'))
      .addColumn('enable_ssl_verification', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('custom_webhook_template', 'text')
      .addColumn('recent_failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('backoff_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('disabled_until', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'web_hooks_project', 'web_hooks', 'project_id, id');

    await createTable(ctx, 'web_hook_logs')
      .addColumn('web_hook_id', 'integer', (c) => c.notNull())
      .addColumn('trigger', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      // sha256 of the URL the request went to: a resend is refused once the hook's URL changed.
      .addColumn('url_hash', 'text', (c) => c.notNull())
      .addColumn('request_headers', 'text', (c) => c.notNull())
      .addColumn('request_data', 'text', (c) => c.notNull())
      .addColumn('response_headers', 'text', (c) => c.notNull())
      .addColumn('response_body', 'text', (c) => c.notNull())
      .addColumn('response_status', 'text', (c) => c.notNull())
      .addColumn('execution_duration', 'real', (c) => c.notNull())
      .addColumn('internal_error_message', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'web_hook_logs_hook', 'web_hook_logs', 'web_hook_id, id');
    await index(ctx, 'web_hook_logs_created', 'web_hook_logs', 'created_at');

    for (const table of ['web_hooks', 'web_hook_logs']) await notifyChanges(ctx, table);
  },
};
