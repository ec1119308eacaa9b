// The SQLite read cache (TwoConnectionSqliteDriver.readRows): results are reused only while the
// database file is unchanged, never shared as objects, and keyed by parameter types. The same
// expectations hold on PostgreSQL, which has no such cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, rawSql, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { prepared } from '../../src/db/prepared.js';
import { loadConfig } from '../../src/config.js';
import { runOutside } from '../helpers/outside.js';
import { createFreshStorage, TEST_DB, type FreshStorage } from '../helpers/server.js';

let storage: FreshStorage;
let database: Database;

const LABELS = rawSql('select id, title, color from labels where project_id = ? order by id');
const labelsOf = prepared((db, projectId: number) => db.selectFrom('labels').select(['id', 'title']).where('project_id', '=', projectId).orderBy('id'));

/** A statement through a connection of its own: another process's write. */
const otherProcess = (statement: string, params: unknown[]) => runOutside({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl || null }, statement, params);

/** The next turn of the event loop: a new read snapshot on SQLite. */
const nextTurn = () => new Promise((r) => setImmediate(r));

beforeAll(async () => {
  storage = await createFreshStorage('labwright-read-cache-');
  database = createDatabase({ databaseUrl: storage.databaseUrl || null, dataDir: storage.dataDir });
  await migrateToLatest(database);
  const now = new Date().toISOString();
  await database.db
    .insertInto('labels')
    .values(['bug', 'feature'].map((title) => ({ project_id: 7, title, title_lower: title, color: '#ff0000', description: null, priority: null, created_at: now, updated_at: now })) as never)
    .execute();
});

afterAll(async () => {
  await database?.close();
  await storage?.destroy();
});

describe('read cache', () => {
  it('a write by another process is seen by the next read', async () => {
    expect((await database.read<{ title: string }>(LABELS, [7])).map((l) => l.title)).toEqual(['bug', 'feature']);
    expect((await labelsOf(database.db, 7)).map((l) => l.title)).toEqual(['bug', 'feature']);
    await otherProcess("update labels set title = 'renamed' where title = ?", ['bug']);
    await nextTurn();
    expect((await database.read<{ title: string }>(LABELS, [7])).map((l) => l.title)).toEqual(['renamed', 'feature']);
    expect((await labelsOf(database.db, 7)).map((l) => l.title)).toEqual(['renamed', 'feature']);
    const viaBuilder = await database.db.selectFrom('labels').select('title').where('project_id', '=', 7).orderBy('id').execute();
    expect(viaBuilder.map((l) => l.title)).toEqual(['renamed', 'feature']);
    await otherProcess("update labels set title = 'bug' where title = ?", ['renamed']);
    await nextTurn();
  });

  it("a write of this process is seen by its next read, even in the same turn", async () => {
    expect((await labelsOf(database.db, 7)).map((l) => l.title)).toEqual(['bug', 'feature']);
    await database.db.updateTable('labels').set({ title: 'fixed' }).where('title', '=', 'bug').execute();
    expect((await labelsOf(database.db, 7)).map((l) => l.title)).toEqual(['fixed', 'feature']);
    await database.transaction(async (trx) => {
      await trx.updateTable('labels').set({ title: 'bug' }).where('title', '=', 'fixed').execute();
    });
    expect((await labelsOf(database.db, 7)).map((l) => l.title)).toEqual(['bug', 'feature']);
  });

  it('callers may change the rows they get: the next read is unaffected', async () => {
    const first = await database.read<{ title: string; color: string }>(LABELS, [7]);
    first[0].title = 'scribbled';
    first.reverse();
    first.push({ title: 'extra', color: '' });
    const again = await database.read<{ title: string }>(LABELS, [7]);
    expect(again.map((l) => l.title)).toEqual(['bug', 'feature']);
    expect(again[0]).not.toBe(first[0]);
  });

  it('parameters of different types are different keys (1 and "1")', async () => {
    const q = rawSql('select count(*) as n from labels where project_id = ?');
    expect((await database.read<{ n: number }>(q, [7]))[0].n).toBe(2);
    // SQLite compares an integer column with the text '7' by affinity; PostgreSQL casts: both 2. A
    // value that compares differently as text and as a number tells the keys apart.
    const typed = rawSql('select typeof(?) as t');
    if (TEST_DB === 'sqlite') {
      // better-sqlite3 binds JavaScript numbers as REAL.
      expect((await database.read<{ t: string }>(typed, [1]))[0].t).toBe('real');
      expect((await database.read<{ t: string }>(typed, ['1']))[0].t).toBe('text');
      expect((await database.read<{ t: string }>(typed, [1]))[0].t).toBe('real');
      expect((await database.read<{ t: string }>(typed, [null]))[0].t).toBe('null');
    }
    // Strings that run together the same way are still different parameters.
    const pair = rawSql('select ? as a, ? as b');
    expect(await database.read(pair, ['x', 'sy'])).toEqual([{ a: 'x', b: 'sy' }]);
    expect(await database.read(pair, ['xs', 'y'])).toEqual([{ a: 'xs', b: 'y' }]);
    expect(await database.read(pair, ['x', null])).toEqual([{ a: 'x', b: null }]);
    expect(await database.read(pair, ['x', 'z'])).toEqual([{ a: 'x', b: 'z' }]);
  });

  it('memory stays bounded: long parameters are not kept, and many results start it over', async () => {
    const echo = rawSql('select ? as a');
    const stats = () => database.readCacheStats();
    if (TEST_DB === 'postgres') {
      expect(stats()).toBeNull();
      return;
    }
    await nextTurn();
    const before = stats()!.entries;
    // A search string of 16 KB (anonymous requests may send them) is read, not kept.
    const long = 'x'.repeat(16_000);
    expect(await database.read(echo, [long])).toEqual([{ a: long }]);
    expect(stats()!.entries).toBe(before);
    // 3,000 distinct results of about 1 KB each (about 6 MB estimated with their keys) stay under
    // the bounds; 30,000 more go past the entry bound and the cache starts over instead of growing.
    for (let i = 0; i < 3000; i++) await database.read(echo, [`${i}:${'y'.repeat(500)}`]);
    expect(stats()!.entries).toBeGreaterThan(before);
    expect(stats()!.bytes).toBeGreaterThan(3000 * 1000);
    for (let i = 0; i < 30_000; i++) await database.read(echo, [`k${i}`]);
    expect(stats()!.entries).toBeLessThanOrEqual(20_000);
    expect(stats()!.bytes).toBeLessThanOrEqual(32 * 1024 * 1024);
  });

  it('LABWRIGHT_SQLITE_READ_CACHE turns it off; anything but true or false is refused', () => {
    expect(loadConfig({ LABWRIGHT_DATA_DIR: storage.dataDir }).sqliteReadCache).toBe(true);
    expect(loadConfig({ LABWRIGHT_DATA_DIR: storage.dataDir, LABWRIGHT_SQLITE_READ_CACHE: 'false' }).sqliteReadCache).toBe(false);
    expect(() => loadConfig({ LABWRIGHT_DATA_DIR: storage.dataDir, LABWRIGHT_SQLITE_READ_CACHE: 'off' })).toThrow(/LABWRIGHT_SQLITE_READ_CACHE/);
  });
});
