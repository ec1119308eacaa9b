// SQLite's write-ahead log stays bounded while reads and writes interleave: the read snapshot of a
// turn ends before a commit, so the commit's automatic checkpoint can copy every page into the
// database file and the log starts over (it grew without bound before: 460 MB after 16,000
// merge request creations under the bench's mixed load).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import { WalSync } from '../../src/db/wal-sync.js';
import { createFreshStorage, type FreshStorage } from '../helpers/server.js';

let storage: FreshStorage;
let database: Database;

beforeAll(async () => {
  storage = await createFreshStorage('labwright-wal-', 'sqlite');
  database = createDatabase({ databaseUrl: null, dataDir: storage.dataDir });
  await migrateToLatest(database);
});

afterAll(async () => {
  await database?.close();
  await storage?.destroy();
});

const walBytes = () => statSync(join(storage.dataDir, 'labwright.sqlite3-wal')).size;

describe('SQLite write-ahead log', () => {
  it('does not grow past the automatic checkpoint while every commit follows a read of the same turn', async () => {
    const now = new Date().toISOString();
    // About three pages per commit: 1,500 commits write some 18 MB of log.
    const description = 'x'.repeat(8000);
    let largest = 0;
    for (let i = 0; i < 1500; i++) {
      // A read first (it opens the turn's snapshot), then a transaction and a single write in the
      // same turn, as a request that reads and then writes does.
      await database.db.selectFrom('labels').select('id').where('project_id', '=', 1).limit(1).execute();
      await database.transaction(async (trx) => {
        await trx.insertInto('labels').values({ project_id: 1, title: `l${i}`, title_lower: `l${i}`, color: '#ff0000', description, priority: null, created_at: now, updated_at: now } as never).execute();
      });
      await database.db.selectFrom('labels').select('id').where('id', '=', 1).execute();
      await database.db.updateTable('labels').set({ description: `${description}${i}` }).where('title', '=', `l${i}`).execute();
      if (i % 50 === 0) largest = Math.max(largest, walBytes());
    }
    largest = Math.max(largest, walBytes());
    const count = await database.db.selectFrom('labels').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', 1).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1500);
    // The automatic checkpoint runs at 1,000 pages of 4 KiB; one transaction's pages may come on top.
    expect(largest).toBeLessThan(6 * 1024 * 1024);
  });

  it('a sync that fails after a commit fails that commit only: the next transaction keeps its lock and its rollback', async () => {
    const label = (t: string) => {
      const now = new Date().toISOString();
      return { project_id: 2, title: t, title_lower: t, color: '#ff0000', description: null, priority: null, created_at: now, updated_at: now } as never;
    };
    const real = WalSync.prototype.sync;
    let failOnce = true;
    WalSync.prototype.sync = function (epoch: number) {
      if (!failOnce) return real.call(this, epoch);
      failOnce = false;
      // As an fdatasync error would come: on a later turn, when another transaction holds the lock.
      return new Promise<void>((_, reject) => setImmediate(() => reject(new Error('EIO (simulated)'))));
    };
    try {
      let releaseB!: () => void;
      const bHolds = new Promise<void>((r) => (releaseB = r));
      const a = database.transaction(async (tx) => {
        await tx.insertInto('labels').values(label('A')).execute();
      });
      const b = database.transaction(async (tx) => {
        await tx.insertInto('labels').values(label('B')).execute();
        await bHolds;
        throw new Error('B rolls back');
      });
      await expect(a).rejects.toThrow(/EIO/);
      // A single write waits for B's lock, however A's failure was handled.
      let written = false;
      const w = database.db.insertInto('labels').values(label('W')).execute().then(() => (written = true));
      await new Promise((r) => setTimeout(r, 50));
      expect(written).toBe(false);
      releaseB();
      await expect(b).rejects.toThrow('B rolls back');
      await w;
      const titles = (await database.db.selectFrom('labels').select('title').where('project_id', '=', 2).orderBy('id').execute()).map((r) => r.title);
      // A's commit stands (only its sync failed); B's insert was rolled back.
      expect(titles).toEqual(['A', 'W']);
    } finally {
      WalSync.prototype.sync = real;
    }
  });
});
