// /user_settings/applications: register, list, delete and renew the secret of one's own OAuth
// applications. The secret is shown once, on the page that created or renewed it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { createApplication, deleteApplication, renewSecret, validateApplication } from '../oauth/applications.js';
import type { ApplicationRow } from '../oauth/client-auth.js';
import { OAUTH_SCOPES, scopeDescription, splitScopes } from '../oauth/scopes.js';
import { field, fieldList } from './forms.js';
import { html, type SafeHtml } from './html.js';
import { sendErrorPage, sendPage, seeOther } from './page.js';
import { csrfToken, csrfValid, currentSession, type WebSession } from './session.js';
import { redirectToSignIn } from './sign-in.js';

const PAGE = '/user_settings/applications';

interface FormValues {
  name: string;
  redirectUri: string;
  scopes: string[];
  confidential: boolean;
}

const EMPTY: FormValues = { name: '', redirectUri: '', scopes: [], confidential: true };

function registerForm(csrf: string, v: FormValues, errors: Record<string, string[]> = {}): SafeHtml {
  const messages = Object.entries(errors).flatMap(([k, ms]) => ms.map((m) => `${k.replace('_', ' ')} ${m}`));
  return html`<section class="card"><h2>Add new application</h2>
    ${messages.length ? html`<ul class="error" role="alert">${messages.map((m) => html`<li>${m}</li>`)}</ul>` : ''}
    <form method="post" action="${PAGE}">
      <input type="hidden" name="authenticity_token" value="${csrf}">
      <label for="name">Name</label>
      <input type="text" id="name" name="name" value="${v.name}" maxlength="255" required>
      <label for="redirect_uri">Redirect URI</label>
      <textarea id="redirect_uri" name="redirect_uri" required>${v.redirectUri}</textarea>
      <p class="muted">One URI per line. Use HTTPS in production.</p>
      <label class="check"><input type="checkbox" name="confidential" value="1" ${v.confidential ? html`checked` : ''}>
        <span>Confidential — the application can keep its secret (a server). Leave unchecked for mobile, desktop or single-page apps.</span></label>
      <label>Scopes</label>
      ${OAUTH_SCOPES.map(
        (s) => html`<label class="check"><input type="checkbox" name="scopes[]" value="${s}" ${v.scopes.includes(s) ? html`checked` : ''}>
          <span><code>${s}</code> <span class="muted">${scopeDescription(s)}</span></span></label>`,
      )}
      <div class="actions"><button class="primary" type="submit">Save application</button></div>
    </form></section>`;
}

function appList(csrf: string, apps: ApplicationRow[]): SafeHtml {
  if (apps.length === 0) return html`<section class="card"><h2>Your applications</h2><p class="muted">You have no applications yet.</p></section>`;
  return html`<section class="card"><h2>Your applications</h2>${apps.map(
    (a) => html`<div class="app"><strong>${a.name}</strong>
      <div class="muted">Application ID: <code>${a.uid}</code></div>
      <div class="muted">Callback: ${a.redirect_uri.split('\n').map((u) => html`<code>${u}</code> `)}</div>
      <div class="muted">Scopes: ${splitScopes(a.scopes).join(', ')} · ${a.confidential ? 'confidential' : 'public'}</div>
      <div class="actions">
        <form method="post" action="${PAGE}/${a.id}/renew_secret"><input type="hidden" name="authenticity_token" value="${csrf}"><button type="submit">Renew secret</button></form>
        <form method="post" action="${PAGE}/${a.id}/delete"><input type="hidden" name="authenticity_token" value="${csrf}"><button class="danger" type="submit">Delete</button></form>
      </div></div>`,
  )}</section>`;
}

function secretCard(a: ApplicationRow, secret: string, title: string): SafeHtml {
  return html`<section class="card"><h1>${title}</h1>
    <table><tr><th>Name</th><td>${a.name}</td></tr>
      <tr><th>Application ID</th><td><code id="application-id">${a.uid}</code></td></tr>
      <tr><th>Secret</th><td><code id="application-secret">${secret}</code></td></tr>
      <tr><th>Callback URL</th><td>${a.redirect_uri.split('\n').map((u) => html`<code>${u}</code> `)}</td></tr>
      <tr><th>Scopes</th><td>${splitScopes(a.scopes).join(', ')}</td></tr></table>
    <p class="notice">Copy the secret now. It will not be shown again.</p>
    <p><a href="${PAGE}">Back to applications</a></p></section>`;
}

