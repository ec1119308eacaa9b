// The response store's refresh rounds (http/response-cache.ts) with a refresher the test controls:
// what is answered from the store while a round runs, what waits for it, and what empties the
// store instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations/index.js';
import type { CachedResponse, MadeResponse, Recipe, RefreshBatch, Refresher } from '../../src/http/kept-response.js';
import { ResponseCache } from '../../src/http/response-cache.js';
import { runOutside, until } from '../helpers/outside.js';
import { createFreshStorage, TEST_DB, type FreshStorage } from '../helpers/server.js';

let storage: FreshStorage;
let database: Database;

beforeAll(async () => {
  storage = await createFreshStorage('labwright-refresh-');
  database = createDatabase({ databaseUrl: storage.databaseUrl || null, dataDir: storage.dataDir });
  await migrateToLatest(database);
});
afterAll(async () => {
  await database?.close();
  await storage?.destroy();
});

/** A refresher whose batches the test answers. */
class Manual implements Refresher {
  up = true;
  batches: Array<{ recipes: Recipe[]; answer: (b: RefreshBatch) => void; fail: (e: Error) => void }> = [];
  ready(): boolean {
    return this.up;
  }
  refresh(recipes: Recipe[]): Promise<RefreshBatch> {
    return new Promise((answer, fail) => this.batches.push({ recipes, answer, fail }));
  }
}

const recipe = (url: string): Recipe => ({ url, headers: { host: 'x' }, identity: { kind: 'personal', id: 1 }, userId: 1, base: 'http://x' });
const response = (text: string): CachedResponse => ({ body: Buffer.from(text), headers: [['x-total', '1']], check: null });
const made = (text: string): MadeResponse => ({ body: new Uint8Array(Buffer.from(text)), headers: [['x-total', '2']], branches: null });
const nextTurn = () => new Promise((r) => setImmediate(r));
let labels = 0;
/** A write of this process (it changes a row, as another process's must for its change to be seen). */
const write = () => {
  const now = new Date().toISOString();
  return database.db.insertInto('labels').values({ project_id: 1, title: `l${++labels}`, title_lower: `l${labels}`, color: '#ff0000', description: null, priority: null, created_at: now, updated_at: now } as never).execute();
};

/** A store with `keys` kept (and just read) from a settled state. */
async function storeWith(refresher: Refresher | null, keys: string[]): Promise<ResponseCache> {
  const rc = new ResponseCache(database, { refresher });
  await nextTurn();
  const era = rc.begin()!;
  expect(rc.settled()).toBe(true);
  for (const k of keys) expect(rc.set(k, era, response(`old ${k}`), recipe(`/${k}`))).toBe(true);
  for (const k of keys) rc.get(k);
  return rc;
}

