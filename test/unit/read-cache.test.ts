// The read caches: SQLite's (TwoConnectionSqliteDriver.readRows), whose results are reused only
// while the database file is unchanged, and PostgreSQL's (CachingPostgresDriver), whose results are
// reused until a change notice comes or this process writes. Both are never shared as objects and
// are keyed by parameter types.
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, ping, rawSql, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { prepared } from '../../src/db/prepared.js';
import { selectBatch } from '../../src/db/batch.js';
import { CachingPostgresDriver } from '../../src/db/postgres-driver.js';
import { loadConfig } from '../../src/config.js';
import { runOutside, until } from '../helpers/outside.js';
import { createFreshStorage, TEST_DB, type FreshStorage } from '../helpers/server.js';

let storage: FreshStorage;
let database: Database;

const LABELS = rawSql('select id, title, color from labels where project_id = ? order by id');
const labelsOf = prepared((db, projectId: number) => db.selectFrom('labels').select(['id', 'title']).where('project_id', '=', projectId).orderBy('id'));

/**
 * A statement through a connection of its own: another process's write. `noTriggers`
 * (PostgreSQL): no change notice is sent, as if the change notices did not exist.
 */
const otherProcess = (statement: string, params: unknown[], opts: { noTriggers?: boolean } = {}) =>
  runOutside({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl || null }, statement, params, opts);

/** The next turn of the event loop: a new read snapshot on SQLite. */
const nextTurn = () => new Promise((r) => setImmediate(r));

