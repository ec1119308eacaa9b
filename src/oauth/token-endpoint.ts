// The client-authenticated OAuth endpoints: token, device authorization and revocation.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../context.js';
import { OAuthError } from '../http/errors.js';
import { baseUrl } from '../http/route.js';
import { tokenDigest } from '../services/secrets.js';
import { authenticateClient } from './client-auth.js';
import { createDeviceGrant, DEVICE_CODE_TTL, DEVICE_POLL_INTERVAL } from './device.js';
import { duplicatedParam, invalidScope, missingParam, unsupportedGrantType } from './errors.js';
import { redeemAuthorizationCode } from './grants/authorization-code.js';
import { pollDeviceCode } from './grants/device-code.js';
import { refreshTokens } from './grants/refresh-token.js';
import { OAuthParams } from './raw-params.js';
import { DEFAULT_SCOPE, scopesAllowed, splitScopes } from './scopes.js';
import { revokeFamily, revokeToken, sendTokenResponse, type IssuedTokens } from './tokens.js';
import { makeIdToken, signingKey } from './id-token.js';

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

function sendJson(reply: FastifyReply, body: unknown): FastifyReply {
  reply.code(200).headers({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).type('application/json');
  return reply.send(JSON.stringify(body));
}

function rejectDuplicates(params: OAuthParams): void {
  const dup = params.firstDuplicate();
  if (dup) throw duplicatedParam(dup);
}

async function tokenEndpoint(ctx: AppContext, params: OAuthParams, req: Parameters<typeof authenticateClient>[1], reply: FastifyReply) {
  rejectDuplicates(params);
  const grantType = params.get('grant_type');
  if (!grantType) throw missingParam('grant_type');
  const { app } = await authenticateClient(ctx, req, params);
  if (!GRANT_TYPES.includes(grantType)) {
    // GITLAB-COMPAT: GitLab still runs the password and client_credentials grants; the spec
    // says they are not supported, so Labwright refuses them.
    throw unsupportedGrantType();
  }
  // The ID token's key is read before a grant spends its code or refresh token: a key that cannot
  // be read fails the request with nothing used up, and the client may try again.
  if (splitScopes(app.scopes).includes('openid')) await signingKey(ctx.config.dataDir);
  let tokens: IssuedTokens;
  if (grantType === 'authorization_code') tokens = await redeemAuthorizationCode(ctx, app, params);
  else if (grantType === 'refresh_token') tokens = await refreshTokens(ctx, app, params);
  else tokens = await pollDeviceCode(ctx, app, params);
  // Every token response whose scopes include openid carries an ID token (doorkeeper-openid_connect
  // since 1.4); only a code's carries the authorization request's nonce.
  if (tokens.scopes.includes('openid')) {
    tokens.idToken = await makeIdToken(ctx, { issuer: baseUrl(ctx, req), clientId: app.uid, userId: tokens.userId, scopes: tokens.scopes, nonce: tokens.nonce ?? null });
  }
  return sendTokenResponse(reply, tokens);
}

const GRANT_TYPES = ['authorization_code', 'refresh_token', DEVICE_GRANT_TYPE];

export function registerTokenEndpoints(app: FastifyInstance): void {
  const ctx = app.lw;

  // POST /oauth/token
  app.post('/oauth/token', async function oauthToken(req, reply) {
    return tokenEndpoint(ctx, OAuthParams.fromRequest(req), req, reply);
  });

  // POST /oauth/authorize_device
  app.post('/oauth/authorize_device', async function authorizeDevice(req, reply) {
    const params = OAuthParams.fromRequest(req);
    rejectDuplicates(params);
    const { app: client } = await authenticateClient(ctx, req, params);
    const scopes = splitScopes(params.get('scope') ?? DEFAULT_SCOPE);
    if (!scopesAllowed(scopes, splitScopes(client.scopes))) throw invalidScope();
    const { deviceCode, userCode } = await createDeviceGrant(ctx, client.id, scopes);
    const verificationUri = `${baseUrl(ctx, req)}/oauth/device`;
    return sendJson(reply, {
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(userCode)}`,
      expires_in: DEVICE_CODE_TTL,
      interval: DEVICE_POLL_INTERVAL,
    });
  });

  // POST /oauth/revoke
  app.post('/oauth/revoke', async function revoke(req, reply) {
    const params = OAuthParams.fromRequest(req);
    rejectDuplicates(params);
    const { app: client } = await authenticateClient(ctx, req, params);
    const token = params.get('token');
    if (!token) throw missingParam('token');
    // token_type_hint is only a hint (RFC 7009 §2.1): both kinds are looked up whatever it says.
    const digest = tokenDigest(ctx.config.secret, token);
    const byAccess = await ctx.db.selectFrom('oauth_access_tokens').select(['id', 'application_id', 'family_id']).where('token_digest', '=', digest).executeTakeFirst();
    const byRefresh = byAccess
      ? undefined
      : await ctx.db.selectFrom('oauth_access_tokens').select(['id', 'application_id', 'family_id']).where('refresh_token_digest', '=', digest).executeTakeFirst();
    const row = byAccess ?? byRefresh;
    if (!row) return sendJson(reply, {});
    if (row.application_id !== client.id) {
      throw new OAuthError('unauthorized_client', 'You are not authorized to revoke this token', 403);
    }
    if (byAccess) await revokeToken(ctx.db, row.id);
    // A refresh token stands for its whole chain: every access token of the family goes with it.
    else await revokeFamily(ctx.db, row.family_id ?? row.id);
    return sendJson(reply, {});
  });
}
