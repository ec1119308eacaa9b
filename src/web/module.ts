// Registers the OAuth provider and the web pages in one scope whose form parser keeps the raw body
// (duplicated OAuth parameters must be seen, RFC 6749 §3.1).
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import { parseNested } from '../http/params.js';
import { registerAuthorize } from '../oauth/authorize.js';
import { registerCors } from '../oauth/cors.js';
import { registerDevicePages } from '../oauth/device-page.js';
import { registerInfoEndpoints } from '../oauth/info.js';
import { registerMetadata } from '../oauth/metadata.js';
import { registerJwks } from '../oauth/id-token.js';
import { registerTokenEndpoints } from '../oauth/token-endpoint.js';
import { registerApplicationsPage } from './applications-page.js';
import { STYLESHEET } from './page.js';
import { registerSignIn } from './sign-in.js';
import { userDeletionHooks } from '../services/users.js';

// A deleted user's browser sessions and pending codes go with the account (tokens are revoked by
// deleteUser itself). Registered once per process, at import.
userDeletionHooks.push(async function removeWebState(_app, trx, user) {
  await trx.deleteFrom('web_sessions').where('user_id', '=', user.id).execute();
  await trx.deleteFrom('oauth_access_grants').where('resource_owner_id', '=', user.id).execute();
  await trx.deleteFrom('oauth_device_grants').where('resource_owner_id', '=', user.id).execute();
});

export async function oauthAndWebModule(app: FastifyInstance): Promise<void> {
  await app.register(async function oauthScope(scope) {
    // Cookies (the browser session) only where pages and OAuth live: the API does not read them,
    // and the plugin's onSend hook would otherwise run on every API response.
    await scope.register(cookie);
    scope.removeContentTypeParser('application/x-www-form-urlencoded');
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (req, body, done) => {
      req.lwRawForm = body as string;
      try {
        done(null, parseNested(body as string));
      } catch (err) {
        done(err as Error, undefined);
      }
    });
    // Unauthenticated per-IP limit (off unless configured), as for anonymous API requests.
    scope.addHook('onRequest', async function throttleOAuth(req) {
      await scope.lw.rateLimiter.hit('unauthenticated', `ip:${req.ip}`);
    });
    registerCors(scope);
    registerTokenEndpoints(scope);
    registerInfoEndpoints(scope);
    registerMetadata(scope);
    registerJwks(scope);
    registerAuthorize(scope);
    registerDevicePages(scope);
    registerSignIn(scope);
    registerApplicationsPage(scope);
    // GET /-/labwright.css
    scope.get('/-/labwright.css', async function stylesheet(_req, reply) {
      return reply.type('text/css; charset=utf-8').header('Cache-Control', 'public, max-age=3600').send(STYLESHEET);
    });
  });
}