const titles = async () => (await labelsOf(database.db, 7)).map((l) => l.title).join(',');


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
  it('a write by another process is seen by the next read (SQLite) or once its notice comes (PostgreSQL)', async () => {
    expect((await database.read<{ title: string }>(LABELS, [7])).map((l) => l.title)).toEqual(['bug', 'feature']);
    expect(await titles()).toBe('bug,feature');
    await otherProcess("update labels set title = 'renamed' where title = ?", ['bug']);
    await nextTurn();
    const rawTitles = async () => (await database.read<{ title: string }>(LABELS, [7])).map((l) => l.title).join(',');
    if (TEST_DB === 'sqlite') {
      expect(await rawTitles()).toBe('renamed,feature');
      expect(await titles()).toBe('renamed,feature');
    } else {
      expect(await until(async () => (await rawTitles()) === 'renamed,feature')).toBe(true);
      expect(await until(async () => (await titles()) === 'renamed,feature')).toBe(true);
    }
    const viaBuilder = await database.db.selectFrom('labels').select('title').where('project_id', '=', 7).orderBy('id').execute();
    expect(viaBuilder.map((l) => l.title)).toEqual(['renamed', 'feature']);
    await otherProcess("update labels set title = 'bug' where title = ?", ['renamed']);
    await nextTurn();
    expect(await until(async () => (await titles()) === 'bug,feature')).toBe(true);
  });

  it('PostgreSQL: results are kept until a change notice comes, and never while nobody listens', async () => {
    if (TEST_DB !== 'postgres') return;
    expect(await titles()).toBe('bug,feature');
    expect(database.readCacheStats()!.entries).toBeGreaterThan(0);
    // A change that sends no notice is not seen: the result is the kept one.
    await otherProcess("update labels set title = 'silent' where title = ?", ['bug'], { noTriggers: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(await titles()).toBe('bug,feature');
    // A transaction reads from the server.
    expect(await database.transaction(async (trx) => (await labelsOf(trx as never, 7)).map((l) => l.title).join(','))).toBe('silent,feature');
    // So does every read once the listening connection is gone, and nothing kept before the gap is
    // used after it.
    const before = database.authChanges();
    expect(before).not.toBeNull();
    const killer = new pg.Client({ connectionString: storage.databaseUrl });
    await killer.connect();
    try {
      await killer.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'listen %'");
    } finally {
      await killer.end();
    }
    expect(await until(() => database.authChanges() === null, 3000)).toBe(true);
    expect(database.readGeneration()).toBeNull();
    expect(await titles()).toBe('silent,feature');
    await otherProcess("update labels set title = 'quiet' where title = ?", ['silent'], { noTriggers: true });
    expect(await titles()).toBe('quiet,feature');
    expect(await until(() => database.authChanges() !== null, 5000)).toBe(true);
    expect(await titles()).toBe('quiet,feature');
    await otherProcess("update labels set title = 'bug' where title = ?", ['quiet']);
    expect(await until(async () => (await titles()) === 'bug,feature')).toBe(true);
  });

  it('PostgreSQL: no result is used longer than its age bound, even with no notice', async () => {
    if (TEST_DB !== 'postgres') return;
    const short = createDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir, readCacheMaxAgeMs: 1000 });
    try {
      const shortTitles = async () => (await labelsOf(short.db, 7)).map((l) => l.title).join(',');
      expect(await until(async () => (await shortTitles()) === 'bug,feature' && short.readCacheStats()!.entries > 0)).toBe(true);
      await otherProcess("update labels set title = 'hushed' where title = ?", ['bug'], { noTriggers: true });
      expect(await shortTitles()).toBe('bug,feature');
      const generation = short.readGeneration();
      await new Promise((r) => setTimeout(r, 1100));
      // What was derived from those reads (kept responses) ends with them.
      expect(short.readGeneration()).not.toBe(generation);
      expect(await shortTitles()).toBe('hushed,feature');
      await otherProcess("update labels set title = 'bug' where title = ?", ['hushed']);
      expect(await until(async () => (await titles()) === 'bug,feature')).toBe(true);
    } finally {
      await short.close();
    }
  });

  it('PostgreSQL: a readiness probe is not a write, and a row with a value other than JSON (a date) is not kept', async () => {
    if (TEST_DB !== 'postgres') return;
    expect(await titles()).toBe('bug,feature');
    const epoch = database.writeEpoch();
    expect(await ping(database)).toBe(true);
    expect(database.writeEpoch()).toBe(epoch);
    const clock = async () => ((await database.db.selectNoFrom(sql<Date>`clock_timestamp()`.as('t')).execute())[0].t as Date).getTime();
    const first = await clock();
    await new Promise((r) => setTimeout(r, 5));
    expect(await clock()).toBeGreaterThan(first);
  });

  it('PostgreSQL: simultaneous identical reads send one statement, unless a write came in between', async () => {
    let notices = 1;
    const driver = new CachingPostgresDriver({} as never, async () => {
      throw new Error('no client needed');
    }, () => notices);
    let runs = 0;
    let release: () => void = () => undefined;
    const run = (fail = false) => async () => {
      runs++;
      await new Promise<void>((r) => (release = r));
      if (fail) throw new Error('connection lost');
      return [{ id: 1, nested: [{ a: 1 }] }];
    };
    // The first read starts the store; twenty more of the same statement wait for the first.
    const first = driver.readThrough('select 1', [7], run());
    const others = Array.from({ length: 20 }, () => driver.readThrough('select 1', [7], run()));
    release();
    const all = await Promise.all([first, ...others]);
    expect(runs).toBe(1);
    for (const rows of all) expect(rows).toEqual([{ id: 1, nested: [{ a: 1 }] }]);
    expect(new Set(all.map((r) => r[0])).size).toBe(21);
    expect(new Set(all.map((r) => (r[0] as { nested: unknown }).nested)).size).toBe(21);
    // Kept: the next read sends nothing.
    expect(await driver.readThrough('select 1', [7], run())).toEqual([{ id: 1, nested: [{ a: 1 }] }]);
    expect(runs).toBe(1);
    // After a write of this process, a read does not join one that started before it.
    driver.wrote();
    const before = driver.readThrough('select 1', [8], run());
    const releaseBefore = release;
    driver.wrote();
    const after = driver.readThrough('select 1', [8], run());
    expect(runs).toBe(3);
    releaseBefore();
    release();
    await Promise.all([before, after]);
    // Nor after a notice; and when the statement it waits for fails, a reader tries on its own.
    notices++;
    const failing = driver.readThrough('select 1', [9], run(true));
    const releaseFailing = release;
    const waiter = driver.readThrough('select 1', [9], run());
    releaseFailing();
    await expect(failing).rejects.toThrow('connection lost');
    await new Promise((r) => setTimeout(r, 0));
    release();
    expect(await waiter).toEqual([{ id: 1, nested: [{ a: 1 }] }]);
    expect(runs).toBe(5);
  });

  it('PostgreSQL: every table sends change notices (a new table needs notifyChanges)', async () => {
    if (TEST_DB !== 'postgres') return;
    const { rows } = await sql<{ name: string; triggers: number }>`
      select t.tablename as name, (select count(*) from pg_trigger g join pg_proc p on p.oid = g.tgfoid
        where g.tgrelid = (quote_ident(t.tablename))::regclass and g.tgenabled = 'O' and (g.tgtype & 1) = 0 and (g.tgtype & 62) = 60
          and p.proname in ('labwright_auth_changed', 'labwright_data_changed')) as triggers
      from pg_tables t where t.schemaname = current_schema() and t.tablename not like 'kysely_%'`.execute(database.db);
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((r) => Number(r.triggers) !== 1).map((r) => r.name)).toEqual([]);
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
    // The same through the query builder, a prepared statement and a batch (on PostgreSQL one
    // statement whose rows hold arrays of objects).
    for (let round = 0; round < 2; round++) {
      const built = await database.db.selectFrom('labels').select(['id', 'title']).where('project_id', '=', 7).orderBy('id').execute();
      const viaPrepared = await labelsOf(database.db, 7);
      const batch = await selectBatch(database.db, { a: labelsOf.with(7), b: database.db.selectFrom('labels').select('title').where('project_id', '=', 7) });
      expect(built.map((l) => l.title)).toEqual(['bug', 'feature']);
      expect(viaPrepared.map((l) => l.title)).toEqual(['bug', 'feature']);
      expect(batch.a.map((l) => l.title).sort()).toEqual(['bug', 'feature']);
      expect(batch.b.map((l) => l.title).sort()).toEqual(['bug', 'feature']);
      built[0].title = 'scribbled';
      viaPrepared[0].title = 'scribbled';
      batch.a[0].title = 'scribbled';
      batch.b.pop();
    }
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
    const echo = (v: string) => database.db.selectNoFrom((eb) => eb.val(v).as('a')).execute();
    const stats = () => database.readCacheStats()!;
    await echo('warm');
    await nextTurn();
    const before = stats().entries;
    // A search string of 16 KB (anonymous requests may send them) is read, not kept.
    const long = 'x'.repeat(16_000);
    expect(await echo(long)).toEqual([{ a: long }]);
    expect(stats().entries).toBe(before);
    // 3,000 distinct results of about 1 KB each (about 6 MB estimated with their keys) stay under
    // the bounds; 30,000 more go past the entry bound and the cache starts over instead of growing.
    for (let i = 0; i < 3000; i++) await echo(`${i}:${'y'.repeat(500)}`);
    expect(stats().entries).toBeGreaterThan(before + 2000);
    expect(stats().bytes).toBeGreaterThan(3000 * 1000);
    for (let i = 0; i < 30_000; i++) await echo(`k${i}`);
    expect(stats().entries).toBeLessThanOrEqual(20_000);
    expect(stats().bytes).toBeLessThanOrEqual(32 * 1024 * 1024);
  });

  it('with the cache off, every read goes to the database', async () => {
    const off = createDatabase({ databaseUrl: storage.databaseUrl || null, dataDir: storage.dataDir, readCache: false });
    try {
      const offTitles = async () => (await labelsOf(off.db, 7)).map((l) => l.title).join(',');
      expect(await offTitles()).toBe('bug,feature');
      expect(off.readCacheStats()).toBeNull();
      expect(off.readGeneration()).toBeNull();
      await otherProcess("update labels set title = 'unseen' where title = ?", ['bug'], { noTriggers: true });
      await nextTurn();
      expect(await offTitles()).toBe('unseen,feature');
      await otherProcess("update labels set title = 'bug' where title = ?", ['unseen']);
      await nextTurn();
      expect(await until(async () => (await titles()) === 'bug,feature')).toBe(true);
    } finally {
      await off.close();
    }
  });

  it('LABWRIGHT_SQLITE_READ_CACHE and LABWRIGHT_POSTGRES_READ_CACHE turn it off; anything but true or false is refused', () => {
    const sqlite = { LABWRIGHT_DATA_DIR: storage.dataDir };
    const postgres = { ...sqlite, DATABASE_URL: 'postgres://root@127.0.0.1:5432/test' };
    expect(loadConfig(sqlite).readCache).toBe(true);
    expect(loadConfig(postgres).readCache).toBe(true);
    expect(loadConfig({ ...sqlite, LABWRIGHT_SQLITE_READ_CACHE: 'false' }).readCache).toBe(false);
    expect(loadConfig({ ...sqlite, LABWRIGHT_POSTGRES_READ_CACHE: 'false' }).readCache).toBe(true);
    expect(loadConfig({ ...postgres, LABWRIGHT_POSTGRES_READ_CACHE: 'false' }).readCache).toBe(false);
    expect(loadConfig({ ...postgres, LABWRIGHT_SQLITE_READ_CACHE: 'false' }).readCache).toBe(true);
    expect(() => loadConfig({ ...sqlite, LABWRIGHT_SQLITE_READ_CACHE: 'off' })).toThrow(/LABWRIGHT_SQLITE_READ_CACHE/);
    expect(() => loadConfig({ ...sqlite, LABWRIGHT_POSTGRES_READ_CACHE: 'off' })).toThrow(/LABWRIGHT_POSTGRES_READ_CACHE/);
    expect(loadConfig(sqlite).responseCache).toBe(true);
    expect(loadConfig({ ...postgres, LABWRIGHT_RESPONSE_CACHE: 'false' }).responseCache).toBe(false);
    expect(() => loadConfig({ ...sqlite, LABWRIGHT_RESPONSE_CACHE: '0' })).toThrow(/LABWRIGHT_RESPONSE_CACHE/);
  });

  it('a response being made is shared with those who joined in its era, kept or not', async () => {
    const { ResponseCache } = await import('../../src/http/response-cache.js');
    const responses = new ResponseCache(database);
    await titles();
    await nextTurn();
    const era = responses.begin()!;
    expect(era).not.toBeNull();
    const response = { body: Buffer.from('{"a":1}'), headers: [], check: null };
    // Kept: whoever joined gets it; the flight is gone once it lands.
    let land = responses.takeOff('k', era);
    const joined = responses.flight('k', era)!;
    expect(responses.flight('k', era + 1)).toBeUndefined();
    expect(responses.set('k', era, response)).toBe(true);
    land(response);
    expect(await joined).toBe(response);
    expect(responses.flight('k', era)).toBeUndefined();
    // Not kept (a write came while it was made): those who joined before the write still share
    // it, as its maker sends it; a request after the write is of the new era and does not join.
    land = responses.takeOff('k2', era);
    const early = responses.flight('k2', era)!;
    await database.db.updateTable('labels').set({ color: '#0000ff' }).where('title', '=', 'feature').execute();
    const now = responses.begin()!;
    expect(now).not.toBe(era);
    expect(responses.flight('k2', now)).toBeUndefined();
    expect(responses.set('k2', era, response)).toBe(false);
    land(response);
    expect(await early).toBe(response);
    expect(responses.get('k2')).toBeUndefined();
    // A maker that keeps nothing out (noStore, an error) lands with nothing: they make their own.
    land = responses.takeOff('k3', now);
    const waiting = responses.flight('k3', now)!;
    land(null);
    expect(await waiting).toBeNull();
    expect(responses.flight('k3', now)).toBeUndefined();
  });

  it('the read generation stays while nothing changes, and moves with a write of this process or another', async () => {
    expect(await titles()).toBe('bug,feature');
    await nextTurn();
    const g = database.readGeneration();
    expect(g).not.toBeNull();
    expect(await titles()).toBe('bug,feature');
    await nextTurn();
    expect(database.readGeneration()).toBe(g);
    await database.db.updateTable('labels').set({ color: '#00ff00' }).where('title', '=', 'bug').execute();
    const afterOwn = database.readGeneration();
    expect(afterOwn).not.toBe(g);
    let settled = afterOwn;
    if (TEST_DB === 'postgres') {
      // The notice of this process's own write, once it has come, does not empty the store again.
      const listener = new pg.Client({ connectionString: storage.databaseUrl });
      await listener.connect();
      try {
        await listener.query('listen labwright_data_changes');
        let heard = 0;
        listener.on('notification', (n) => {
          if (!n.payload) heard++;
        });
        await database.db.updateTable('labels').set({ color: '#00ffff' }).where('title', '=', 'bug').execute();
        const afterSecond = database.readGeneration();
        expect(await until(() => heard > 0)).toBe(true);
        // Sent to every listener at the same commit: give the database's own listener a moment more.
        await new Promise((r) => setTimeout(r, 100));
        expect(database.readGeneration()).toBe(afterSecond);
        settled = afterSecond;
      } finally {
        await listener.end();
      }
    }
    await otherProcess('update labels set color = ? where title = ?', ['#ff0000', 'bug']);
    await nextTurn();
    expect(await until(() => database.readGeneration() !== settled)).toBe(true);
  });

  it('a raw SELECT * prepared before another process adds a column still runs (rolling upgrade)', async () => {
    const all = rawSql('select * from labels where project_id = ? order by id');
    expect(await database.read(all, [7])).toHaveLength(2);
    await otherProcess('alter table labels add column from_a_newer_version integer', []);
    // A write of this process: nothing is answered from the cache.
    await database.db.updateTable('labels').set({ color: '#111111' }).where('project_id', '=', 7).execute();
    const rows = await database.read<{ color: string }>(all, [7]);
    expect(rows.map((r) => r.color)).toEqual(['#111111', '#111111']);
  });
});
