// The browser side of the device grant: GET/POST /oauth/device (enter the user code) and
// POST /oauth/device/confirm (approve or deny). Wrong codes are limited to 5 a minute per IP
// (RFC 8628 §5.1); beyond that every code, right or wrong, gets 429 until the window ends.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { field, queryField } from '../web/forms.js';
import { html } from '../web/html.js';
import { sendErrorPage, sendPage } from '../web/page.js';
import { csrfToken, csrfValid, currentSession, type WebSession } from '../web/session.js';
import { redirectToSignIn } from '../web/sign-in.js';
import { countFailure, throttled } from '../web/throttle.js';
import { decideDeviceGrant, findByUserCode, formatUserCode, isExpired, normalizeUserCode, type DeviceGrantRow } from './device.js';
import { scopeDescription, splitScopes } from './scopes.js';

export const USER_CODE_GUESSES = 5;
export const USER_CODE_WINDOW = 60;

function entryForm(csrf: string, code: string, error?: string) {
  return html`<section class="card"><h1>Connect a device</h1>
    <p>Enter the code shown on your device.</p>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    <form method="post" action="/oauth/device">
      <input type="hidden" name="authenticity_token" value="${csrf}">
      <label for="user_code">Device code</label>
      <input class="usercode" type="text" id="user_code" name="user_code" value="${code}" maxlength="16" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required autofocus>
      <div class="actions"><button class="primary" type="submit">Continue</button></div>
    </form></section>`;
}

type Lookup = { grant: DeviceGrantRow; code: string } | { error: string; status: number };

/** Finds an open grant for the submitted code, counting misses against the caller's IP. */
async function lookupCode(ctx: AppContext, req: FastifyRequest, input: string): Promise<Lookup | { retryAfter: number }> {
  const key = `device-user-code:${req.ip}`;
  const wait = await throttled(ctx, key, USER_CODE_GUESSES, USER_CODE_WINDOW);
  if (wait !== null) return { retryAfter: wait };
  const code = normalizeUserCode(input);
  const grant = code ? await findByUserCode(ctx, code) : undefined;
  if (!code || !grant) {
    await countFailure(ctx, key, USER_CODE_WINDOW);
    return { error: 'The user code is invalid.', status: 422 };
  }
  if (isExpired(grant)) return { error: 'The user code is expired. Start again on your device.', status: 422 };
  if (grant.status !== 'pending') return { error: 'The user code has already been used.', status: 422 };
  return { grant, code };
}

async function confirmPage(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, s: WebSession, grant: DeviceGrantRow, code: string) {
  const app = await ctx.db.selectFrom('oauth_applications').select(['name']).where('id', '=', grant.application_id).executeTakeFirst();
  const csrf = csrfToken(ctx, req, reply);
  const scopes = splitScopes(grant.scopes);
  const body = html`<section class="card">
    <h1>Authorize a device?</h1>
    <p class="notice">A device is asking to access your account <strong>@${s.user.username}</strong> through the application
      <strong>${app?.name ?? 'unknown'}</strong>. Only continue if you started this yourself and the code on the device is
      <code class="nowrap">${formatUserCode(code)}</code>.</p>
    <h2>The device will be able to:</h2>
    <ul class="scopes">${scopes.map((sc) => html`<li><code>${sc}</code> ${scopeDescription(sc)}</li>`)}</ul>
    <form method="post" action="/oauth/device/confirm">
      <input type="hidden" name="authenticity_token" value="${csrf}">
      <input type="hidden" name="user_code" value="${code}">
      <div class="actions">
        <button class="primary" type="submit" name="decision" value="approve">Authorize device</button>
        <button class="danger" type="submit" name="decision" value="deny">Deny</button>
      </div>
    </form></section>`;
  return sendPage(reply, 'Authorize device', body, { user: s.user, csrf });
}

function tooMany(reply: FastifyReply, retryAfter: number, s: WebSession, csrf: string) {
  return sendErrorPage(reply, 429, 'Too many attempts', `Too many wrong codes. Wait ${retryAfter} seconds and try again.`, {
    headers: { 'Retry-After': String(retryAfter) },
    user: s.user,
    csrf,
  });
}

export function registerDevicePages(app: FastifyInstance): void {
  const ctx = app.lw;

  // GET /oauth/device
  app.get('/oauth/device', async function devicePage(req, reply) {
    const s = await currentSession(ctx, req);
    if (!s) return redirectToSignIn(req, reply);
    const given = queryField(req, 'user_code') ?? '';
    const csrf = csrfToken(ctx, req, reply);
    return sendPage(reply, 'Connect a device', entryForm(csrf, given.slice(0, 16)), { user: s.user, csrf });
  });

  // POST /oauth/device
  app.post('/oauth/device', async function deviceCodeEntry(req, reply) {
    const s = await currentSession(ctx, req);
    if (!s) return sendErrorPage(reply, 403, 'Request refused', 'You are not signed in.');
    if (!csrfValid(ctx, req, field(req, 'authenticity_token'))) return sendErrorPage(reply, 403, 'Request refused', 'The form has expired. Reload the page and try again.');
    const csrf = csrfToken(ctx, req, reply);
    const input = field(req, 'user_code') ?? '';
    const found = await lookupCode(ctx, req, input);
    if ('retryAfter' in found) return tooMany(reply, found.retryAfter, s, csrf);
    if ('error' in found) return sendPage(reply, 'Connect a device', entryForm(csrf, input.slice(0, 16), found.error), { status: found.status, user: s.user, csrf });
    return confirmPage(ctx, req, reply, s, found.grant, found.code);
  });

  // POST /oauth/device/confirm
  app.post('/oauth/device/confirm', async function deviceDecision(req, reply) {
    const s = await currentSession(ctx, req);
    if (!s) return sendErrorPage(reply, 403, 'Request refused', 'You are not signed in.');
    if (!csrfValid(ctx, req, field(req, 'authenticity_token'))) return sendErrorPage(reply, 403, 'Request refused', 'The form has expired. Reload the page and try again.');
    const csrf = csrfToken(ctx, req, reply);
    const decision = field(req, 'decision');
    if (decision !== 'approve' && decision !== 'deny') return sendErrorPage(reply, 422, 'Request refused', 'Choose Authorize or Deny.', { user: s.user, csrf });
    const found = await lookupCode(ctx, req, field(req, 'user_code') ?? '');
    if ('retryAfter' in found) return tooMany(reply, found.retryAfter, s, csrf);
    if ('error' in found) return sendErrorPage(reply, found.status, 'Device not connected', found.error, { user: s.user, csrf });
    if (!(await decideDeviceGrant(ctx, found.grant.id, s.user.id, decision === 'approve'))) {
      return sendErrorPage(reply, 422, 'Device not connected', 'The user code is no longer valid. Start again on your device.', { user: s.user, csrf });
    }
    const body =
      decision === 'approve'
        ? html`<section class="card"><h1>Device connected</h1><p>You can go back to your device now; it will finish signing in by itself.</p></section>`
        : html`<section class="card"><h1>Device denied</h1><p>The device was not given access to your account.</p></section>`;
    return sendPage(reply, decision === 'approve' ? 'Device connected' : 'Device denied', body, { user: s.user, csrf });
  });
}
