// The one way API routes are declared: merged params, authentication, scopes, rate limits, and
// GitLab's default status codes by method (spec rule 13), so handlers stay thin.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { AppContext } from '../context.js';
import type { UserRow } from '../db/repositories/users.js';
import { ANONYMOUS, authenticate, type Auth } from './auth.js';
import { ApiError, forbidden, preconditionFailed, unauthorized } from './errors.js';
import { withEventChain } from './event-chain.js';
import { mergeParams, Params } from './params.js';
import type { CachedResponse, ResponseCache } from './response-cache.js';

declare module 'fastify' {
  interface FastifyInstance {
    lw: AppContext;
  }
}

export interface Ctx {
  app: AppContext;
  req: FastifyRequest;
  reply: FastifyReply;
  params: Params;
  auth: Auth;
  user: UserRow | null;
  /** Scheme, host and port every URL in a response starts with (no trailing slash). */
  base: string;
  /** Overrides the default status of the method. */
  status(code: number): void;
  header(name: string, value: string): void;
  /** The acting user, or 401. */
  requireUser(): UserRow;
  /** The acting user when an administrator, or 403. */
  requireAdmin(): UserRow;
  /** On a cacheable route: this response must not be kept (its request has effects a hit would skip). */
  noStore(): void;
  /**
   * On a cacheable route: the response depends on something the database does not hold (git
   * refs); `check` is run on every hit and a false ends the kept response.
   */
  onlyWhile(check: () => boolean | Promise<boolean>): void;
}

export interface RouteOptions {
  /** Scopes besides api/read_api that grant this route (for example read_user). */
  extraScopes?: string[];
  /**
   * A GET route whose response is made from the database, the request, the caller and the date
   * alone, without other effects (or declares what else with noStore/onlyWhile): its responses
   * are kept while nothing they were made from has changed (http/response-cache.ts).
   */
  cache?: boolean;
  /**
   * GitLab's sessionless access on a web route (archive downloads): a token that is refused
   * (unknown, expired, without the scope) leaves the caller anonymous instead of failing the request.
   */
  sessionless?: boolean;
}

export type Handler = (c: Ctx) => unknown | Promise<unknown>;

export function baseUrl(app: AppContext, req: FastifyRequest): string {
  if (app.config.externalUrl) return app.config.externalUrl;
  const base = `${req.protocol}://${req.host}`;
  // What work done outside a request (webhook deliveries) names the instance by.
  if (app.lastBase !== base) app.lastBase = base;
  return base;
}

const DEFAULT_STATUS: Record<string, number> = { POST: 201, DELETE: 204 };

/** What a handler set through ctx, read after it returns. */
interface CtxState {
  status: number | undefined;
  /** Headers set through ctx.header while the response may be kept (null: not recording). */
  headers: Array<[string, string]> | null;
  keep: boolean;
  check: (() => boolean | Promise<boolean>) | null;
  /** Tells requests waiting for this response that there is none to share (ResponseCache.takeOff). */
  land: ((made: null) => void) | null;
}

async function buildCtx(app: AppContext, req: FastifyRequest, reply: FastifyReply, opts: RouteOptions, state: CtxState): Promise<Ctx> {
  // Null bytes were refused for every route by app.ts (refuseNullBytes) before this point.
  const merged = mergeParams(req.query, req.body, req.params);
  const params = new Params(merged);
  let auth: Auth;
  try {
    auth = await authenticate(app, req, params, opts);
  } catch (err) {
    // A refused token still counts against the caller's IP, so token guessing is throttled too.
    await app.rateLimiter.hit('unauthenticated', `ip:${req.ip}`);
    if (!(opts.sessionless && err instanceof ApiError && (err.status === 401 || err.status === 403))) throw err;
    auth = ANONYMOUS;
  }
  // The bucket is the token's owner, not a sudo target, so impersonation cannot spend another user's quota.
  if (auth.user) await app.rateLimiter.hit('authenticated', `user:${auth.token?.userId ?? auth.user.id}`);
  else await app.rateLimiter.hit('unauthenticated', `ip:${req.ip}`);
  const ctx: Ctx = {
    app,
    req,
    reply,
    params,
    auth,
    user: auth.user,
    base: baseUrl(app, req),
    status(code) {
      state.status = code;
      reply.code(code);
    },
    header(name, value) {
      reply.header(name, value);
      state.headers?.push([name, value]);
    },
    requireUser() {
      if (!auth.user) throw unauthorized();
      return auth.user;
    },
    requireAdmin() {
      if (!auth.user) throw unauthorized();
      if (!auth.user.is_admin) throw forbidden();
      return auth.user;
    },
    noStore() {
      state.keep = false;
      state.land?.(null);
    },
    onlyWhile(check) {
      if (state.check) {
        const before = state.check;
        state.check = async () => (await before()) && check();
      } else state.check = check;
    },
  };
  return ctx;
}

