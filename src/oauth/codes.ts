// Authorization codes: single use, ten minutes (Doorkeeper's default), stored as digests.
import type { AppContext } from '../context.js';
import { generateHex, tokenDigest } from '../services/secrets.js';
import type { ValidAuthorization } from './authorize-request.js';
import { now } from './clock.js';

export const CODE_TTL = 600;
/** Used and expired codes are kept this long after expiry so that a late replay still revokes. */
const PURGE_AFTER_MS = 60 * 60 * 1000;

export async function createAuthorizationCode(ctx: AppContext, a: ValidAuthorization, userId: number): Promise<string> {
  const code = generateHex(32);
  const t = now();
  await ctx.db.deleteFrom('oauth_access_grants').where('created_at', '<', new Date(t - CODE_TTL * 1000 - PURGE_AFTER_MS).toISOString()).execute();
  await ctx.db
    .insertInto('oauth_access_grants')
    .values({
      resource_owner_id: userId,
      application_id: a.app.id,
      token_digest: tokenDigest(ctx.config.secret, code),
      expires_in: CODE_TTL,
      redirect_uri: a.redirectUri,
      scopes: a.scopes.join(' '),
      code_challenge: a.codeChallenge ?? null,
      code_challenge_method: a.codeChallenge ? 'S256' : null,
      nonce: a.nonce ?? null,
      created_at: new Date(t).toISOString(),
      revoked_at: null,
    })
    .execute();
  return code;
}
