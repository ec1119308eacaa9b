// CI/CD variables (GitLab's ci_variables, ci_group_variables, ci_instance_variables) in one table:
// a key is unique per owner and environment scope.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const ciVariables: LabwrightMigration = {
  name: '0023-ci-variables',
  async up(ctx) {
    await createTable(ctx, 'ci_variables')
      .addColumn('source_type', 'text', (c) => c.notNull())
      .addColumn('source_id', 'integer', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('encrypted_value', 'text', (c) => c.notNull())
      .addColumn('variable_type', 'text', (c) => c.notNull().defaultTo('env_var'))
      .addColumn('protected', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('masked', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('hidden', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('raw', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('environment_scope', 'text', (c) => c.notNull().defaultTo('*'))
      .addColumn('description', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'ci_variables_owner_key_scope', 'ci_variables', 'source_type, source_id, key, environment_scope');
    await notifyChanges(ctx, 'ci_variables');
  },
};
