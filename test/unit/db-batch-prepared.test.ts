// selectBatch (one round trip on PostgreSQL) and prepared (compiled once per dialect) give the same
// rows as the query builder run directly, on the database under test.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { selectBatch } from '../../src/db/batch.js';
import { prepared } from '../../src/db/prepared.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { createFreshStorage, type FreshStorage } from '../helpers/server.js';

let storage: FreshStorage;
let database: Database;

const labelByTitle = prepared((db, projectId: number, title: string) =>
  db.selectFrom('labels').select(['id', 'title', 'color']).where('project_id', '=', projectId).where('title', '=', title).where('color', '!=', '#000000'),
);

beforeAll(async () => {
  storage = await createFreshStorage('labwright-db-');
  database = createDatabase({ databaseUrl: storage.databaseUrl || null, dataDir: storage.dataDir });
  await migrateToLatest(database);
  const now = new Date().toISOString();
  const labels = ['bug', 'feature', "it's \u00e9t\u00e9", 'x'.repeat(200)].map((title, i) => ({
    project_id: 7, title, title_lower: title.toLowerCase(), color: i === 3 ? '#000000' : '#ff0000', description: null, priority: null, created_at: now, updated_at: now,
  }));
  await database.db.insertInto('labels').values(labels as never).execute();
});

afterAll(async () => {
  await database?.close();
  await storage?.destroy();
});

describe('prepared', () => {
  it('binds each argument to its slot and keeps the constants of the build', async () => {
    const [bug] = await labelByTitle(database.db, 7, 'bug');
    expect(bug).toMatchObject({ title: 'bug', color: '#ff0000' });
    expect(await labelByTitle(database.db, 7, "it's \u00e9t\u00e9")).toHaveLength(1);
    expect(await labelByTitle(database.db, 8, 'bug')).toEqual([]);
    // The constant '#000000' of the build still filters.
    expect(await labelByTitle(database.db, 7, 'x'.repeat(200))).toEqual([]);
  });

  it('runs inside a transaction and sees its uncommitted rows', async () => {
    const seen = await database.transaction(async (trx) => {
      await trx.updateTable('labels').set({ title: 'renamed' }).where('title', '=', 'feature').execute();
      const rows = await labelByTitle(trx, 7, 'renamed');
      throw Object.assign(new Error('rollback'), { rows });
    }).catch((err: { rows?: unknown[] }) => err.rows);
    expect(seen).toHaveLength(1);
    expect(await labelByTitle(database.db, 7, 'renamed')).toEqual([]);
  });

  it('runs a statement that writes every time, a WITH that inserts included (PostgreSQL), never from the read cache', async () => {
    const now = new Date().toISOString();
    const values = (title: string) => ({ project_id: 9, title, title_lower: title, color: '#00ff00', description: null, priority: null, created_at: now, updated_at: now });
    const insert =
      database.dialect === 'postgres'
        ? prepared((db, title: string) => db.with('made', (d) => d.insertInto('labels').values(values(title) as never).returning(['id', 'title'])).selectFrom('made').selectAll())
        : prepared((db, title: string) => db.insertInto('labels').values(values(title) as never).returning(['id', 'title']));
    const first = await insert(database.db, 'twice');
    const second = await insert(database.db, 'twice');
    expect(first).toHaveLength(1);
    expect(second).toHaveLength(1);
    expect((second[0] as { id: number }).id).not.toBe((first[0] as { id: number }).id);
    const rows = await database.db.selectFrom('labels').select('id').where('project_id', '=', 9).where('title', '=', 'twice').execute();
    expect(rows).toHaveLength(2);
  });

  it('binds list arguments element by element, one template per list length', async () => {
    const byTitles = prepared((db, projectId: number, titles: readonly string[]) =>
      db.selectFrom('labels').select('title').where('project_id', '=', projectId).where('title', 'in', titles).orderBy('title'),
    );
    const titles = async (list: string[]) => (await byTitles(database.db, 7, list)).map((r) => r.title);
    expect(await titles(['bug'])).toEqual(['bug']);
    expect(await titles(['feature', 'bug', 'nope'])).toEqual(['bug', 'feature']);
    expect(await titles(['nope', 'feature', 'bug'])).toEqual(['bug', 'feature']);
    expect(await titles(['feature'])).toEqual(['feature']);
  });

  it('refuses a build that computes a value from an argument', async () => {
    const bad = prepared((db, title: string) => db.selectFrom('labels').select('id').where('title', 'like', `${title}%`));
    await expect(bad(database.db, 'b')).rejects.toThrow(/computed value/);
  });
});

