// grant_type=refresh_token with rotation (spec §3.2): the presented pair is revoked and a new pair
// joins the same family. Presenting a refresh token that was already rotated or revoked revokes the
// whole family (RFC 9700 §4.14.2). Concurrent refreshes are serialised by the row lock, so the
// losers are reuses too: the family ends revoked (the documented strict policy, docs/oauth.md).
import type { AppContext } from '../../context.js';
import { tokenDigest } from '../../services/secrets.js';
import type { ApplicationRow } from '../client-auth.js';
import { invalidGrant, invalidScope, missingParam } from '../errors.js';
import type { OAuthParams } from '../raw-params.js';
import { splitScopes } from '../scopes.js';
import { issueTokens, ownerState, revokeFamily, revokeToken, type IssuedTokens } from '../tokens.js';

type Outcome = { ok: true; tokens: IssuedTokens } | { ok: false; error: 'grant' | 'scope' };

export async function refreshTokens(ctx: AppContext, app: ApplicationRow, params: OAuthParams): Promise<IssuedTokens> {
  const presented = params.get('refresh_token');
  if (!presented) throw missingParam('refresh_token');
  const requestedScope = params.get('scope');
  const digest = tokenDigest(ctx.config.secret, presented);

  const outcome = await ctx.database.transaction(async (trx): Promise<Outcome> => {
    const row = await ctx.database
      .forUpdate(trx.selectFrom('oauth_access_tokens').selectAll().select(ownerState('oauth_access_tokens')).where('refresh_token_digest', '=', digest))
      .executeTakeFirst();
    if (!row || row.application_id !== app.id) return { ok: false, error: 'grant' };
    const familyId = row.family_id ?? row.id;
    if (row.revoked_at) {
      await revokeFamily(trx, familyId);
      return { ok: false, error: 'grant' };
    }
    if (row.owner_state !== 'active') return { ok: false, error: 'grant' };
    const granted = splitScopes(row.scopes);
    let scopes = granted;
    if (requestedScope !== undefined) {
      const wanted = splitScopes(requestedScope);
      if (wanted.length === 0 || !wanted.every((s) => granted.includes(s))) return { ok: false, error: 'scope' };
      scopes = wanted;
    }
    await revokeToken(trx, row.id);
    const tokens = await issueTokens(ctx, trx, {
      applicationId: app.id,
      userId: row.resource_owner_id,
      scopes,
      grantId: row.grant_id ?? 0,
      grantKind: row.grant_kind === 'device' ? 'device' : 'code',
      familyId,
    });
    return { ok: true, tokens };
  });
  if (!outcome.ok) throw outcome.error === 'scope' ? invalidScope() : invalidGrant();
  return outcome.tokens;
}
