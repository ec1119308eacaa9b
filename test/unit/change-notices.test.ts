// The PostgreSQL notice connection behind the authentication cache (src/db/change-notices.ts): it
// counts change notices, and a connection that stops passing them on, even without failing, is
// noticed by its heartbeat and replaced. On SQLite there is no such connection; the file's
// data_version plays its part (test/api/auth-cache.test.ts).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_CHANGES_CHANNEL, ChangeNotices } from '../../src/db/change-notices.js';
import { until } from '../helpers/outside.js';
import { createFreshStorage, TEST_DB, type FreshStorage } from '../helpers/server.js';

let storage: FreshStorage;

beforeAll(async () => {
  storage = await createFreshStorage('labwright-notices-');
});

afterAll(async () => {
  await storage?.destroy();
});

describe('change notices', () => {
  it('counts notices, and a connection that silently stops listening is noticed and replaced', async () => {
    if (TEST_DB !== 'postgres') {
      expect(storage.databaseUrl).toBe('');
      return;
    }
    const notices = new ChangeNotices(pg.Client, storage.databaseUrl, [AUTH_CHANGES_CHANNEL], { heartbeatMs: 100, timeoutMs: 300, reconnectMs: 100 });
    const other = new pg.Client({ connectionString: storage.databaseUrl });
    await other.connect();
    try {
      // Opened on first use: null until it listens.
      expect(notices.stamp()).toBeNull();
      expect(await until(() => notices.stamp() !== null, 3000)).toBe(true);
      const first = notices.stamp()!;
      // Heartbeats (payloads of their own) are not changes.
      await new Promise((r) => setTimeout(r, 400));
      expect(notices.stamp()).toBe(first);
      await other.query(`select pg_notify('${AUTH_CHANGES_CHANNEL}', '')`);
      expect(await until(() => notices.stamp() === first + 1, 2000)).toBe(true);
      // The listening session stops receiving, as behind a pooler that drops notices: no error, no
      // end of the connection; only the missing heartbeat tells.
      const client = (notices as unknown as { client: pg.Client }).client;
      await client.query('unlisten *');
      expect(await until(() => notices.stamp() === null, 3000)).toBe(true);
      expect(await until(() => notices.stamp() !== null, 3000)).toBe(true);
      expect(notices.stamp()).toBeGreaterThan(first + 1);
    } finally {
      await other.end();
      await notices.close();
    }
    expect(notices.stamp()).toBeNull();
  });
});