async function ownApps(ctx: AppContext, userId: number): Promise<ApplicationRow[]> {
  return ctx.db.selectFrom('oauth_applications').selectAll().where('owner_id', '=', userId).orderBy('id').execute();
}

async function renderList(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, s: WebSession, form: FormValues, errors?: Record<string, string[]>) {
  const csrf = csrfToken(ctx, req, reply);
  const body = html`<h1>Applications</h1>${registerForm(csrf, form, errors)}${appList(csrf, await ownApps(ctx, s.user.id))}`;
  return sendPage(reply, 'Applications', body, { user: s.user, csrf, status: errors ? 422 : 200 });
}

/** Signed in, valid CSRF token, and (for :id routes) the owner; otherwise the reply is sent. */
async function guard(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<WebSession | null> {
  const s = await currentSession(ctx, req);
  if (!s) {
    sendErrorPage(reply, 403, 'Request refused', 'You are not signed in.');
    return null;
  }
  if (!csrfValid(ctx, req, field(req, 'authenticity_token'))) {
    sendErrorPage(reply, 403, 'Request refused', 'The form has expired. Reload the page and try again.', { user: s.user, csrf: csrfToken(ctx, req, reply) });
    return null;
  }
  return s;
}

async function ownedApp(ctx: AppContext, req: FastifyRequest, s: WebSession): Promise<ApplicationRow | undefined> {
  const id = (req.params as { id: string }).id;
  if (!/^\d{1,9}$/.test(id)) return undefined;
  return ctx.db.selectFrom('oauth_applications').selectAll().where('id', '=', Number(id)).where('owner_id', '=', s.user.id).executeTakeFirst();
}

export function registerApplicationsPage(app: FastifyInstance): void {
  const ctx = app.lw;

  // GET /user_settings/applications
  app.get(PAGE, async function applicationsPage(req, reply) {
    const s = await currentSession(ctx, req);
    if (!s) return redirectToSignIn(req, reply);
    return renderList(ctx, req, reply, s, EMPTY);
  });

  // POST /user_settings/applications
  app.post(PAGE, async function registerApplication(req, reply) {
    const s = await guard(ctx, req, reply);
    if (!s) return reply;
    const form: FormValues = {
      name: (field(req, 'name') ?? '').slice(0, 1000),
      redirectUri: (field(req, 'redirect_uri') ?? '').slice(0, 10_000),
      scopes: fieldList(req, 'scopes'),
      confidential: field(req, 'confidential') === '1',
    };
    const errors = validateApplication(form);
    if (Object.keys(errors).length) return renderList(ctx, req, reply, s, form, errors);
    const created = await createApplication(ctx, Object.assign({}, form, { trusted: false, ownerId: s.user.id }));
    return sendPage(reply, 'Application created', secretCard(created.app, created.secret, `Application ${created.app.name} was created`), {
      status: 201,
      user: s.user,
      csrf: csrfToken(ctx, req, reply),
    });
  });

  // POST /user_settings/applications/:id/renew_secret
  app.post(`${PAGE}/:id/renew_secret`, async function renewApplicationSecret(req, reply) {
    const s = await guard(ctx, req, reply);
    if (!s) return reply;
    const own = await ownedApp(ctx, req, s);
    if (!own) return sendErrorPage(reply, 404, 'Not found', 'No such application.', { user: s.user, csrf: csrfToken(ctx, req, reply) });
    const renewed = await renewSecret(ctx, own.id);
    return sendPage(reply, 'Secret renewed', secretCard(renewed!.app, renewed!.secret, `New secret for ${own.name}`), { user: s.user, csrf: csrfToken(ctx, req, reply) });
  });

  // POST /user_settings/applications/:id/delete
  app.post(`${PAGE}/:id/delete`, async function deleteOwnApplication(req, reply) {
    const s = await guard(ctx, req, reply);
    if (!s) return reply;
    const own = await ownedApp(ctx, req, s);
    if (!own) return sendErrorPage(reply, 404, 'Not found', 'No such application.', { user: s.user, csrf: csrfToken(ctx, req, reply) });
    await deleteApplication(ctx, own.id);
    return seeOther(reply, PAGE);
  });
}
