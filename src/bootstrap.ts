// First start: the admin `root` (id 1) with its namespace, its password, and the optional token.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { AppContext } from './context.js';
import { createPersonalAccessToken } from './services/personal-access-tokens.js';
import { generateToken, tokenDigest } from './services/secrets.js';
import { createUser } from './services/users.js';

/**
 * The user named exactly `root`, found through the lower(username) index: an exact `username =`
 * scans every user on SQLite (78 ms with 410,000 users at start-up).
 */
async function findRoot(ctx: AppContext): Promise<{ id: number } | undefined> {
  const row = await ctx.db.selectFrom('users').select(['id', 'username']).where(sql<string>`lower(username)`, '=', 'root').executeTakeFirst();
  return row?.username === 'root' ? { id: row.id } : undefined;
}

export async function bootstrap(ctx: AppContext): Promise<void> {
  const existing = await findRoot(ctx);
  let rootId = existing?.id;
  if (rootId === undefined) {
    let password = ctx.config.initialRootPassword;
    if (!password) {
      const file = join(ctx.config.dataDir, 'initial_root_password');
      // A start that wrote the file but failed before creating root must not leave a stale password there.
      if (existsSync(file)) password = readFileSync(file, 'utf8').trim();
      if (!password) {
        password = generateToken();
        writeFileSync(file, password + '\n', { mode: 0o600 });
      }
    }
    try {
      const root = await createUser(ctx, { username: 'root', name: 'Administrator', email: 'admin@example.com', password, isAdmin: true });
      rootId = root.id;
      ctx.log.info({ id: root.id }, 'created the administrator account root');
    } catch (err) {
      // Another process sharing the database created it first.
      const again = await findRoot(ctx);
      if (!again) throw err;
      rootId = again.id;
    }
  }
  const token = ctx.config.initialRootToken;
  if (token) {
    const digest = tokenDigest(ctx.config.secret, token);
    const has = await ctx.db.selectFrom('personal_access_tokens').select('id').where('token_digest', '=', digest).executeTakeFirst();
    if (!has) {
      try {
        await createPersonalAccessToken(ctx, { userId: rootId, name: 'initial root token', scopes: ['api', 'sudo'], expiresAt: null, value: token });
      } catch {
        /* created concurrently by another process */
      }
    }
  }
}
