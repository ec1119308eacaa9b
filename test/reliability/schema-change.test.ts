// A newer version of Labwright started on the same database migrates it while this one runs (the
// rolling upgrade of docs/deployment.md): a column added to a table must not break the statements
// this process prepared before (PostgreSQL refuses to run a prepared `SELECT *` whose result type
// changed: "cached plan must not change result type"), nor SQLite's kept column shapes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOutside } from '../helpers/outside.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, createProject } from '../api/mr-helpers.js';

let s: TestServer;
let pid: number;

beforeAll(async () => {
  s = await startServer();
  pid = (await createProject(s, 'schema-change')).id;
});
afterAll(async () => {
  await closeServer(s);
});

describe('a column added by another process', () => {
  it('statements prepared before it still answer, with the same fields (labels, the caller’s user row)', async () => {
    const labels = async () => {
      const r = await s.request('GET', `/projects/${pid}/labels`);
      expect(r.status).toBe(200);
      return r.body.map((l: any) => l.name).sort();
    };
    // Prepared on several of the pool's connections.
    for (let i = 0; i < 3; i++) {
      expect((await s.request('POST', `/projects/${pid}/labels`, { json: { name: `before-${i}`, color: '#123456' } })).status).toBe(201);
      await Promise.all(Array.from({ length: 5 }, labels));
    }
    const user = await s.createUser('schema-user');
    for (let i = 0; i < 3; i++) expect((await s.request('GET', '/user', { token: user.token })).status).toBe(200);
    const where = { dataDir: s.dataDir, databaseUrl: s.app.lw.config.databaseUrl };
    await runOutside(where, 'alter table labels add column added_by_a_newer_version integer');
    await runOutside(where, 'alter table users add column added_by_a_newer_version integer');
    const after = await s.request('POST', `/projects/${pid}/labels`, { json: { name: 'after', color: '#654321' } });
    expect(after.status).toBe(201);
    expect(after.body).not.toHaveProperty('added_by_a_newer_version');
    for (const names of await Promise.all(Array.from({ length: 5 }, labels))) expect(names).toEqual(['after', 'before-0', 'before-1', 'before-2']);
    // The caller's own row, read on every request that is not answered from the cache.
    for (const r of await Promise.all(Array.from({ length: 5 }, () => s.request('GET', '/user', { token: user.token })))) {
      expect(r.status).toBe(200);
      expect(r.body.username).toBe('schema-user');
      expect(r.body).not.toHaveProperty('added_by_a_newer_version');
    }
  });
});
