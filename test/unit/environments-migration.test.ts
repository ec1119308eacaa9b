// Migration 0025 turns the environment names deployments used into environments of their projects,
// with GitLab's slugs and guessed tiers, and what came before it keeps working.
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest, migrations } from '../../src/db/migrations/index.js';
import { environmentSlug } from '../../src/services/deployments.js';
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
  const before = migrations.slice(0, migrations.findIndex((m) => m.name === '0025-environments'));
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const m of before) out[m.name] = { up: (db) => m.up({ db, dialect: database.dialect }) };
      return out;
    },
  };
  const { error } = await new Migrator({ db: database.db, provider }).migrateToLatest();
  expect(error).toBeUndefined();
  const row = (projectId: number, environment: string, iid: number, at: string) => ({
    iid, project_id: projectId, environment, ref: 'main', sha: 'a'.repeat(40), tag: 0, status: 'success', user_id: null, finished_at: at, created_at: at, updated_at: at,
  });
  await database.db
    .insertInto('deployments')
    .values([row(1, 'production', 1, '2024-01-02T00:00:00.000Z'), row(1, 'production', 2, '2024-01-03T00:00:00.000Z'), row(1, 'Review/App', 3, '2024-01-04T00:00:00.000Z'), row(2, 'production', 1, '2024-01-05T00:00:00.000Z')])
    .execute();
  await migrateToLatest(database);
  const envs = await database.db.selectFrom('environments').select(['project_id', 'name', 'slug', 'tier', 'state', 'created_at']).orderBy('project_id').orderBy('name').execute();
  expect(envs).toEqual([
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
