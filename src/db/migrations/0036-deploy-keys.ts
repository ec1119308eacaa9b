// Deploy keys (GitLab's keys rows of type DeployKey, and deploy_keys_projects): SSH public keys
// that give a project's repository read, or read and write, access. GitLab keeps them in the
// `keys` table beside users' SSH keys; here they have a table of their own (their owner may be
// gone, and they have `public`), and a fingerprint is unique across both tables, which the
// services check under one lock (services/groups/ssh-keys.ts).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const deployKeys: LabwrightMigration = {
  name: '0036-deploy-keys',
  async up(ctx) {
    await createTable(ctx, 'deploy_keys')
      .addColumn('user_id', 'integer')
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('key_type', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('fingerprint_sha256', 'text', (c) => c.notNull())
      .addColumn('usage_type', 'text', (c) => c.notNull().defaultTo('auth_and_signing'))
      .addColumn('public', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('expires_at', 'text')
      .addColumn('last_used_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'deploy_keys_fingerprint_sha256', 'deploy_keys', 'fingerprint_sha256');
    await index(ctx, 'deploy_keys_public', 'deploy_keys', 'public, id');
    await index(ctx, 'deploy_keys_user', 'deploy_keys', 'user_id');
    await notifyChanges(ctx, 'deploy_keys');

    await createTable(ctx, 'deploy_keys_projects')
      .addColumn('deploy_key_id', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('can_push', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'deploy_keys_projects_project_key', 'deploy_keys_projects', 'project_id, deploy_key_id');
    await index(ctx, 'deploy_keys_projects_key', 'deploy_keys_projects', 'deploy_key_id, id');
    await notifyChanges(ctx, 'deploy_keys_projects');
  },
};
