// Finding and checking the access token on token/info and userinfo: Bearer header (any case of the
// scheme) or `access_token` parameter, never both (spec §5 rule 2).
import type { FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.js';
import type { OauthAccessTokensTable } from '../db/tables/core.js';
import { OAuthError } from '../http/errors.js';
import { tokenDigest } from '../services/secrets.js';
import { invalidRequest } from './errors.js';
import type { OAuthParams } from './raw-params.js';

export type AccessTokenRow = Selectable<OauthAccessTokensTable>;

export function findBearer(req: FastifyRequest, params: OAuthParams): string | null {
  const found: string[] = [];
  const header = req.headers.authorization;
  if (typeof header === 'string') {
    const m = /^bearer\s+(\S+)\s*$/i.exec(header.trim());
    if (m) found.push(m[1]);
  }
  if (params.isDuplicated('access_token')) throw invalidRequest('The parameter access_token was given more than once.');
  const q = params.get('access_token');
  if (q) found.push(q);
  if (found.length > 1) throw invalidRequest('The access token was given in more than one place.');
  return found[0] ?? null;
}

function invalidToken(description: string): OAuthError {
  return new OAuthError('invalid_token', description, 401, {
    'WWW-Authenticate': `Bearer realm="Labwright", error="invalid_token", error_description="${description}"`,
  });
}

/** The live access token row and its active owner, or a 401 invalid_token naming the reason. */
export async function requireAccessToken(ctx: AppContext, value: string | null): Promise<AccessTokenRow> {
  if (!value) throw invalidToken('The access token is invalid');
  const row = await ctx.db.selectFrom('oauth_access_tokens').selectAll().where('token_digest', '=', tokenDigest(ctx.config.secret, value)).executeTakeFirst();
  if (!row) throw invalidToken('The access token is invalid');
  if (row.revoked_at) throw invalidToken('The access token was revoked');
  // Same clock as the API authentication layer (src/http/auth.ts), so both agree on expiry.
  if (row.expires_in != null && Date.parse(row.created_at) + row.expires_in * 1000 <= Date.now()) {
    throw invalidToken('The access token expired');
  }
  const user = await ctx.db.selectFrom('users').select(['state']).where('id', '=', row.resource_owner_id).executeTakeFirst();
  if (!user || user.state !== 'active') throw invalidToken('The access token is invalid');
  return row;
}

export function remainingSeconds(row: AccessTokenRow): number | null {
  if (row.expires_in == null) return null;
  return Math.max(0, Math.floor((Date.parse(row.created_at) + row.expires_in * 1000 - Date.now()) / 1000));
}
