// Access/refresh token pairs: minting (digests only), the token response, and revocation of a
// token, a refresh family, or everything one grant issued.
import type { FastifyReply } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import type { DB } from '../db/types.js';
import { generateHex, tokenDigest } from '../services/secrets.js';
import { now } from './clock.js';

export interface IssueInput {
  applicationId: number;
  userId: number;
  scopes: string[];
  grantId: number;
  grantKind: 'code' | 'device';
  /** The family a rotated pair joins; a new family when absent. */
  familyId?: number;
}

export interface IssuedTokens {
  id: number;
  userId: number;
  /** Set when the response carries an OpenID Connect ID token. */
  idToken?: string;
  /** The authorization request's OpenID Connect nonce (codes only). */
  nonce?: string | null;
  accessToken: string;
  refreshToken: string;
  scopes: string[];
  expiresIn: number;
  createdAt: number;
}

/** Inserts a new token pair inside the caller's transaction. */
export async function issueTokens(ctx: AppContext, trx: Transaction<DB>, input: IssueInput): Promise<IssuedTokens> {
  const accessToken = generateHex(32);
  const refreshToken = generateHex(32);
  const createdAt = now();
  const expiresIn = ctx.config.oauthAccessTokenTtl;
  const row = await trx
    .insertInto('oauth_access_tokens')
    .values({
      resource_owner_id: input.userId,
      application_id: input.applicationId,
      token_digest: tokenDigest(ctx.config.secret, accessToken),
      refresh_token_digest: tokenDigest(ctx.config.secret, refreshToken),
      expires_in: expiresIn,
      scopes: input.scopes.join(' '),
      grant_id: input.grantId,
      grant_kind: input.grantKind,
      // The first pair of a family leaves it empty: its family is its own id (revokeFamily).
      family_id: input.familyId ?? null,
      created_at: new Date(createdAt).toISOString(),
      revoked_at: null,
      last_used_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, userId: input.userId, accessToken, refreshToken, scopes: input.scopes, expiresIn, createdAt };
}

/** Sends the token response (RFC 6749 §5.1) with Cache-Control: no-store. */
export function sendTokenResponse(reply: FastifyReply, t: IssuedTokens): FastifyReply {
  const body = {
    access_token: t.accessToken,
    token_type: 'Bearer',
    expires_in: t.expiresIn,
    refresh_token: t.refreshToken,
    scope: t.scopes.join(' '),
    created_at: Math.floor(t.createdAt / 1000),
    ...(t.idToken ? { id_token: t.idToken } : {}),
  };
  reply.code(200).headers({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).type('application/json');
  return reply.send(JSON.stringify(body));
}

type Db = Kysely<DB> | Transaction<DB>;

/**
 * The state of the user a grant or token row belongs to, read with the row (`owner_state`; null
 * when the user is gone): one statement less than reading the user after it. A subquery in the
 * select list, so FOR UPDATE locks the row alone, not the user every request of theirs reads.
 */
export function ownerState(table: 'oauth_access_grants' | 'oauth_access_tokens') {
  return sql<string | null>`(select state from users where users.id = ${sql.ref(`${table}.resource_owner_id`)})`.as('owner_state');
}

/**
 * Revokes every live token of one refresh family: the first pair (`familyId` is its id; its
 * family_id is empty, or its own id in rows written before 2026-12-03) and those refreshed from it.
 */
export async function revokeFamily(db: Db, familyId: number): Promise<void> {
  await db
    .updateTable('oauth_access_tokens')
    .set({ revoked_at: new Date(now()).toISOString() })
    .where((eb) => eb.or([eb('family_id', '=', familyId), eb('id', '=', familyId)]))
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes every live token minted from one grant (code reuse, RFC 6749 §4.1.2). */
export async function revokeGrantTokens(db: Db, grantKind: 'code' | 'device', grantId: number): Promise<void> {
  await db
    .updateTable('oauth_access_tokens')
    .set({ revoked_at: new Date(now()).toISOString() })
    .where('grant_kind', '=', grantKind)
    .where('grant_id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes one token row (its access and refresh token together). */
export async function revokeToken(db: Db, id: number): Promise<void> {
  await db
    .updateTable('oauth_access_tokens')
    .set({ revoked_at: new Date(now()).toISOString() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}
