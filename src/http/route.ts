// The one way API routes are declared: merged params, authentication, scopes, rate limits, and
// GitLab's default status codes by method (spec rule 13), so handlers stay thin.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { AppContext } from '../context.js';
import { giveWay, giveWayIfLong } from '../db/database.js';
import type { UserRow } from '../db/repositories/users.js';
import { ANONYMOUS, authenticate, refreshRequest, type Auth } from './auth.js';
import { ApiError, forbidden, preconditionFailed, unauthorized } from './errors.js';
import { withEventChain } from './event-chain.js';
import { mergeParams, Params } from './params.js';
import type { BranchRef, CachedResponse, Recipe } from './kept-response.js';
import type { ResponseCache } from './response-cache.js';

declare module 'fastify' {
  interface FastifyInstance {
    lw: AppContext;
  }
  interface FastifyRequest {
    /** Answered with a response from the store as it is (app.ts sends it without waiting for a refresh round). */
    lwFromStore?: true;
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
   * refs); `check` is run on every hit and a false ends the kept response. `branches` says what it
   * checks, as data: without it the response cannot be made again by a refresh round.
   */
  onlyWhile(check: () => boolean | Promise<boolean>, branches?: readonly BranchRef[]): void;
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
  /** What the checks check, as data; null once a check without it was added. */
  branches: BranchRef[] | null;
  /** Tells requests waiting for this response that there is none to share (ResponseCache.takeOff). */
  land: ((made: null) => void) | null;
}

function freshState(): CtxState {
  return { status: undefined, headers: null, keep: true, check: null, branches: [], land: null };
}

