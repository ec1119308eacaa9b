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
    // The names deployments of existing projects used, those that are already their own slug first,
    // so that they keep it when another name would make the same slug.
    const used = (await ctx.db
      .selectFrom('deployments')
      .innerJoin('projects', 'projects.id', 'deployments.project_id')
      .select(['deployments.project_id as project_id', 'deployments.environment as environment'])
      .select((eb) => eb.fn.min('deployments.created_at').as('first'))
      .groupBy(['deployments.project_id', 'deployments.environment'])
      .execute()) as Array<{ project_id: number; environment: string; first: string }>;
    const selfSlug = (name: string) => environmentSlug(name) === name;
    used.sort((a, b) => a.project_id - b.project_id || Number(selfSlug(b.environment)) - Number(selfSlug(a.environment)) || (a.environment < b.environment ? -1 : 1));
    const slugs = new Set<string>();
    const rows = used.map((u) => {
      let slug = environmentSlug(u.environment);
      // Two old names with one slug: the later one gets the slug of its name and a counter.
      for (let n = 2; slugs.has(`${u.project_id}/${slug}`); n++) slug = environmentSlug(`${u.environment}#${n}`);
      slugs.add(`${u.project_id}/${slug}`);
      return { project_id: u.project_id, name: u.environment, slug, tier: environmentTier(u.environment), state: 'available', auto_stop_setting: 'always', created_at: u.first, updated_at: u.first };
    });
    for (let i = 0; i < rows.length; i += 500) await ctx.db.insertInto('environments').values(rows.slice(i, i + 500)).execute();
    await notifyChanges(ctx, 'environments');
  },
};
