// Typed configuration from the environment. Every variable is documented in docs/configuration.md.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export type Plan = 'free' | 'premium' | 'ultimate';
export type Offering = 'self-managed' | 'hosted' | 'dedicated';

export interface RateLimitConfig {
  /** Requests per period for unauthenticated callers, per IP; 0 disables. */
  unauthenticatedPerPeriod: number;
  /** Requests per period for authenticated callers, per user; 0 disables. */
  authenticatedPerPeriod: number;
  periodSeconds: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /**
   * Keep read results while nothing has changed them: on SQLite while the database file is
   * unchanged (LABWRIGHT_SQLITE_READ_CACHE), on PostgreSQL until a change notice comes
   * (LABWRIGHT_POSTGRES_READ_CACHE), each for its own database kind.
   */
  readCache: boolean;
  /**
   * Keep whole responses of the read routes that allow it while the read cache vouches for the
   * data they were made from (LABWRIGHT_RESPONSE_CACHE; nothing is kept with the read cache off).
   */
  responseCache: boolean;
  /**
   * After this process's writes, make the kept responses read lately again in a worker thread
   * before the writes are acknowledged, instead of emptying the store
   * (LABWRIGHT_RESPONSE_REFRESH: `true`, the worker starting once it would be of use; `eager`,
   * at start; `false`, never).
   */
  responseRefresh: 'on' | 'eager' | 'off';
  externalUrl: string | null;
  initialRootPassword: string | null;
  initialRootToken: string | null;
  redisUrl: string | null;
  secret: string;
  rateLimit: RateLimitConfig;
  /** Access token lifetime for OAuth tokens, seconds. */
  oauthAccessTokenTtl: number;
  plan: Plan;
  offering: Offering;
  /** Maximum length of a query string before 414. */
  maxQueryLength: number;
  /** Offset pagination cap on keyset-capable lists. */
  maxOffset: number;
  logLevel: string;
  trustProxy: boolean;
  /**
   * The instance's default branch protection (GitLab's `default_branch_protection`, 0-4) for
   * projects in personal namespaces and in groups that set none (LABWRIGHT_DEFAULT_BRANCH_PROTECTION).
   */
  defaultBranchProtection: number;
  webhooks: WebhookConfig;
}

export interface WebhookConfig {
  /**
   * Let webhooks call this machine and the local network (LABWRIGHT_WEBHOOK_ALLOW_LOCAL, GitLab's
   * allow_local_requests_from_web_hooks_and_services; off by default, as GitLab).
   */
  allowLocal: boolean;
  /** Seconds a delivery may take (LABWRIGHT_WEBHOOK_TIMEOUT, GitLab's webhook_timeout, 10). */
  timeoutSeconds: number;
  /** Rest hooks that keep failing (LABWRIGHT_WEBHOOK_AUTO_DISABLE; off, as on GitLab Self-Managed). */
  autoDisable: boolean;
  /** Deliveries running at once per process (LABWRIGHT_WEBHOOK_CONCURRENCY, 8). */
  concurrency: number;
}

function intEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/** The instance secret keys token digests; generated once and kept in the data dir when not given. */
function loadSecret(env: NodeJS.ProcessEnv, dataDir: string): string {
  if (env.LABWRIGHT_SECRET) return env.LABWRIGHT_SECRET;
  const file = join(dataDir, 'secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('hex');
  try {
    writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process started on the same data dir at the same moment: use the secret it wrote.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw err;
  }
  return secret;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.LABWRIGHT_DATA_DIR || './data');
  mkdirSync(dataDir, { recursive: true });
  const databaseUrl = env.DATABASE_URL || null;
  // Both are checked, whichever database is in use.
  const sqliteReadCache = oneOf(env, 'LABWRIGHT_SQLITE_READ_CACHE', ['true', 'false'] as const, 'true');
  const postgresReadCache = oneOf(env, 'LABWRIGHT_POSTGRES_READ_CACHE', ['true', 'false'] as const, 'true');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DATABASE_URL must start with postgres:// (leave it unset for the embedded SQLite database)');
  }
  let externalUrl = env.LABWRIGHT_EXTERNAL_URL || null;
  if (externalUrl) {
    const u = new URL(externalUrl);
    externalUrl = (u.origin + u.pathname).replace(/\/+$/, '');
  }
  return {
    port: intEnv(env, 'PORT', 3000),
    host: env.HOST || '127.0.0.1',
    dataDir,
    databaseUrl,
    externalUrl,
    initialRootPassword: env.LABWRIGHT_INITIAL_ROOT_PASSWORD || null,
    initialRootToken: env.LABWRIGHT_INITIAL_ROOT_TOKEN || null,
    redisUrl: env.REDIS_URL || null,
    secret: loadSecret(env, dataDir),
    rateLimit: {
      unauthenticatedPerPeriod: intEnv(env, 'LABWRIGHT_RATE_LIMIT_UNAUTHENTICATED', 0),
      authenticatedPerPeriod: intEnv(env, 'LABWRIGHT_RATE_LIMIT_AUTHENTICATED', 0),
      periodSeconds: intEnv(env, 'LABWRIGHT_RATE_LIMIT_PERIOD', 60) || 60,
    },
    oauthAccessTokenTtl: intEnv(env, 'LABWRIGHT_OAUTH_ACCESS_TOKEN_TTL', 7200),
    plan: oneOf(env, 'LABWRIGHT_PLAN', ['free', 'premium', 'ultimate'] as const, 'free'),
    offering: oneOf(env, 'LABWRIGHT_OFFERING', ['self-managed', 'hosted', 'dedicated'] as const, 'self-managed'),
    maxQueryLength: intEnv(env, 'LABWRIGHT_MAX_QUERY_LENGTH', 16384),
    maxOffset: intEnv(env, 'LABWRIGHT_MAX_OFFSET', 50000),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: env.LABWRIGHT_TRUST_PROXY === 'true',
    defaultBranchProtection: Number(oneOf(env, 'LABWRIGHT_DEFAULT_BRANCH_PROTECTION', ['0', '1', '2', '3', '4'] as const, '2')),
    webhooks: {
      allowLocal: oneOf(env, 'LABWRIGHT_WEBHOOK_ALLOW_LOCAL', ['true', 'false'] as const, 'false') === 'true',
      timeoutSeconds: Math.max(1, intEnv(env, 'LABWRIGHT_WEBHOOK_TIMEOUT', 10)),
      autoDisable: oneOf(env, 'LABWRIGHT_WEBHOOK_AUTO_DISABLE', ['true', 'false'] as const, 'false') === 'true',
      concurrency: Math.max(1, intEnv(env, 'LABWRIGHT_WEBHOOK_CONCURRENCY', 8)),
    },
    readCache: (databaseUrl ? postgresReadCache : sqliteReadCache) === 'true',
    responseCache: oneOf(env, 'LABWRIGHT_RESPONSE_CACHE', ['true', 'false'] as const, 'true') === 'true',
    responseRefresh: ({ true: 'on', eager: 'eager', false: 'off' } as const)[oneOf(env, 'LABWRIGHT_RESPONSE_REFRESH', ['true', 'eager', 'false'] as const, 'true')],
  };
}