describe('refresh rounds', () => {
  it('answer from the store while a round runs, hold the write until it is installed, then answer the new bytes', async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, ['a', 'b']);
    await write();
    expect(rc.settled()).toBe(false);
    // The write's response is held: a round starts.
    const held = rc.covered();
    expect(held).not.toBeNull();
    expect(refresher.batches).toHaveLength(1);
    expect(refresher.batches[0]!.recipes.map((r) => r.url).sort()).toEqual(['/a', '/b']);
    // Meanwhile: the old bytes, and nothing new is kept.
    rc.begin();
    expect(rc.get('a')!.body.toString()).toBe('old a');
    expect(rc.set('c', rc.begin()!, response('new c'))).toBe(false);
    let released = false;
    void held!.then(() => (released = true));
    await nextTurn();
    expect(released).toBe(false);
    // One of the two could not be made again (an access lost): it is dropped.
    const order = refresher.batches[0]!.recipes.map((r) => r.url);
    refresher.batches[0]!.answer({ made: order.map((u) => (u === '/a' ? made('new a') : null)), flipAt: null });
    await held;
    expect(released).toBe(true);
    expect(rc.settled()).toBe(true);
    expect(rc.get('a')!.body.toString()).toBe('new a');
    expect(rc.get('a')!.headers).toEqual([['x-total', '2']]);
    expect(rc.get('b')).toBeUndefined();
    expect(rc.stats()).toMatchObject({ refreshed: 1, unmade: 1 });
  });

  it('a failed round empties the store and lets everything held go', async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, ['a']);
    await write();
    const held = rc.covered()!;
    refresher.batches[0]!.fail(new Error('worker gone'));
    await held;
    expect(rc.get('a')).toBeUndefined();
    expect(rc.settled()).toBe(true);
    expect(rc.stats().restarts['round failed']).toBe(1);
  });

  it("a round overtaken by another process's write is not installed", async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, ['a']);
    await write();
    const held = rc.covered()!;
    await runOutside({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl || null }, "insert into labels (project_id, title, title_lower, color, created_at, updated_at) values (2, ?, ?, '#ffffff', 'now', 'now')", ['outside', 'outside']);
    if (TEST_DB === 'postgres') expect(await until(async () => (rc.begin(), rc.get('a') === undefined))).toBe(true);
    refresher.batches[0]!.answer({ made: [made('stale a')], flipAt: null });
    await held;
    await nextTurn();
    rc.begin();
    expect(rc.get('a')).toBeUndefined();
  });

  it('with nothing read lately, or no refresher, the store is emptied at once and nothing waits', async () => {
    const rc = await storeWith(null, ['a']);
    await write();
    expect(rc.covered()).toBeNull();
    expect(rc.get('a')).toBeUndefined();
    const refresher = new Manual();
    refresher.up = false;
    const rc2 = await storeWith(refresher, ['a']);
    await write();
    expect(rc2.covered()).toBeNull();
    expect(refresher.batches).toHaveLength(0);
  });

  it('a response that will not be kept is not shared with requests that come while a write waits', async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, ['a']);
    const era = rc.begin()!;
    const land = rc.takeOff('f', era);
    expect(rc.flight('f', era)).toBeDefined();
    await write();
    expect(rc.flight('f', rc.begin()!)).toBeUndefined();
    land(null);
    const held = rc.covered()!;
    refresher.batches[0]!.answer({ made: [made('new a')], flipAt: null });
    await held;
    // Settled again: a new flight is joined.
    const era2 = rc.begin()!;
    rc.takeOff('g', era2);
    expect(rc.flight('g', era2)).toBeDefined();
  });

  it('a response asked for while a write waits is not kept, but the next round makes it for the store', async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, ['a']);
    await write();
    const held = rc.covered()!;
    // 'w' is asked for and made meanwhile (from the newer data): not kept, wanted.
    expect(rc.set('w', rc.begin()!, response('w'), recipe('/w'))).toBe(false);
    rc.want('w', recipe('/w'), response('w'));
    refresher.batches[0]!.answer({ made: refresher.batches[0]!.recipes.map((r) => made(`new ${r.url}`)), flipAt: null });
    await held;
    // Not in that round (it had begun); the next write's round makes it.
    await write();
    const second = rc.covered()!;
    expect(await until(async () => refresher.batches.length === 2, 1000)).toBe(true);
    expect(refresher.batches[1]!.recipes.map((r) => r.url).sort()).toEqual(['/a', '/w']);
    refresher.batches[1]!.answer({ made: refresher.batches[1]!.recipes.map((r) => made(`new ${r.url}`)), flipAt: null });
    await second;
    expect(rc.get('w')!.body.toString()).toBe('new /w');
  });

  it('with only wanted responses (nothing kept), a write waits for nothing: the round fills the store behind it', async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, []);
    await write();
    rc.begin();
    rc.want('w', recipe('/w'), response('w'));
    await write();
    expect(rc.covered()).toBeNull();
    expect(await until(async () => refresher.batches.length === 1, 1000)).toBe(true);
    refresher.batches[0]!.answer({ made: [made('filled w')], flipAt: null });
    await nextTurn();
    expect(rc.get('w')!.body.toString()).toBe('filled w');
    expect(rc.stats().wanted).toBe(0);
  });

  it('a round that does not end in time is given up: the store is emptied and nothing waits longer', async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, ['a']);
    await write();
    const started = performance.now();
    await rc.covered()!;
    expect(performance.now() - started).toBeGreaterThanOrEqual(450);
    expect(rc.stats().restarts['round too slow']).toBe(1);
    expect(rc.get('a')).toBeUndefined();
    // Its late answer changes nothing.
    refresher.batches[0]!.answer({ made: [made('late a')], flipAt: null });
    await nextTurn();
    expect(rc.get('a')).toBeUndefined();
  });

  it('closing stops the rounds and lets everything held go', async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, ['a']);
    await write();
    const held = rc.covered()!;
    rc.close();
    await held;
    expect(rc.stats().waiting).toBe(0);
    for (let i = 0; i < 2; i++) {
      await write();
      expect(rc.covered()).toBeNull();
    }
    expect(refresher.batches).toHaveLength(1);
  });

  it('rounds are paced: the next one waits twice as long as the last took', async () => {
    const refresher = new Manual();
    const rc = await storeWith(refresher, ['a']);
    await write();
    const first = rc.covered()!;
    await new Promise((r) => setTimeout(r, 30));
    refresher.batches[0]!.answer({ made: [made('a1')], flipAt: null });
    await first;
    rc.get('a');
    await write();
    const second = rc.covered()!;
    // Not yet: the pause after a 30 ms round.
    expect(refresher.batches).toHaveLength(1);
    expect(await until(async () => refresher.batches.length === 2, 1000)).toBe(true);
    refresher.batches[1]!.answer({ made: [made('a2')], flipAt: null });
    await second;
    expect(rc.get('a')!.body.toString()).toBe('a2');
  });

  it("a write tried in the refresher's pinned snapshot is refused and leaves the snapshot whole", async () => {
    const readOnly = createDatabase({ databaseUrl: storage.databaseUrl || null, dataDir: storage.dataDir, readOnly: true, readCache: false });
    try {
      const count = async () => (await readOnly.db.selectFrom('labels').select('id').execute()).length;
      let seen = 0;
      await readOnly.pinRead(async () => {
        const before = await count();
        seen = before;
        await write();
        expect(await count()).toBe(before);
        await expect(readOnly.db.updateTable('labels').set({ description: 'x' }).where('id', '=', 1).execute()).rejects.toThrow(/reading only/);
        await expect(readOnly.transaction(async () => undefined)).rejects.toThrow();
        // Still the same snapshot, and still usable.
        expect(await count()).toBe(before);
      });
      // Outside the pin: the write made meanwhile is seen.
      expect(await count()).toBe(seen + 1);
    } finally {
      await readOnly.close();
    }
  });

  it('the visible epoch moves with commits and single writes, not with the statements of a transaction or a rollback', async () => {
    const before = database.visibleEpoch();
    await database.transaction(async (trx) => {
      const now = new Date().toISOString();
      await trx.insertInto('labels').values({ project_id: 3, title: 'in-tx', title_lower: 'in-tx', color: '#ff0000', description: null, priority: null, created_at: now, updated_at: now } as never).execute();
      expect(database.visibleEpoch()).toBe(before);
    });
    expect(database.visibleEpoch()).toBe(before + 1);
    await expect(
      database.transaction(async (trx) => {
        await trx.selectFrom('labels').select('id').execute();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(database.visibleEpoch()).toBe(before + 1);
    await write();
    expect(database.visibleEpoch()).toBe(before + 2);
  });
});
