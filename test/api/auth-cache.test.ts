// The authentication cache (src/http/auth.ts): a resolved token is reused only while no process
// can have changed a user or an access token. These tests change rows behind the server's back,
// through a connection of their own, and expect the very next request to see it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOutside, until } from '../helpers/outside.js';
import { startServer, TEST_DB, type TestServer } from '../helpers/server.js';

let s: TestServer;

beforeAll(async () => {
  s = await startServer();
});

afterAll(async () => {
  await s?.close();
});

/** A statement on the server's database through a connection of the test's own (another process's view). */
function outside(statement: string, params: unknown[] = [], opts: { noTriggers?: boolean } = {}): Promise<void> {
  return runOutside({ dataDir: s.dataDir, databaseUrl: s.app.lw.config.databaseUrl }, statement, params, opts);
}

async function userWithToken(name: string) {
  const u = await s.createUser(`${name}-${Date.now().toString(36)}`);
  expect((await s.request('GET', '/user', { token: u.token })).status).toBe(200);
  // The first use writes last_used_at in the background; that write of this process would
  // invalidate the entry by itself, so wait for it before filling the cache.
  const row = () => s.app.lw.db.selectFrom('personal_access_tokens').select(['id', 'last_used_at']).where('user_id', '=', u.id).executeTakeFirstOrThrow();
  for (let i = 0; (await row()).last_used_at === null; i++) {
    expect(i).toBeLessThan(100);
    await new Promise((r) => setTimeout(r, 20));
  }
  // Twice: the second answer comes from the cache.
  for (let i = 0; i < 2; i++) expect((await s.request('GET', '/user', { token: u.token })).status).toBe(200);
  return { ...u, tokenId: (await row()).id };
}

describe('authentication cache', () => {
  it('a token revoked in the database by another process is refused by the next request', async () => {
    const u = await userWithToken('cache-revoke');
    await outside('update personal_access_tokens set revoked = 1 where id = ?', [u.tokenId]);
    // PostgreSQL: the notice travels on its own connection; allow it the time of a local round trip.
    if (TEST_DB === 'postgres') await new Promise((r) => setTimeout(r, 50));
    expect((await s.request('GET', '/user', { token: u.token })).status).toBe(401);
  });

  it('a user blocked or a scope narrowed by another process takes effect at once', async () => {
    const u = await userWithToken('cache-block');
    await outside("update personal_access_tokens set scopes = ? where id = ?", [JSON.stringify(['read_user']), u.tokenId]);
    if (TEST_DB === 'postgres') await new Promise((r) => setTimeout(r, 50));
    // read_user allows GET /user but not the projects API.
    expect((await s.request('GET', '/projects', { token: u.token })).status).toBe(403);
    expect((await s.request('GET', '/user', { token: u.token })).status).toBe(200);
    await outside("update users set state = 'blocked' where id = ?", [u.id]);
    if (TEST_DB === 'postgres') await new Promise((r) => setTimeout(r, 50));
    expect((await s.request('GET', '/user', { token: u.token })).status).toBe(401);
  });

  it('changes through this server are seen by its next request', async () => {
    const u = await userWithToken('cache-own');
    expect((await s.request('DELETE', `/personal_access_tokens/${u.tokenId}`)).status).toBe(204);
    expect((await s.request('GET', '/user', { token: u.token })).status).toBe(401);
    const v = await userWithToken('cache-own-block');
    expect((await s.request('POST', `/users/${v.id}/block`)).status).toBe(201);
    expect((await s.request('GET', '/user', { token: v.token })).status).toBe(401);
  });

  it('PostgreSQL: while the notice connection is down nothing is served from the cache, and it reconnects', async () => {
    const database = s.app.lw.database;
    if (TEST_DB !== 'postgres') {
      // SQLite has no such connection: data_version is read in the same snapshot as the rows.
      expect(typeof database.authChanges()).toBe('number');
      return;
    }
    const u = await userWithToken('cache-down');
    expect(await until(() => database.authChanges() !== null, 3000)).toBe(true);
    const admin = new pg.Client({ connectionString: s.app.lw.config.databaseUrl! });
    await admin.connect();
    try {
      // The notice connection's last statement is its LISTEN, or the echo it sends to check it still listens.
      const { rowCount } = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and (query like 'listen %' or query like 'select pg\\_notify($1, $2)')",
      );
      expect(rowCount).toBe(1);
      expect(await until(() => database.authChanges() === null, 3000)).toBe(true);
      // Revoked without a notice: only a fresh read can see it.
      await outside('update personal_access_tokens set revoked = 1 where id = ?', [u.tokenId], { noTriggers: true });
      expect((await s.request('GET', '/user', { token: u.token })).status).toBe(401);
      expect(await until(() => database.authChanges() !== null, 5000)).toBe(true);
    } finally {
      await admin.end();
    }
  });
});
