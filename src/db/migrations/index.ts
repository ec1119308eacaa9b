// The ordered list of migrations. Append only; never edit one that has shipped.
import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from '../database.js';
import { foundation } from './0001-foundation.js';
import { projects } from './0002-projects.js';
import { groups } from './0003-groups.js';
import { mergeRequests } from './0005-merge-requests.js';
import { oauth } from './0004-oauth.js';
import { projectGroupLinks } from './0006-project-group-links.js';
import { performanceIndexes } from './0007-performance-indexes.js';
import { hotPathIndexes } from './0008-hot-path-indexes.js';
import { mergeRequestIndexes } from './0009-merge-request-indexes.js';
import { authChangeNotices } from './0010-auth-change-notices.js';
import { dataChangeNotices } from './0011-data-change-notices.js';
import { openMergeRequestRule } from './0012-open-merge-request-rule.js';
import { notes } from './0013-notes.js';
import { releases } from './0014-releases.js';
import { subscriptions } from './0015-subscriptions.js';
import { protectedRefs } from './0016-protected-refs.js';
import { openidNonce } from './0017-openid-nonce.js';
import { webHooks } from './0018-web-hooks.js';
import { forks } from './0019-forks.js';
import { stars } from './0020-stars.js';
import { commitCount } from './0021-commit-count.js';
import { issues } from './0022-issues.js';
import { ciVariables } from './0023-ci-variables.js';
import { deployTokens } from './0024-deploy-tokens.js';
import { environments } from './0025-environments.js';
import { events } from './0026-events.js';
import { snippets } from './0027-snippets.js';
import { wikiPages } from './0029-wiki-pages.js';
import { storageSizes } from './0030-storage-sizes.js';
import { todos } from './0031-todos.js';
import { uploads } from './0032-uploads.js';
import { badges } from './0033-badges.js';
import { accessRequests } from './0034-access-requests.js';
import { todoGroups } from './0035-todo-groups.js';
import { deployKeys } from './0036-deploy-keys.js';
import { resourceEvents } from './0028-resource-events.js';
import type { LabwrightMigration } from './helpers.js';

export const migrations: LabwrightMigration[] = [foundation, projects, groups, oauth, mergeRequests, projectGroupLinks, performanceIndexes, hotPathIndexes, mergeRequestIndexes, authChangeNotices, dataChangeNotices, openMergeRequestRule, notes, releases, subscriptions, protectedRefs, openidNonce, webHooks, forks, stars, commitCount, issues, ciVariables, deployTokens, environments, events, snippets, resourceEvents, wikiPages, storageSizes, todos, uploads, badges, accessRequests, todoGroups, deployKeys];

class StaticProvider implements MigrationProvider {
  constructor(private readonly database: Database) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const m of migrations) {
      out[m.name] = { up: (db) => m.up({ db, dialect: this.database.dialect }) };
    }
    return out;
  }
}

/** Brings the schema up to date; safe to run from several processes at once (Kysely takes a lock). */
export async function migrateToLatest(database: Database): Promise<void> {
  if (await allApplied(database)) return;
  const migrator = new Migrator({ db: database.db, provider: new StaticProvider(database) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? error}`);
  }
  if (results?.length) database.schemaChanged?.();
}

/**
 * True when the migrator's table lists every migration and nothing else: the usual start-up, on
 * an existing data set. Kysely's migrator would first read the whole schema (every table's
 * columns) to find its own tables, about 30 ms of start-up; any other answer, or no table yet,
 * leaves it to the migrator.
 */
async function allApplied(database: Database): Promise<boolean> {
  let rows: { name: string }[];
  try {
    rows = (await sql<{ name: string }>`select name from kysely_migration`.execute(database.db)).rows;
  } catch {
    return false;
  }
  if (rows.length !== migrations.length) return false;
  const applied = new Set(rows.map((r) => r.name));
  return migrations.every((m) => applied.has(m.name));
}
