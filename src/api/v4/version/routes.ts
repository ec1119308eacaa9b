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
  // GET /version
  route(app, 'GET', '/version', (c) => {
    c.requireUser();
    return body(c.app.config.plan !== 'free');
  });
  // GET /metadata
  route(app, 'GET', '/metadata', (c) => {
    c.requireUser();
    return body(c.app.config.plan !== 'free');
  });
}
