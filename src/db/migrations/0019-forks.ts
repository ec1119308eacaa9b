// Forks (GitLab's fork_network_members, kept on the project row): the project a fork was made from,
// the root of its fork network (merge requests may go between any two projects of one network),
// the number of direct forks (GitLab's cached forks_count) and mr_default_target_self.
import { index, type LabwrightMigration } from './helpers.js';

export const forks: LabwrightMigration = {
  name: '0019-forks',
  async up(ctx) {
    const add = (column: string, type: 'integer', build?: (c: any) => any) => // eslint-disable-line @typescript-eslint/no-explicit-any
      ctx.db.schema.alterTable('projects').addColumn(column, type, build ?? ((c) => c)).execute();
    await add('forked_from_project_id', 'integer');
    await add('fork_network_root_id', 'integer');
    await add('forks_count', 'integer', (c) => c.notNull().defaultTo(0));
    await add('mr_default_target_self', 'integer', (c) => c.notNull().defaultTo(0));
    await index(ctx, 'projects_forked_from', 'projects', 'forked_from_project_id, id');
  },
};
