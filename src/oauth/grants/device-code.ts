// grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4–3.5). Every poll updates
// last_polling_at; a poll sooner than `interval` after the previous one gets slow_down and raises the
// interval by 5 seconds for good.
import type { AppContext } from '../../context.js';
import { tokenDigest } from '../../services/secrets.js';
import { now, nowIsoClock } from '../clock.js';
import type { ApplicationRow } from '../client-auth.js';
import { isExpired } from '../device.js';
import { deviceError, invalidGrant, missingParam } from '../errors.js';
import type { OAuthParams } from '../raw-params.js';
import { splitScopes } from '../scopes.js';
import { issueTokens, type IssuedTokens } from '../tokens.js';

type Outcome =
  | { ok: true; tokens: IssuedTokens }
  | { ok: false; error: 'invalid_grant' | 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied' };

export async function pollDeviceCode(ctx: AppContext, app: ApplicationRow, params: OAuthParams): Promise<IssuedTokens> {
  const deviceCode = params.get('device_code');
  if (!deviceCode) throw missingParam('device_code');
  const digest = tokenDigest(ctx.config.secret, deviceCode);

  const outcome = await ctx.database.transaction(async (trx): Promise<Outcome> => {
    const g = await ctx.database.forUpdate(trx.selectFrom('oauth_device_grants').selectAll().where('device_code_digest', '=', digest)).executeTakeFirst();
    if (!g || g.application_id !== app.id || g.status === 'used') return { ok: false, error: 'invalid_grant' };
    if (isExpired(g)) return { ok: false, error: 'expired_token' };
    if (g.status === 'denied') return { ok: false, error: 'access_denied' };
    if (g.status === 'pending') {
      const t = now();
      const tooSoon = g.last_polling_at !== null && t - Date.parse(g.last_polling_at) < g.interval * 1000;
      await trx
        .updateTable('oauth_device_grants')
        .set({ last_polling_at: new Date(t).toISOString(), interval: tooSoon ? g.interval + 5 : g.interval })
        .where('id', '=', g.id)
        .execute();
      return { ok: false, error: tooSoon ? 'slow_down' : 'authorization_pending' };
    }
    // Approved: one token pair, then the device code is spent.
    const user = await trx.selectFrom('users').select(['id', 'state']).where('id', '=', g.resource_owner_id ?? 0).executeTakeFirst();
    if (!user || user.state !== 'active') return { ok: false, error: 'invalid_grant' };
    await trx.updateTable('oauth_device_grants').set({ status: 'used', decided_at: nowIsoClock() }).where('id', '=', g.id).execute();
    const tokens = await issueTokens(ctx, trx, { applicationId: app.id, userId: user.id, scopes: splitScopes(g.scopes), grantId: g.id, grantKind: 'device' });
    return { ok: true, tokens };
  });
  if (outcome.ok) return outcome.tokens;
  if (outcome.error === 'invalid_grant') throw invalidGrant();
  throw deviceError(outcome.error);
}
