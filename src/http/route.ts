// The one way API routes are declared: merged params, authentication, scopes, rate limits, and
// GitLab's default status codes by method (spec rule 13), so handlers stay thin.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { AppContext } from '../context.js';
import type { UserRow } from '../db/repositories/users.js';
import { authenticate, type Auth } from './auth.js';
import { forbidden, unauthorized } from './errors.js';
import { mergeParams, Params } from './params.js';

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
}

export interface RouteOptions {
  /** Scopes besides api/read_api that grant this route (for example read_user). */
  extraScopes?: string[];
}

export type Handler = (c: Ctx) => unknown | Promise<unknown>;

export function baseUrl(app: AppContext, req: FastifyRequest): string {
  return app.config.externalUrl ?? `${req.protocol}://${req.host}`;
}

const DEFAULT_STATUS: Record<string, number> = { POST: 201, DELETE: 204 };

/** What a handler set through ctx.status(), read after it returns. */
interface CtxState {
  status: number | undefined;
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
    throw err;
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
  };
  return ctx;
}

/** Declares one /api/v4 route. */
export function route(
  fastify: FastifyInstance,
  method: HTTPMethods,
  path: string,
  handler: Handler,
  opts: RouteOptions = {},
): void {
  fastify.route({
    method,
    url: path,
    handler: async function apiRoute(req, reply) {
      const state: CtxState = { status: undefined };
      const ctx = await buildCtx(fastify.lw, req, reply, opts, state);
      const result = await handler(ctx);
      if (reply.sent || result === reply) return reply;
      const explicit = state.status;
      if (result === undefined) {
        reply.code(explicit ?? (method === 'DELETE' ? 204 : 200));
        return reply.send();
      }
      reply.code(explicit ?? DEFAULT_STATUS[method] ?? 200);
      return result;
    },
  });
}
