// Migration 0025 turns the environment names deployments used into environments of their projects,
// with GitLab's slugs and guessed tiers, and what came before it keeps working.
import { afterAll, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { environmentSlug } from '../../src/services/deployments.js';
import { migrateBefore } from '../helpers/migrations.js';
import { createFreshStorage, type FreshStorage } from '../helpers/server.js';

let storage: FreshStorage;
let database: Database;

afterAll(async () => {
  await database?.close();
  await storage?.destroy();
});

it('backfills environments from deployments', async () => {
  storage = await createFreshStorage('labwright-env-migration-');
  database = createDatabase({ databaseUrl: storage.databaseUrl || null, dataDir: storage.dataDir, readCache: false });
  await migrateBefore(database, '0025-environments');
  const at = '2024-01-01T00:00:00.000Z';
  for (const id of [1, 2]) {
    await database.db.insertInto('projects').values({ id, name: `p${id}`, path: `p${id}`, namespace_id: 1, last_activity_at: at, created_at: at, updated_at: at } as never).execute();
  }
  const row = (projectId: number, environment: string, iid: number, at: string) => ({
    iid, project_id: projectId, environment, ref: 'main', sha: 'a'.repeat(40), tag: 0, status: 'success', user_id: null, finished_at: at, created_at: at, updated_at: at,
  });
  await database.db
    .insertInto('deployments')
    .values([row(1, 'production', 1, '2024-01-02T00:00:00.000Z'), row(1, 'production', 2, '2024-01-03T00:00:00.000Z'), row(1, 'Review/App', 3, '2024-01-04T00:00:00.000Z'), row(2, 'production', 1, '2024-01-05T00:00:00.000Z'), row(3, 'gone', 1, '2024-01-06T00:00:00.000Z'), row(1, 'foo-', 4, '2024-01-07T00:00:00.000Z'), row(1, 'foo', 5, '2024-01-08T00:00:00.000Z')])
    .execute();
  await migrateToLatest(database);
  const envs = await database.db.selectFrom('environments').select(['project_id', 'name', 'slug', 'tier', 'state', 'created_at']).orderBy('project_id').orderBy('name').execute();
  // A deleted project's names make nothing; 'foo' keeps its slug, 'foo-' (whose slug is also foo) gets another.
  const foo = envs.filter((e) => e.name.startsWith('foo'));
  expect(foo.map((e) => [e.name, e.slug === 'foo'])).toEqual([['foo', true], ['foo-', false]]);
  expect(foo[1]!.slug).toMatch(/^foo-2-[a-z0-9]{6}$/);
  expect(envs.filter((e) => !e.name.startsWith('foo'))).toEqual([
    { project_id: 1, name: 'Review/App', slug: environmentSlug('Review/App'), tier: 'development', state: 'available', created_at: '2024-01-04T00:00:00.000Z' },
    { project_id: 1, name: 'production', slug: 'production', tier: 'production', state: 'available', created_at: '2024-01-02T00:00:00.000Z' },
    { project_id: 2, name: 'production', slug: 'production', tier: 'production', state: 'available', created_at: '2024-01-05T00:00:00.000Z' },
  ]);
});

it("makes GitLab's slugs", () => {
  expect(environmentSlug('production')).toBe('production');
  expect(environmentSlug('foo-')).toBe('foo');
  expect(environmentSlug('PRODUCTION')).toMatch(/^production-[a-z0-9]{6}$/);
  expect(environmentSlug('review/1-foo')).toMatch(/^review-1-foo-[a-z0-9]{6}$/);
  expect(environmentSlug('1-foo')).toMatch(/^env-1-foo-[a-z0-9]{6}$/);
  expect(environmentSlug('foo--bar')).toMatch(/^foo-bar-[a-z0-9]{6}$/);
  expect(environmentSlug('staging-12345678901234567')).toMatch(/^staging-123456789-[a-z0-9]{6}$/);
  expect(environmentSlug('')).toMatch(/^env-[a-z0-9]{6}$/);
});
