// Browser sessions and CSRF tokens. The session cookie holds a random id; the database holds only
// its digest. CSRF tokens are an HMAC of the session id (or, before sign-in, of a random
// pre-session cookie), so a token from another browser or session never verifies.
import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { findUserById, type UserRow } from '../db/repositories/users.js';
import { now } from '../oauth/clock.js';
import { constantTimeEqual, generateToken, tokenDigest } from '../services/secrets.js';

export const SESSION_COOKIE = '_labwright_session';
export const CSRF_COOKIE = '_labwright_csrf';
/** GitLab's session_expire_delay default: one week. */
const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

export interface WebSession {
  id: string;
  user: UserRow;
}

declare module 'fastify' {
  interface FastifyRequest {
    lwSession?: WebSession | null;
    /** Pre-session CSRF binding created during this request. */
    lwCsrfBinding?: string;
  }
}

function cookieOptions(ctx: AppContext, maxAgeSec?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: (ctx.config.externalUrl ?? '').startsWith('https:'),
    ...(maxAgeSec !== undefined ? { maxAge: maxAgeSec } : {}),
  };
}

function sessionDigest(ctx: AppContext, id: string): string {
  return tokenDigest(ctx.config.secret, `session:${id}`);
}

/** One cookie read from the header, for routes outside the pages' scope (where the cookie plugin parses them). */
function cookieFromHeader(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The signed-in session of this request, or null (expired, unknown, or user not active). */
export async function currentSession(ctx: AppContext, req: FastifyRequest): Promise<WebSession | null> {
  if (req.lwSession !== undefined) return req.lwSession;
  req.lwSession = null;
  const id = req.cookies?.[SESSION_COOKIE] ?? cookieFromHeader(req, SESSION_COOKIE);
  if (!id || id.length > 200) return null;
  const row = await ctx.db.selectFrom('web_sessions').select(['id', 'user_id', 'expires_at']).where('session_digest', '=', sessionDigest(ctx, id)).executeTakeFirst();
  if (!row || Date.parse(row.expires_at) <= now()) return null;
  const user = await findUserById(ctx.db, row.user_id);
  if (!user || user.state !== 'active') return null;
  req.lwSession = { id, user };
  return req.lwSession;
}

/** Starts a new session (a fresh id, so a planted cookie never becomes a signed-in one). */
export async function startSession(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, user: UserRow): Promise<void> {
  const id = generateToken();
  const t = now();
  await ctx.db
    .insertInto('web_sessions')
    .values({
      session_digest: sessionDigest(ctx, id),
      user_id: user.id,
      created_at: new Date(t).toISOString(),
      expires_at: new Date(t + SESSION_TTL_MS).toISOString(),
      last_seen_at: new Date(t).toISOString(),
    })
    .execute();
  // Old sessions of anyone are swept now and then rather than by a timer.
  await ctx.db.deleteFrom('web_sessions').where('expires_at', '<', new Date(t).toISOString()).execute();
  reply.setCookie(SESSION_COOKIE, id, cookieOptions(ctx, SESSION_TTL_MS / 1000));
  req.lwSession = { id, user };
}

export async function endSession(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const id = req.cookies?.[SESSION_COOKIE];
  if (id) await ctx.db.deleteFrom('web_sessions').where('session_digest', '=', sessionDigest(ctx, id)).execute();
  reply.clearCookie(SESSION_COOKIE, cookieOptions(ctx));
  req.lwSession = null;
}

function binding(req: FastifyRequest): string | undefined {
  if (req.lwSession) return `s:${req.lwSession.id}`;
  const pre = req.lwCsrfBinding ?? req.cookies?.[CSRF_COOKIE];
  return pre ? `p:${pre}` : undefined;
}

function tokenFor(ctx: AppContext, b: string): string {
  return createHmac('sha256', ctx.config.secret).update(`csrf:${b}`).digest('base64url');
}

/** The CSRF token for forms on this page; sets the pre-session cookie when needed. Call after currentSession. */
export function csrfToken(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): string {
  let b = binding(req);
  if (!b) {
    const pre = generateToken();
    req.lwCsrfBinding = pre;
    reply.setCookie(CSRF_COOKIE, pre, cookieOptions(ctx));
    b = `p:${pre}`;
  }
  return tokenFor(ctx, b);
}

/** True when the submitted token belongs to this browser's session. Call after currentSession. */
export function csrfValid(ctx: AppContext, req: FastifyRequest, submitted: unknown): boolean {
  const b = binding(req);
  if (!b || typeof submitted !== 'string' || submitted === '') return false;
  return constantTimeEqual(tokenFor(ctx, b), submitted);
}

/** A local path to return to after sign-in; anything else (other hosts, `//x`, `/\x`) becomes the default. */
export function safeReturnPath(v: unknown, fallback = '/user_settings/applications'): string {
  if (typeof v !== 'string' || !v.startsWith('/') || v.startsWith('//') || v.startsWith('/\\') || /[\r\n\t]/.test(v)) return fallback;
  return v;
}