describe('selectBatch', () => {
  it('returns what each query returns alone, empty results included', async () => {
    const db = database.db;
    const build = () => ({
      some: db.selectFrom('labels').selectAll().where('project_id', '=', 7).where('title', 'in', ['bug', 'feature']),
      none: db.selectFrom('labels').select(['id']).where('project_id', '=', 999),
      counted: db.selectFrom('labels').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', 7),
    });
    const batch = await selectBatch(db, build());
    const q = build();
    const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
    expect(batch.some.sort(byId)).toEqual((await q.some.execute()).sort(byId));
    expect(batch.none).toEqual([]);
    expect(batch.counted).toEqual([{ n: 4 }]);
  });
});

describe('selectBatch with prepared statements', () => {
  it('numbers each part\'s parameters after the previous parts ($1 and $10 alike), the same on every call', async () => {
    const db = database.db;
    const byTitles = prepared((db2, projectId: number, titles: readonly string[]) =>
      db2.selectFrom('labels').select('title').where('project_id', '=', projectId).where('title', 'in', titles),
    );
    // Eleven parameters before the last part, so its $1 becomes $12 and the first part's $10 stays itself.
    const many = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'bug'];
    for (let round = 0; round < 2; round++) {
      const batch = await selectBatch(db, {
        first: byTitles.with(7, many),
        none: byTitles.with(8, ['bug']),
        direct: db.selectFrom('labels').select('title').where('project_id', '=', 7).where('title', '=', 'feature'),
        last: labelByTitle.with(7, "it's \u00e9t\u00e9"),
      });
      expect(batch.first.map((r) => r.title)).toEqual(['bug']);
      expect(batch.none).toEqual([]);
      expect(batch.direct.map((r) => r.title)).toEqual(['feature']);
      expect(batch.last.map((r) => r.title)).toEqual(["it's \u00e9t\u00e9"]);
    }
  });

  it('refuses, on PostgreSQL, a part whose text holds a "$" and digits besides its placeholders', async () => {
    const db = database.db;
    const q = {
      first: db.selectFrom('labels').select('title').where('project_id', '=', 7),
      literal: db.selectFrom('labels').select('title').where('title', '=', sql.lit('costs $1')).where('project_id', '=', 7),
    };
    if (database.dialect === 'postgres') await expect(selectBatch(db, q)).rejects.toThrow(/does not number its/);
    else expect((await selectBatch(db, q)).literal).toEqual([]);
  });
});

describe('LIMIT on PostgreSQL', () => {
  it('is written as a literal, so a page statement keeps one generic plan; the rows are the same', async () => {
    const q = database.db.selectFrom('labels').select('title').where('project_id', '=', 7).orderBy('id').limit(2);
    const compiled = q.compile();
    if (database.dialect === 'postgres') {
      expect(compiled.sql).toMatch(/limit 2$/);
      expect(compiled.parameters).toEqual([7]);
    } else {
      expect(compiled.sql).toMatch(/limit \?$/);
    }
    expect((await q.execute()).map((r) => r.title)).toEqual(['bug', 'feature']);
    // A later page (an OFFSET, kept as a parameter) reads the right rows too.
    const offset = await database.db.selectFrom('labels').select('title').where('project_id', '=', 7).orderBy('id').limit(1).offset(1).execute();
    expect(offset.map((r) => r.title)).toEqual(['feature']);
  });
});
