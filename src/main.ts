#!/usr/bin/env node
// CLI: labwright serve | migrate | user create | token create
import { parseArgs } from 'node:util';
import { buildApp } from './app.js';
import { bootstrap } from './bootstrap.js';
import { loadConfig } from './config.js';
import { createDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrations/index.js';
import { findUserByUsername } from './db/repositories/users.js';
import { createPersonalAccessToken, todayUtc, validateScopes } from './services/personal-access-tokens.js';
import { createUser } from './services/users.js';
import { createRateLimiter } from './http/rate-limit.js';
import type { AppContext } from './context.js';
import { join } from 'node:path';
import { isRefresherThread, runRefresherWorker } from './refresher-worker.js';

const USAGE = `usage:
  labwright serve                      start the server (default)
  labwright migrate                    bring the database schema up to date
  labwright user create --username U --email E [--name N] [--password P] [--admin]
  labwright token create --user U --scopes api,read_user [--name N] [--expires-at YYYY-MM-DD]`;

async function serve(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config);
  await app.listen({ port: config.port, host: config.host });
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** A context without HTTP for CLI commands. */
async function cliContext(): Promise<AppContext> {
  const config = loadConfig();
  const database = createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, readCache: config.readCache });
  await migrateToLatest(database);
  const log = { info() {}, warn() {}, error() {}, debug() {}, fatal() {}, trace() {}, child() { return log; }, level: 'silent', silent() {} };
  const ctx: AppContext = {
    config,
    database,
    db: database.db,
    rateLimiter: await createRateLimiter(config.rateLimit, null),
    responses: null,
    reposDir: join(config.dataDir, 'repositories'),
    log: log as never,
    onClose: [],
    routes: [],
    lastBase: null,
  };
  // Root is always user 1, even when the first command run on a fresh data dir is `user create`.
  await bootstrap(ctx);
  return ctx;
}

/** `--expires-at`: a valid YYYY-MM-DD date after today, as the API requires. */
function readExpiresAt(v: string | undefined): string | null {
  if (v === undefined) return null;
  const d = /^\d{4}-\d{2}-\d{2}$/.test(v) ? new Date(`${v}T00:00:00Z`) : new Date(NaN);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) throw new Error('--expires-at must be a date YYYY-MM-DD');
  if (v <= todayUtc()) throw new Error('--expires-at must be in the future');
  return v;
}

async function main(argv: string[]): Promise<void> {
  const [cmd = 'serve', sub, ...rest] = argv;
  if (cmd === 'serve') return serve();
  if (cmd === 'migrate') {
    const ctx = await cliContext();
    await ctx.database.close();
    console.log('database is up to date');
    return;
  }
  if (cmd === 'user' && sub === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { username: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' }, admin: { type: 'boolean' } },
    });
    if (!values.username || !values.email) throw new Error('--username and --email are required');
    const ctx = await cliContext();
    const user = await createUser(ctx, {
      username: values.username,
      email: values.email,
      name: values.name ?? values.username,
      password: values.password ?? null,
      isAdmin: values.admin ?? false,
    });
    await ctx.database.close();
    console.log(`created user ${user.username} (id ${user.id})`);
    return;
  }
  if (cmd === 'token' && sub === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { user: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' }, 'expires-at': { type: 'string' } },
    });
    if (!values.user || !values.scopes) throw new Error('--user and --scopes are required');
    const scopes = values.scopes.split(',').map((s) => s.trim()).filter(Boolean);
    validateScopes(scopes);
    const expiresAt = readExpiresAt(values['expires-at']);
    const ctx = await cliContext();
    const user = await findUserByUsername(ctx.db, values.user);
    if (!user) throw new Error(`no user named ${values.user}`);
    const { token } = await createPersonalAccessToken(ctx, {
      userId: user.id,
      name: values.name ?? 'cli token',
      scopes,
      expiresAt,
    });
    await ctx.database.close();
    console.log(token);
    return;
  }
  console.error(USAGE);
  process.exitCode = 2;
}

/** API errors carry GitLab bodies; print their text rather than the JSON. */
function errorText(err: Error & { body?: { message?: unknown; error?: unknown } }): string {
  const b = err.body;
  if (!b || typeof b !== 'object') return err.message;
  const m = b.error ?? b.message;
  return typeof m === 'string' ? m : JSON.stringify(m);
}

if (isRefresherThread()) {
  // The bundle (npm run build) is also the response refresher's entry (http/refresher.ts).
  runRefresherWorker().catch((err: unknown) => {
    console.error('labwright: the response refresher could not start:', err);
    process.exit(1);
  });
} else {
  main(process.argv.slice(2)).catch((err: Error) => {
    console.error(`labwright: ${errorText(err)}`);
    process.exit(1);
  });
}
