// Deploy tokens (GitLab's deploy_tokens with project_deploy_tokens / group_deploy_tokens folded into
// one owner column each).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const deployTokens: LabwrightMigration = {
  name: '0024-deploy-tokens',
  async up(ctx) {
    await createTable(ctx, 'deploy_tokens')
      .addColumn('deploy_token_type', 'text', (c) => c.notNull())
      .addColumn('project_id', 'integer')
      .addColumn('group_id', 'integer')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('username', 'text')
      .addColumn('token_digest', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('creator_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'deploy_tokens_token_digest', 'deploy_tokens', 'token_digest');
    await index(ctx, 'deploy_tokens_project', 'deploy_tokens', 'project_id, id');
    await index(ctx, 'deploy_tokens_group', 'deploy_tokens', 'group_id, id');
    await notifyChanges(ctx, 'deploy_tokens');
  },
};
