// Indexes found missing by the benchmark (issue 7, `bench/explain.ts`).
import { sql } from 'kysely';
import type { LabwrightMigration } from './helpers.js';

export const performanceIndexes: LabwrightMigration = {
  name: '0007-performance-indexes',
  async up(ctx) {
    // Subtree queries filter on `traversal LIKE '/1/5/%'`. PostgreSQL can answer a prefix LIKE from
    // a plain btree only under the "C" collation (databases are usually created with C.UTF-8 or a
    // language locale), so without this index every group and project list scanned all namespaces
    // (one per user). SQLite uses its plain index once LIKE is case-sensitive (openSqlite).
    if (ctx.dialect === 'postgres') {
      await sql.raw('create index namespaces_traversal_pattern on namespaces (traversal text_pattern_ops)').execute(ctx.db);
    }
  },
};
