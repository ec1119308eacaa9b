// First start and restarts: root is user 1 with its namespace, the initial root password file
// (mode 0600, reused when a failed start left it behind), the initial root token made once, and
// data kept across restarts.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { verifyPassword } from '../../src/services/passwords.js';
import { type FreshStorage, createFreshStorage } from '../helpers/server.js';

let storage: FreshStorage | undefined;
let dataDir: string;
let dbUrl = '';


beforeAll(async () => {
  storage = await createFreshStorage('labwright-boot-');
  dataDir = storage.dataDir;
  dbUrl = storage.databaseUrl;
});
afterAll(async () => {
  await storage?.destroy();
});

function start(extra: Record<string, string> = {}) {
  return buildApp(loadConfig({ LABWRIGHT_DATA_DIR: dataDir, DATABASE_URL: dbUrl, LOG_LEVEL: 'silent', LABWRIGHT_INITIAL_ROOT_TOKEN: 'boot-root-token', ...extra }));
}

describe('first start and restart', () => {
  it('reuses an initial_root_password file a failed start left behind; root is user 1 with a namespace', async () => {
    writeFileSync(join(dataDir, 'initial_root_password'), 'left-behind-password-1\n', { mode: 0o600 });
    const app = await start();
    try {
      const root = await app.lw.db.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
      expect(root.id).toBe(1);
      expect(root.is_admin).toBe(1);
      expect(await verifyPassword(root.password_digest, 'left-behind-password-1')).toBe(true);
      const ns = await app.lw.db.selectFrom('namespaces').selectAll().where('owner_id', '=', 1).execute();
      expect(ns.map((n) => [n.kind, n.full_path])).toEqual([['user', 'root']]);
      expect(statSync(join(dataDir, 'initial_root_password')).mode & 0o777).toBe(0o600);
      expect(statSync(join(dataDir, 'secret')).mode & 0o777).toBe(0o600);
      const me = await app.inject({ method: 'GET', url: '/api/v4/user', headers: { 'private-token': 'boot-root-token' } });
      expect(me.json()).toMatchObject({ id: 1, username: 'root' });
      const made = await app.inject({
        method: 'POST',
        url: '/api/v4/users',
        headers: { 'private-token': 'boot-root-token' },
        payload: { username: 'kept', email: 'kept@example.com', name: 'Kept', password: 'password-1234' },
      });
      expect(made.statusCode).toBe(201);
    } finally {
      await app.close();
    }
  });

  it('a restart keeps every row, makes no second root or root token, and the token still works', async () => {
    const app = await start();
    try {
      const users = await app.lw.db.selectFrom('users').select(['id', 'username']).orderBy('id').execute();
      expect(users.map((u) => u.username)).toEqual(['root', 'kept']);
      const tokens = await app.lw.db.selectFrom('personal_access_tokens').select('id').where('user_id', '=', 1).execute();
      expect(tokens).toHaveLength(1);
      const me = await app.inject({ method: 'GET', url: '/api/v4/user', headers: { 'private-token': 'boot-root-token' } });
      expect(me.statusCode).toBe(200);
      const ready = await app.inject({ method: 'GET', url: '/-/readiness' });
      expect(ready.json().status).toBe('ok');
    } finally {
      await app.close();
    }
  });
});
