// GET /.well-known/openid-configuration and /.well-known/oauth-authorization-server (RFC 8414).
import type { FastifyInstance } from 'fastify';
import { baseUrl } from '../http/route.js';
import { OAUTH_SCOPES } from './scopes.js';
import { DEVICE_GRANT_TYPE } from './token-endpoint.js';

export function registerMetadata(app: FastifyInstance): void {
  const ctx = app.lw;
  function metadata(base: string) {
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      introspection_endpoint: undefined,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      device_authorization_endpoint: `${base}/oauth/authorize_device`,
      scopes_supported: OAUTH_SCOPES,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_GRANT_TYPE],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      subject_types_supported: ['public'],
      jwks_uri: `${base}/oauth/discovery/keys`,
      id_token_signing_alg_values_supported: ['RS256'],
      claim_types_supported: ['normal'],
      claims_supported: [
        'iss', 'sub', 'aud', 'exp', 'iat', 'sub_legacy', 'name', 'nickname', 'preferred_username', 'email', 'email_verified', 'website', 'profile', 'picture', 'groups', 'groups_direct',
        'https://gitlab.org/claims/groups/owner', 'https://gitlab.org/claims/groups/maintainer', 'https://gitlab.org/claims/groups/developer',
      ],
    };
  }
  for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    // GET /.well-known/openid-configuration, GET /.well-known/oauth-authorization-server
    app.get(path, async function wellKnown(req, reply) {
      reply.type('application/json').header('Cache-Control', 'max-age=3600, public');
      return reply.send(JSON.stringify(metadata(baseUrl(ctx, req))));
    });
  }
}
