// Environments as rows (GitLab's environments): until now deployments only named them. Every name
// a deployment used becomes an environment of its project, with GitLab's slug and guessed tier.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, uniqueIndex, type LabwrightMigration } from './helpers.js';
import { environmentSlug, environmentTier } from '../../services/deployments.js';

export const environments: LabwrightMigration = {
  name: '0025-environments',
  async up(ctx) {
    await createTable(ctx, 'environments')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('external_url', 'text')
      .addColumn('description', 'text')
      .addColumn('tier', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull().defaultTo('available'))
      .addColumn('auto_stop_at', 'text')
      .addColumn('auto_stop_setting', 'text', (c) => c.notNull().defaultTo('always'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'environments_project_name', 'environments', 'project_id, name');
    await uniqueIndex(ctx, 'environments_project_slug', 'environments', 'project_id, slug');
    const used = await ctx.db
      .selectFrom('deployments')
      .select(['project_id', 'environment'])
      .select((eb) => eb.fn.min('created_at').as('first'))
      .groupBy(['project_id', 'environment'])
      .orderBy('project_id')
      .orderBy('environment')
      .execute();
    const slugs = new Set<string>();
    for (const u of used as Array<{ project_id: number; environment: string; first: string }>) {
      let slug = environmentSlug(u.environment);
      // Two old names with one slug: the later one gets its id-free variant made unique by a counter.
      for (let n = 2; slugs.has(`${u.project_id}/${slug}`); n++) slug = `${environmentSlug(u.environment).slice(0, 20)}-${n}`;
      slugs.add(`${u.project_id}/${slug}`);
      await ctx.db
        .insertInto('environments')
        .values({ project_id: u.project_id, name: u.environment, slug, tier: environmentTier(u.environment), state: 'available', auto_stop_setting: 'always', created_at: u.first, updated_at: u.first })
        .execute();
    }
    await notifyChanges(ctx, 'environments');
  },
};
