// CORS for the OAuth endpoints (spec §4.3): any origin, no credentials; preflight on token, revoke
// and userinfo, allowing only the CORS-safelisted request headers plus Authorization.
import type { FastifyInstance } from 'fastify';

const PREFLIGHT: Record<string, string[]> = {
  '/oauth/token': ['POST'],
  '/oauth/revoke': ['POST'],
  '/oauth/userinfo': ['GET', 'HEAD', 'POST'],
};

/** Paths whose responses carry Access-Control-Allow-Origin for cross-origin callers. */
const CORS_PATHS = new Set([
  ...Object.keys(PREFLIGHT),
  '/oauth/token/info',
  '/oauth/authorize_device',
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/oauth/discovery/keys',
]);

const ALLOWED_HEADERS = new Set(['accept', 'accept-language', 'content-language', 'content-type', 'authorization']);

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

export function registerCors(app: FastifyInstance): void {
  app.addHook('onSend', async function oauthCorsHeaders(req, reply, payload) {
    if (req.method !== 'OPTIONS' && req.headers.origin && CORS_PATHS.has(pathOf(req.url))) reply.header('Access-Control-Allow-Origin', '*');
    return payload;
  });

  for (const [path, methods] of Object.entries(PREFLIGHT)) {
    // OPTIONS /oauth/token, /oauth/revoke, /oauth/userinfo (preflight)
    app.options(path, async function preflight(req, reply) {
      const method = String(req.headers['access-control-request-method'] ?? '').toUpperCase();
      const requested = String(req.headers['access-control-request-headers'] ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean);
      const ok = !!req.headers.origin && methods.includes(method) && requested.every((h) => ALLOWED_HEADERS.has(h));
      if (!ok) return reply.code(403).type('text/plain; charset=utf-8').send('CORS preflight refused\n');
      return reply
        .code(200)
        .headers({
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Allow-Methods': methods.join(', '),
          'Access-Control-Allow-Headers': 'Authorization',
          'Access-Control-Max-Age': '7200',
          Vary: 'Origin',
        })
        .send();
    });
  }
}