async function buildCtx(app: AppContext, req: FastifyRequest, reply: FastifyReply, opts: RouteOptions, state: CtxState): Promise<Ctx> {
  // Null bytes were refused for every route by app.ts (refuseNullBytes) before this point.
  const merged = mergeParams(req.query, req.body, req.params);
  const params = new Params(merged);
  // A refresh round's request (the refresher's own app only) was counted when it was first made.
  const counted = !(app.refresh && refreshRequest(req));
  let auth: Auth;
  try {
    auth = await authenticate(app, req, params, opts);
  } catch (err) {
    // A refused token still counts against the caller's IP, so token guessing is throttled too.
    if (counted) await app.rateLimiter.hit('unauthenticated', `ip:${req.ip}`);
    if (!(opts.sessionless && err instanceof ApiError && (err.status === 401 || err.status === 403))) throw err;
    auth = ANONYMOUS;
  }
  // The bucket is the token's owner, not a sudo target, so impersonation cannot spend another user's quota.
  if (!counted) {
    // Not counted again.
  } else if (auth.user) await app.rateLimiter.hit('authenticated', `user:${auth.token?.userId ?? auth.user.id}`);
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
    onlyWhile(check, branches) {
      if (state.check) {
        const before = state.check;
        state.check = async () => (await before()) && check();
      } else state.check = check;
      state.branches = branches && state.branches ? [...state.branches, ...branches] : null;
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

/** Headers a kept response may depend on besides the caller's token (responseKey's base, sudo). */
const RECIPE_HEADERS = ['host', 'sudo', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-for'];

/** How a refresh round makes the response to `req` again (route's key: method, caller, base, URL). */
function recipeOf(req: FastifyRequest, c: Ctx): Recipe {
  const headers: Record<string, string> = {};
  for (const name of RECIPE_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  const t = c.auth.token;
  return { url: req.url, headers, identity: t ? { kind: t.kind, id: t.id } : null, userId: c.user ? c.user.id : 0, base: c.base };
}

function sendKept(reply: FastifyReply, kept: CachedResponse): Buffer {
  reply.code(200);
  for (const [name, value] of kept.headers) reply.header(name, value);
  reply.type('application/json');
  return kept.body;
}

/**
 * HEAD is answered by the GET route of the address (Rails does the same): the router is given
 * GET, and Node, which saw HEAD when the request came, sends no body. Fastify would otherwise add
 * a HEAD route beside each of the 240 GET routes, a third of the router's start-up work. A route
 * with its own HEAD answer (`route(app, 'HEAD', …)`) is looked up by its GET route.
 */
const HEAD = Symbol('labwright.head');
export function headAsGet(req: IncomingMessage): void {
  if (req.method !== 'HEAD') return;
  req.method = 'GET';
  (req as IncomingMessage & { [HEAD]?: true })[HEAD] = true;
}

function isHead(req: IncomingMessage): boolean {
  return (req as IncomingMessage & { [HEAD]?: true })[HEAD] === true;
}

/** The HEAD answers declared in each (encapsulated) Fastify instance, by path. */
const headHandlers = new WeakMap<FastifyInstance, Map<string, Handler>>();

/** Declares one /api/v4 route. */
export function route(
  fastify: FastifyInstance,
  method: HTTPMethods,
  path: string,
  handler: Handler,
  opts: RouteOptions = {},
): void {
  if (method === 'HEAD') {
    let own = headHandlers.get(fastify);
    if (!own) headHandlers.set(fastify, (own = new Map()));
    own.set(path, handler);
    return;
  }
  const cacheable = opts.cache === true && method === 'GET';
  fastify.route({
    method,
    url: path,
    handler: async function apiRoute(req, reply) {
      const head = method === 'GET' && isHead(req.raw) ? headHandlers.get(fastify)?.get(path) : undefined;
      if (head) return answerHead(fastify.lw, req, reply, opts, head);
      const state = freshState();
      const app = fastify.lw;
      // A write gives way to the requests that came with it (reads are cheap; it is not): see
      // giveWay's callers in db/database.ts.
      if (method !== 'GET') await giveWay();
      if (cacheable && app.refresh && refreshRequest(req)) return remake(app, req, reply, method, opts, state, handler);
      const responses = cacheable ? app.responses : null;
      // Taken before authentication: the caller's rows are part of what a kept response is made
      // from, so one is kept only if nothing changed from before they were read. A response made
      // while a write of this process waits for the store to show it is made from newer data than
      // the store's, and is not kept.
      let era = responses ? responses.begin() : null;
      const settled = era !== null && responses!.settled();
      const ctx = await buildCtx(app, req, reply, opts, state);
      if (method !== 'GET') await giveWayIfLong();
      let key = '';
      // A kept response may be sent if the store still holds it (the store's data are then no
      // older than any write acknowledged so far).
      if (responses && era !== null && responses.begin() !== null) {
        key = responseKey(req, ctx);
        if (key === '') era = null;
        else {
          const kept = responses.get(key);
          if (kept && (kept.check === null || (await kept.check())) && responses.peek(key) === kept) {
            responses.sent();
            req.lwFromStore = true;
            return sendKept(reply, kept);
          }
          // Unless another request has kept a newer one meanwhile.
          if (kept && responses.peek(key) === kept) responses.delete(key);
          // Another request is making this response now, from the current state: its bytes.
          const current = settled && responses.settled() ? responses.begin() : null;
          const flight = current === null ? undefined : responses.flight(key, current);
          const shared = flight ? await flight : null;
          if (shared && (shared.check === null || (await shared.check()))) {
            responses.sent(true);
            return sendKept(reply, shared);
          }
          state.headers = [];
        }
      }
      if (!responses || era === null || key === '' || !settled) {
        const result = await withEventChain(req, () => handler(ctx));
        // Presenting is done; sending (encoding the body) is the next task.
        if (method !== 'GET') await giveWayIfLong();
        // Made while a write waits for the store: not kept, but the next round makes it for the store.
        const wanted: Keep | null = responses && era !== null && key !== '' ? { keep: (m) => responses.want(key, recipeOf(req, ctx), m), made: () => undefined } : null;
        return respond(reply, method, state, wanted, result);
      }
      const land = responses.takeOff(key, era);
      state.land = land;
      let made: CachedResponse | null = null;
      try {
        const result = await handler(ctx);
        const recipe = recipeOf(req, ctx);
        const keep = (m: CachedResponse) => {
          // A write landed while it was made: not kept, but wanted for the next round.
          if (!responses.set(key, era!, m, recipe) && !responses.settled()) responses.want(key, recipe, m);
        };
        return respond(reply, method, state, { keep, made: (m) => (made = m) }, result);
      } finally {
        land(made);
      }
    },
  });
}

/** A HEAD request to a route with its own HEAD answer: never from the response store. */
async function answerHead(app: AppContext, req: FastifyRequest, reply: FastifyReply, opts: RouteOptions, handler: Handler): Promise<unknown> {
  const state = freshState();
  const ctx = await buildCtx(app, req, reply, opts, state);
  return respond(reply, 'HEAD', state, null, await withEventChain(req, () => handler(ctx)));
}

/**
 * A refresh round's request, in the refresher's app (http/refresher.ts): the handler runs as for
 * any request, and the response it would keep is handed to the round instead of a store.
 */
async function remake(app: AppContext, req: FastifyRequest, reply: FastifyReply, method: HTTPMethods, opts: RouteOptions, state: CtxState, handler: Handler): Promise<unknown> {
  const n = refreshRequest(req)!.n;
  state.headers = [];
  const ctx = await buildCtx(app, req, reply, opts, state);
  const result = await handler(ctx);
  let kept = false;
  const sent = respond(reply, method, state, { keep: (m) => (kept = true) && app.refresh!.made.set(n, { response: m, base: ctx.base, userId: ctx.user ? ctx.user.id : 0 }), made: () => undefined }, result);
  // The round takes the bytes from `made`: they need not also go through the injected response.
  return kept ? '' : sent;
}

interface Keep {
  /** Keeps the response made (a store, or a refresh round's results). */
  keep: (m: CachedResponse) => void;
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
    const response: CachedResponse = { body, headers: state.headers!, check: state.check, branches: state.check ? state.branches : null };
    keep.keep(response);
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
