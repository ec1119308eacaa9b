// GET /oauth/authorize (the consent page) and POST /oauth/authorize (approve or deny).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { findUserById } from '../db/repositories/users.js';
import { field } from '../web/forms.js';
import { html } from '../web/html.js';
import { sendErrorPage, sendPage, seeOther } from '../web/page.js';
import { csrfToken, csrfValid, currentSession, type WebSession } from '../web/session.js';
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

export function registerAuthorize(app: FastifyInstance): void {
  const ctx = app.lw;

  // GET /oauth/authorize
  app.get('/oauth/authorize', async function authorizePage(req, reply) {
    const check = await checkAuthorizationRequest(ctx, OAuthParams.fromRequest(req, { query: true, body: false }));
    if (check.kind === 'page') return pageError(reply, check);
    if (check.kind === 'redirect') return errorRedirect(reply, 302, check);
    const session = await currentSession(ctx, req);
    if (!session) return redirectToSignIn(req, reply);
    if (check.app.trusted) {
      // Trusted instance applications skip the consent page (Doorkeeper skip_authorization).
      const code = await createAuthorizationCode(ctx, check, session.user.id);
      return reply.code(302).headers({ 'Cache-Control': 'no-store', Location: withQuery(check.redirectUri, { code, state: check.state }) }).send();
    }
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