/** The query string decoded, or null when it cannot be (then nothing is kept). */
function decodedQuery(query: string): string | null {
  if (!query.includes('%')) return query;
  try {
    return decodeURIComponent(query);
  } catch {
    return null;
  }
}

/**
 * The key of a kept response: method, caller (token and acting user), base URL and the URL as
 * sent. Empty (not kept) when the query string may carry a token: the caller is in the key
 * already, and a secret is not kept in memory as part of one.
 */
function responseKey(req: FastifyRequest, c: Ctx): string {
  const url = req.url;
  const q = url.indexOf('?');
  if (q >= 0) {
    const query = decodedQuery(url.slice(q + 1));
    if (query === null || /token/i.test(query)) return '';
  }
  const t = c.auth.token;
  // A line break between base and URL: neither a Host header nor a request line can hold one.
  return `${req.method} ${t ? t.kind : '-'} ${t ? t.id : 0} ${c.user ? c.user.id : 0} ${c.base}\n${url}`;
}

function sendKept(reply: FastifyReply, kept: CachedResponse): Buffer {
  reply.code(200);
  for (const [name, value] of kept.headers) reply.header(name, value);
  reply.type('application/json');
  return kept.body;
}

/** Declares one /api/v4 route. */
export function route(
  fastify: FastifyInstance,
  method: HTTPMethods,
  path: string,
  handler: Handler,
  opts: RouteOptions = {},
): void {
  const cacheable = opts.cache === true && method === 'GET';
  fastify.route({
    method,
    url: path,
    handler: async function apiRoute(req, reply) {
      const state: CtxState = { status: undefined, headers: null, keep: true, check: null, land: null };
      const responses = cacheable ? fastify.lw.responses : null;
      // Taken before authentication: the caller's rows are part of what a kept response is made
      // from, so one is kept only if nothing changed from before they were read.
      let era = responses ? responses.begin() : null;
      const ctx = await buildCtx(fastify.lw, req, reply, opts, state);
      let key = '';
      // A kept response may be sent if it is current now (it is then newer than the caller's rows).
      if (responses && era !== null && responses.begin() !== null) {
        key = responseKey(req, ctx);
        if (key === '') era = null;
        else {
          const kept = responses.get(key);
          if (kept && (kept.check === null || (await kept.check()))) {
            responses.sent();
            return sendKept(reply, kept);
          }
          // Unless another request has kept a newer one meanwhile.
          if (kept && responses.get(key) === kept) responses.delete(key);
          // Another request is making this response now, from the current state: its bytes.
          const current = responses.begin();
          const flight = current === null ? undefined : responses.flight(key, current);
          const shared = flight ? await flight : null;
          if (shared && (shared.check === null || (await shared.check()))) {
            responses.sent(true);
            return sendKept(reply, shared);
          }
          state.headers = [];
        }
      }
      if (!responses || era === null || key === '') return respond(reply, method, state, null, await withEventChain(req, () => handler(ctx)));
      const land = responses.takeOff(key, era);
      state.land = land;
      let made: CachedResponse | null = null;
      try {
        const result = await handler(ctx);
        return respond(reply, method, state, { responses, era, key, made: (m) => (made = m) }, result);
      } finally {
        land(made);
      }
    },
  });
}

interface Keep {
  responses: ResponseCache;
  era: number;
  key: string;
  /** Told the response made, whether it was kept or not (for those waiting for it). */
  made: (m: CachedResponse) => void;
}

/** Sends a handler's result, and keeps it (`keep`) when it is a plain 200 object and the handler kept nothing out. */
function respond(reply: FastifyReply, method: HTTPMethods, state: CtxState, keep: Keep | null, result: unknown): unknown {
  if (reply.sent || result === reply) return reply;
  const explicit = state.status;
  if (result === undefined) {
    reply.code(explicit ?? (method === 'DELETE' ? 204 : 200));
    return reply.send();
  }
  reply.code(explicit ?? DEFAULT_STATUS[method] ?? 200);
  if (keep && state.keep && explicit === undefined && typeof result === 'object' && result !== null) {
    // Serialised here as Fastify would (JSON.stringify), and encoded once, so the bytes kept are
    // the bytes sent (a hit then skips encoding them again: 244 KiB for a 100-item list).
    const body = Buffer.from(JSON.stringify(result));
    const response: CachedResponse = { body, headers: state.headers!, check: state.check };
    keep.responses.set(keep.key, keep.era, response);
    keep.made(response);
    reply.type('application/json');
    return body;
  }
  return result;
}

/**
 * Grape's destroy_conditionally!: with If-Unmodified-Since, 412 when the resource changed after
 * that time (the header has whole seconds, so a change within its second does not count).
 */
export function refuseIfModifiedSince(c: Ctx, updatedAt: string): void {
  const since = c.req.headers['if-unmodified-since'];
  if (typeof since !== 'string') return;
  const t = Date.parse(since);
  if (!Number.isNaN(t) && Math.floor(Date.parse(updatedAt) / 1000) > Math.floor(t / 1000)) throw preconditionFailed();
}
