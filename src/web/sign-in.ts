// GET/POST /users/sign_in and POST /users/sign_out. Failures all read the same, whatever the
// reason (unknown user, wrong password, locked, blocked); ten failures lock the account for ten
// minutes (Devise maximum_attempts 10, unlock_in 10 minutes).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import { findUserByEmail, findUserByUsername, type UserRow } from '../db/repositories/users.js';
import { now } from '../oauth/clock.js';
import { recordAudit } from '../services/audit.js';
import { hashPassword, verifyPassword } from '../services/passwords.js';
import { field, queryField } from './forms.js';
import { html } from './html.js';
import { sendErrorPage, sendPage, seeOther } from './page.js';
import { csrfToken, csrfValid, currentSession, endSession, safeReturnPath, startSession } from './session.js';

export const MAX_FAILED_ATTEMPTS = 10;
export const LOCK_MS = 10 * 60 * 1000;
export const SIGN_IN_FAILED = 'Invalid login or password.';

let dummyDigest: Promise<string> | null = null;
/** Unknown logins still cost one password verification, so timing does not tell them apart. */
function dummy(): Promise<string> {
  dummyDigest ??= hashPassword('labwright-dummy-password');
  return dummyDigest;
}

function signInForm(csrf: string, returnTo: string, login: string, error?: string) {
  return html`<section class="card"><h1>Sign in</h1>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    <form method="post" action="/users/sign_in">
      <input type="hidden" name="authenticity_token" value="${csrf}">
      <input type="hidden" name="redirect_to" value="${returnTo}">
      <label for="login">Username or email</label>
      <input type="text" id="login" name="login" value="${login}" autocomplete="username" autocapitalize="none" required autofocus>
      <label for="password">Password</label>
      <input type="password" id="password" name="password" autocomplete="current-password" required>
      <div class="actions"><button class="primary" type="submit">Sign in</button></div>
    </form></section>`;
}

async function findLogin(ctx: AppContext, login: string): Promise<UserRow | undefined> {
  if (!login || login.length > 255) return undefined;
  return login.includes('@') ? findUserByEmail(ctx.db, login) : findUserByUsername(ctx.db, login);
}

/** Verifies the password and keeps the lock-out counters; true when the user may sign in. */
async function checkCredentials(ctx: AppContext, user: UserRow | undefined, password: string): Promise<boolean> {
  if (!user) {
    await verifyPassword(await dummy(), password);
    return false;
  }
  const t = now();
  if (user.locked_until && Date.parse(user.locked_until) > t) return false;
  if (user.locked_until) {
    await ctx.db.updateTable('users').set({ failed_attempts: 0, locked_until: null }).where('id', '=', user.id).execute();
  }
  const ok = await verifyPassword(user.password_digest, password);
  if (ok && user.state === 'active') {
    const iso = new Date(t).toISOString();
    await ctx.db
      .updateTable('users')
      .set({ failed_attempts: 0, locked_until: null, last_sign_in_at: user.current_sign_in_at, current_sign_in_at: iso })
      .where('id', '=', user.id)
      .execute();
    return true;
  }
  if (!ok) {
    // One statement, so concurrent guesses cannot slip past the limit.
    const lockUntil = new Date(t + LOCK_MS).toISOString();
    await ctx.db
      .updateTable('users')
      .set({
        failed_attempts: sql<number>`failed_attempts + 1`,
        locked_until: sql<string | null>`case when failed_attempts + 1 >= ${MAX_FAILED_ATTEMPTS} then ${lockUntil} else locked_until end`,
      })
      .where('id', '=', user.id)
      .execute();
  }
  return false;
}

/**
 * Audit events for sign-ins, named as GitLab names them. A failure names the login tried
 * (entity -1 when no such user exists, as GitLab did). Recording never blocks signing in.
 */
async function auditSignIn(ctx: AppContext, req: FastifyRequest, user: UserRow | undefined, login: string, ok: boolean): Promise<void> {
  const event = ok
    ? {
        author: { id: user!.id, name: user!.name },
        eventName: 'user_authenticated',
        targetType: 'User',
        targetId: user!.id,
        targetDetails: user!.username,
        details: { with: 'standard', custom_message: 'Signed in with STANDARD authentication' },
      }
    : {
        author: null,
        eventName: 'login_failed_with_standard_authentication',
        targetType: 'User',
        targetId: user?.id ?? -1,
        targetDetails: login.slice(0, 255),
        details: { failed_login: 'STANDARD', custom_message: 'Failed to login with STANDARD authentication' },
      };
  try {
    await recordAudit(ctx.db, { ...event, entityType: 'User', entityId: user?.id ?? -1, entityPath: user?.username ?? '', ipAddress: req.ip });
  } catch (err) {
    ctx.log.warn({ err }, 'could not record a sign-in audit event');
  }
}

/** Sends the visitor to the sign-in page, coming back to this URL afterwards. */
export function redirectToSignIn(req: FastifyRequest, reply: FastifyReply, returnTo: string = req.originalUrl ?? req.url): FastifyReply {
  return reply
    .code(302)
    .headers({ 'Cache-Control': 'no-store' })
    .header('Location', `/users/sign_in?redirect_to=${encodeURIComponent(safeReturnPath(withoutTokens(returnTo)))}`)
    .send();
}

/** A return path without the tokens a sessionless request carried (a refused one must not travel on in a Location). */
function withoutTokens(path: string): string {
  const q = path.indexOf('?');
  if (q < 0) return path;
  const kept = path
    .slice(q + 1)
    .split('&')
    .filter((pair) => {
      const name = pair.split('=', 1)[0]!;
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // An undecodable name is kept as it is; it names no token.
      }
      return !['private_token', 'access_token'].includes(decoded.toLowerCase());
    });
  return kept.length ? `${path.slice(0, q)}?${kept.join('&')}` : path.slice(0, q);
}

export function registerSignIn(app: FastifyInstance): void {
  const ctx = app.lw;

  // GET /users/sign_in
  app.get('/users/sign_in', async function signInPage(req, reply) {
    const returnTo = safeReturnPath(queryField(req, 'redirect_to'));
    if (await currentSession(ctx, req)) return seeOther(reply, returnTo);
    return sendPage(reply, 'Sign in', signInForm(csrfToken(ctx, req, reply), returnTo, ''));
  });

  // POST /users/sign_in
  app.post('/users/sign_in', async function signIn(req, reply) {
    await currentSession(ctx, req);
    if (!csrfValid(ctx, req, field(req, 'authenticity_token'))) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form has expired or was not sent from this site. Go back, reload the page and try again.');
    }
    const login = (field(req, 'login') ?? '').trim();
    const returnTo = safeReturnPath(field(req, 'redirect_to'));
    const user = await findLogin(ctx, login);
    if (!(await checkCredentials(ctx, user, field(req, 'password') ?? ''))) {
      await auditSignIn(ctx, req, user, login, false);
      return sendPage(reply, 'Sign in', signInForm(csrfToken(ctx, req, reply), returnTo, login, SIGN_IN_FAILED), { status: 401 });
    }
    await startSession(ctx, req, reply, user!);
    await auditSignIn(ctx, req, user, login, true);
    return seeOther(reply, returnTo);
  });

  // POST /users/sign_out
  app.post('/users/sign_out', async function signOut(req, reply) {
    await currentSession(ctx, req);
    if (!csrfValid(ctx, req, field(req, 'authenticity_token'))) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form has expired or was not sent from this site.');
    }
    await endSession(ctx, req, reply);
    return seeOther(reply, '/users/sign_in');
  });
}
