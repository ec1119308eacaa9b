// GET /oauth/authorize (the consent page) and POST /oauth/authorize (approve or deny).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { findUserById } from '../db/repositories/users.js';
import { field } from '../web/forms.js';
import { html } from '../web/html.js';
import { sendErrorPage, sendPage, seeOther } from '../web/page.js';
import { csrfToken, csrfValid, currentSession, endSession, type WebSession } from '../web/session.js';
import { redirectToSignIn } from '../web/sign-in.js';
import { checkAuthorizationRequest, type AuthorizationCheck, type ValidAuthorization } from './authorize-request.js';
import { createAuthorizationCode } from './codes.js';
import { DESCRIPTIONS } from './errors.js';
import { OAuthParams } from './raw-params.js';
import { withQuery } from './redirect-uri.js';
import { scopeDescription } from './scopes.js';

function errorRedirect(reply: FastifyReply, status: 302 | 303, c: Extract<AuthorizationCheck, { kind: 'redirect' }>): FastifyReply {
  const location = withQuery(c.redirectUri, { error: c.error, error_description: c.description, state: c.state });
  return reply.code(status).headers({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', Location: location }).send();
}

function pageError(reply: FastifyReply, c: Extract<AuthorizationCheck, { kind: 'page' }>): FastifyReply {
  return sendErrorPage(reply, 400, 'An error has occurred', `${c.description} (${c.error})`);
}

function hostOf(uri: string): string {
  try {
    return new URL(uri).host || uri;
  } catch {
    return uri;
  }
}

async function consentPage(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, s: WebSession, a: ValidAuthorization): Promise<FastifyReply> {
  const owner = a.app.owner_id ? await findUserById(ctx.db, a.app.owner_id) : undefined;
  const csrf = csrfToken(ctx, req, reply);
  const hidden = Object.entries(a.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  const body = html`<section class="card">
    <h1>Authorize ${a.app.name} to use your account?</h1>
    <p>An application called <strong>${a.app.name}</strong> is requesting access to your Labwright account
      <strong>@${s.user.username}</strong> (${s.user.name}).
      ${owner ? html`It was created by @${owner.username}.` : html`It is an instance-wide application.`}</p>
    <h2>This application will be able to:</h2>
    <ul class="scopes">${a.scopes.map((sc) => html`<li><code>${sc}</code> ${scopeDescription(sc)}</li>`)}</ul>
    <p class="notice">Make sure you trust <strong>${a.app.name}</strong> before authorizing. You will be sent to
      <code>${hostOf(a.redirectUri)}</code>.</p>
    <form method="post" action="/oauth/authorize">
      <input type="hidden" name="authenticity_token" value="${csrf}">${hidden}
      <div class="actions">
        <button class="primary" type="submit" name="decision" value="approve">Authorize ${a.app.name}</button>
        <button class="danger" type="submit" name="decision" value="deny">Deny</button>
      </div>
    </form></section>`;
  return sendPage(reply, 'Authorize application', body, { user: s.user, csrf });
}

/** The `prompt` values of OpenID Connect that GitLab's provider knows. */
const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);

/** `max_age`: whether the user signed in longer ago than the client accepts. */
function signInTooOld(s: WebSession, raw: string | undefined): boolean {
  const maxAge = raw !== undefined && /^\d{1,10}$/.test(raw) ? Number(raw) : 0;
  if (maxAge <= 0) return false;
  const at = s.user.current_sign_in_at ? Date.parse(s.user.current_sign_in_at) : NaN;
  return !Number.isFinite(at) || (Date.now() - at) / 1000 > maxAge;
}

/** The authorize URL to come back to after signing in: `prompt` without `login`. */
function withoutLoginPrompt(url: string, prompts: string[]): string {
  const u = new URL(url, 'http://localhost');
  const rest = prompts.filter((v) => v !== 'login');
  if (rest.length) u.searchParams.set('prompt', rest.join(' '));
  else u.searchParams.delete('prompt');
  return `${u.pathname}${u.search}`;
}

/** An unrevoked access token (expired ones too, as Doorkeeper) of this user and application with exactly these scopes (matching_token_for). */
async function hasMatchingToken(ctx: AppContext, a: ValidAuthorization, userId: number): Promise<boolean> {
  const rows = await ctx.db
    .selectFrom('oauth_access_tokens')
    .select('scopes')
    .where('application_id', '=', a.app.id)
    .where('resource_owner_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('id', 'desc')
    .limit(20)
    .execute();
  const wanted = [...new Set(a.scopes)].sort().join(' ');
  return rows.some((r) => [...new Set(r.scopes.split(' ').filter(Boolean))].sort().join(' ') === wanted);
}

export function registerAuthorize(app: FastifyInstance): void {
  const ctx = app.lw;

  // GET /oauth/authorize
  app.get('/oauth/authorize', async function authorizePage(req, reply) {
    const params = OAuthParams.fromRequest(req, { query: true, body: false });
    const check = await checkAuthorizationRequest(ctx, params);
    if (check.kind === 'page') return pageError(reply, check);
    if (check.kind === 'redirect') return errorRedirect(reply, 302, check);
    const fail = (error: string, description: string) => errorRedirect(reply, 302, { kind: 'redirect', redirectUri: check.redirectUri, error, description, state: check.state });
    // OpenID Connect requests honour `prompt` and `max_age` (doorkeeper-openid_connect, as GitLab).
    const oidc = check.scopes.includes('openid');
    const prompts = oidc ? [...new Set((params.get('prompt') ?? '').split(/ +/).filter(Boolean))] : [];
    if (prompts.some((v) => !PROMPTS.has(v)) || (prompts.includes('none') && prompts.length > 1)) return fail('invalid_request', DESCRIPTIONS.invalid_request);
    const session = await currentSession(ctx, req);
    const loginRequired = () => fail('login_required', 'The authorization server requires end-user authentication');
    if (!session) {
      if (prompts.includes('none')) return loginRequired();
      return redirectToSignIn(req, reply);
    }
    const tooOld = oidc && signInTooOld(session, params.get('max_age'));
    // A silent request never shows a page nor signs anyone out (OpenID Connect Core §3.1.2.1).
    if (tooOld && prompts.includes('none')) return loginRequired();
    if (prompts.includes('login') || tooOld) {
      // A fresh sign-in, then back here without `login` (GitLab signs the user out first).
      await endSession(ctx, req, reply);
      return redirectToSignIn(req, reply, withoutLoginPrompt(req.url, prompts));
    }
    if (prompts.includes('select_account')) return fail('account_selection_required', 'The authorization server requires end-user account selection');
    // Trusted instance applications skip the consent page (Doorkeeper skip_authorization), and so
    // do confidential applications the user was already given a token of these scopes (GitLab's
    // matching_token?), unless the client asks for consent.
    const skip = !prompts.includes('consent') && (check.app.trusted || (check.app.confidential && (await hasMatchingToken(ctx, check, session.user.id))));
    if (skip) {
      const code = await createAuthorizationCode(ctx, check, session.user.id);
      return reply.code(302).headers({ 'Cache-Control': 'no-store', Location: withQuery(check.redirectUri, { code, state: check.state }) }).send();
    }
    if (prompts.includes('none')) return fail('consent_required', 'The authorization server requires end-user consent');
    return consentPage(ctx, req, reply, session, check);
  });

  // POST /oauth/authorize
  app.post('/oauth/authorize', async function authorizeDecision(req, reply) {
    const session = await currentSession(ctx, req);
    if (!session) return sendErrorPage(reply, 403, 'Request refused', 'You are not signed in. Sign in and start again from the application.');
    if (!csrfValid(ctx, req, field(req, 'authenticity_token'))) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form has expired or was not sent from this site. Start again from the application.');
    }
    const check = await checkAuthorizationRequest(ctx, OAuthParams.fromRequest(req, { query: false, body: true }));
    if (check.kind === 'page') return pageError(reply, check);
    if (check.kind === 'redirect') return errorRedirect(reply, 303, check);
    const decision = field(req, 'decision');
    if (decision === 'deny') {
      return errorRedirect(reply, 303, { kind: 'redirect', redirectUri: check.redirectUri, error: 'access_denied', description: DESCRIPTIONS.access_denied, state: check.state });
    }
    if (decision !== 'approve') return sendErrorPage(reply, 422, 'Request refused', 'Choose Authorize or Deny.');
    const code = await createAuthorizationCode(ctx, check, session.user.id);
    return seeOther(reply, withQuery(check.redirectUri, { code, state: check.state }));
  });
}
