// /applications: the admin API for instance-wide OAuth applications (GitLab lib/api/applications.rb).
import type { FastifyInstance } from 'fastify';
import { notFound, validationError } from '../../../http/errors.js';
import { route } from '../../../http/route.js';
import { createApplication, deleteApplication, renewSecret, validateApplication } from '../../../oauth/applications.js';
import type { ApplicationRow } from '../../../oauth/client-auth.js';
import { splitScopes } from '../../../oauth/scopes.js';

function presentApplication(a: ApplicationRow) {
  return {
    id: a.id,
    application_id: a.uid,
    application_name: a.name,
    callback_url: a.redirect_uri,
    confidential: a.confidential === 1,
  };
}

function presentWithSecret(a: ApplicationRow, secret: string) {
  return Object.assign({}, presentApplication(a), { secret });
}

export function registerApplicationRoutes(app: FastifyInstance): void {
  // POST /applications
  route(app, 'POST', '/applications', async (c) => {
    c.requireAdmin();
    const p = c.params;
    const name = p.string('name', { required: true })!;
    const redirectUri = p.string('redirect_uri', { required: true })!;
    const rawScopes = p.raw.scopes;
    const scopes = Array.isArray(rawScopes) ? rawScopes.map(String) : splitScopes(p.string('scopes', { required: true }));
    const confidential = p.bool('confidential') ?? true;
    // GITLAB-COMPAT: `trusted` (skip the consent page) is set in GitLab's admin UI; Labwright has
    // no admin UI, so the admin API accepts it.
    const trusted = p.bool('trusted') ?? false;
    const errors = validateApplication({ name, redirectUri, scopes });
    if (Object.keys(errors).length) throw validationError(errors);
    const created = await createApplication(c.app, { name, redirectUri, scopes, confidential, trusted, ownerId: null });
    return presentWithSecret(created.app, created.secret);
  });

  // GET /applications
  route(app, 'GET', '/applications', async (c) => {
    c.requireAdmin();
    const rows = await c.app.db.selectFrom('oauth_applications').selectAll().orderBy('id').execute();
    return rows.map(presentApplication);
  });

  // DELETE /applications/:id
  route(app, 'DELETE', '/applications/:id', async (c) => {
    c.requireAdmin();
    const id = c.params.int('id', { required: true })!;
    if (!(await deleteApplication(c.app, id))) throw notFound('Application');
    return undefined;
  });

  // POST /applications/:id/renew-secret
  route(app, 'POST', '/applications/:id/renew-secret', async (c) => {
    c.requireAdmin();
    const id = c.params.int('id', { required: true })!;
    const renewed = await renewSecret(c.app, id);
    if (!renewed) throw notFound('Application');
    return presentWithSecret(renewed.app, renewed.secret);
  });
}
