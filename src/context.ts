// The services every route and service function share, built once per app.
import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { DB } from './db/types.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { CachedResponse } from './http/kept-response.js';
import type { ResponseCache } from './http/response-cache.js';
import type { WorkerRefresher } from './http/refresher.js';

export interface AppContext {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  rateLimiter: RateLimiter;
  /** Whole responses of cacheable read routes (http/response-cache.ts); null when switched off. */
  responses: ResponseCache | null;
  /** Directory holding one bare repository per project. */
  reposDir: string;
  log: FastifyBaseLogger;
  /** Start-up tasks and shutdown hooks modules register (reconcilers, timers). */
  onClose: Array<() => Promise<void> | void>;
  /** Every route as registered (method and URL with its prefix): the route fuzzer and the response registry test walk it. */
  routes: Array<{ method: string; url: string }>;
  /** The base URL of the latest request without LABWRIGHT_EXTERNAL_URL (instanceBase). */
  lastBase: string | null;
  /**
   * Set in the response refresher's own app only (a worker thread, http/refresher.ts): the
   * responses its routes made for a refresh round, by the round's request number.
   */
  refresh?: { made: Map<number, { response: CachedResponse; base: string; userId: number }> };
  /** The server's response refresher (http/refresher.ts), when refresh rounds are on. */
  refresher?: WorkerRefresher;
}

/** The instance's own URL for work done outside a request: the external URL, else the latest request's. */
export function instanceBase(app: AppContext): string {
  return app.config.externalUrl ?? app.lastBase ?? `http://${app.config.host}:${app.config.port}`;
}
