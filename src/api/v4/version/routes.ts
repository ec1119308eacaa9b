// GET /version and GET /metadata: clients gate features on the GitLab version.
import type { FastifyInstance } from 'fastify';
import { route } from '../../../http/route.js';
import { GITLAB_REVISION, GITLAB_VERSION, LABWRIGHT_VERSION } from '../../../version.js';

export function registerVersionRoutes(app: FastifyInstance): void {
  const body = (enterprise: boolean) => ({
    version: GITLAB_VERSION,
    revision: GITLAB_REVISION,
    kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
    enterprise,
    labwright_version: LABWRIGHT_VERSION,
  });
  // GitLab's version.rb and metadata.rb also accept read_user tokens on GET (python-gitlab's auth()
  // then version() sequence works with a read_user token).
  const scopes = { extraScopes: ['read_user'] };
  // GET /version
  route(app, 'GET', '/version', (c) => {
    c.requireUser();
    return body(c.app.config.plan !== 'free');
  }, scopes);
  // GET /metadata
  route(app, 'GET', '/metadata', (c) => {
    c.requireUser();
    return body(c.app.config.plan !== 'free');
  }, scopes);
}
