// grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6). Checks run in this order so that
// a request that fails for the client's own mistake (wrong verifier, wrong redirect_uri, wrong
// client) leaves the code redeemable; only a second redemption of a used code revokes its tokens.
import type { AppContext } from '../../context.js';
import { tokenDigest } from '../../services/secrets.js';
import { now, nowIsoClock } from '../clock.js';
import type { ApplicationRow } from '../client-auth.js';
import { invalidGrant, missingParam } from '../errors.js';
import { verifierMatches } from '../pkce.js';
import type { OAuthParams } from '../raw-params.js';
import { splitScopes } from '../scopes.js';
import { issueTokens, ownerState, revokeGrantTokens, type IssuedTokens } from '../tokens.js';

type Outcome = { ok: true; tokens: IssuedTokens; nonce: string | null } | { ok: false };

export async function redeemAuthorizationCode(ctx: AppContext, app: ApplicationRow, params: OAuthParams): Promise<IssuedTokens> {
  const code = params.get('code');
  if (!code) throw missingParam('code');
  const redirectUri = params.get('redirect_uri');
  const verifier = params.get('code_verifier');
  const digest = tokenDigest(ctx.config.secret, code);

  const outcome = await ctx.database.transaction(async (trx): Promise<Outcome> => {
    const grant = await ctx.database
      .forUpdate(trx.selectFrom('oauth_access_grants').selectAll().select(ownerState('oauth_access_grants')).where('token_digest', '=', digest))
      .executeTakeFirst();
    if (!grant || grant.application_id !== app.id) return { ok: false };
    if (grant.revoked_at) {
      // Replay of a used code: whoever holds it may be an attacker, so what it issued is revoked.
      await revokeGrantTokens(trx, 'code', grant.id);
      return { ok: false };
    }
    if (Date.parse(grant.created_at) + grant.expires_in * 1000 <= now()) {
      await trx.deleteFrom('oauth_access_grants').where('id', '=', grant.id).execute();
      return { ok: false };
    }
    if (redirectUri === undefined || redirectUri !== grant.redirect_uri) return { ok: false };
    if (grant.code_challenge) {
      if (!verifier || !verifierMatches(verifier, grant.code_challenge)) return { ok: false };
    } else if (verifier !== undefined) {
      // PKCE downgrade: a verifier for a code issued without a challenge (RFC 9700 §4.8.2).
      return { ok: false };
    }
    if (grant.owner_state !== 'active') return { ok: false };
    await trx.updateTable('oauth_access_grants').set({ revoked_at: nowIsoClock() }).where('id', '=', grant.id).execute();
    const tokens = await issueTokens(ctx, trx, {
      applicationId: app.id,
      userId: grant.resource_owner_id,
      scopes: splitScopes(grant.scopes),
      grantId: grant.id,
      grantKind: 'code',
    });
    return { ok: true, tokens, nonce: grant.nonce };
  });
  if (!outcome.ok) throw invalidGrant();
  // OpenID Connect: the token endpoint adds the ID token, with the request's nonce.
  return Object.assign(outcome.tokens, { nonce: outcome.nonce });
}
