// Device authorization grants (RFC 8628, spec §3.1): creation, lookup by user code, the user's
// decision, and purging of old rows. Device and user codes are stored only as digests.
import { randomInt } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.js';
import type { OauthDeviceGrantsTable } from '../db/tables/oauth.js';
import { generateHex, tokenDigest } from '../services/secrets.js';
import { now, nowIsoClock } from './clock.js';

export type DeviceGrantRow = Selectable<OauthDeviceGrantsTable>;

export const DEVICE_CODE_TTL = 300;
export const DEVICE_POLL_INTERVAL = 5;
export const USER_CODE_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** Old device grants are deleted this long after they expired. */
const PURGE_AFTER_MS = 60 * 60 * 1000;

export function generateUserCode(): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return s;
}

/** `abcd-efgh`, `ABCD EFGH` and `abcdefgh` are the same code; null when it cannot be one. */
export function normalizeUserCode(input: string): string | null {
  const s = input.replace(/[\s-]/g, '').toUpperCase();
  return /^[0-9A-Z]{8}$/.test(s) ? s : null;
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export function userCodeDigest(ctx: AppContext, normalized: string): string {
  return tokenDigest(ctx.config.secret, `user-code:${normalized}`);
}

export function isExpired(g: DeviceGrantRow): boolean {
  return Date.parse(g.created_at) + g.expires_in * 1000 <= now();
}

export async function createDeviceGrant(ctx: AppContext, applicationId: number, scopes: string[]): Promise<{ deviceCode: string; userCode: string }> {
  await purgeDeviceGrants(ctx);
  for (let attempt = 0; ; attempt++) {
    const deviceCode = generateHex(32);
    const userCode = generateUserCode();
    const digest = userCodeDigest(ctx, userCode);
    // A live grant with the same user code is possible only by a 1 in 36^8 chance; draw again.
    const clash = await ctx.db.selectFrom('oauth_device_grants').select('id').where('user_code_digest', '=', digest).executeTakeFirst();
    if (clash && attempt < 5) continue;
    await ctx.db
      .insertInto('oauth_device_grants')
      .values({
        application_id: applicationId,
        device_code_digest: tokenDigest(ctx.config.secret, deviceCode),
        user_code_digest: digest,
        scopes: scopes.join(' '),
        expires_in: DEVICE_CODE_TTL,
        interval: DEVICE_POLL_INTERVAL,
        last_polling_at: null,
        status: 'pending',
        resource_owner_id: null,
        created_at: nowIsoClock(),
        decided_at: null,
      })
      .execute();
    return { deviceCode, userCode };
  }
}

export function findByUserCode(ctx: AppContext, normalized: string): Promise<DeviceGrantRow | undefined> {
  return ctx.db.selectFrom('oauth_device_grants').selectAll().where('user_code_digest', '=', userCodeDigest(ctx, normalized)).executeTakeFirst();
}

/** Records the user's decision on a still-pending, unexpired grant; false when it is no longer open. */
export async function decideDeviceGrant(ctx: AppContext, grantId: number, userId: number, approve: boolean): Promise<boolean> {
  return ctx.database.transaction(async (trx) => {
    const g = await ctx.database.forUpdate(trx.selectFrom('oauth_device_grants').selectAll().where('id', '=', grantId)).executeTakeFirst();
    if (!g || g.status !== 'pending' || isExpired(g)) return false;
    await trx
      .updateTable('oauth_device_grants')
      .set({ status: approve ? 'approved' : 'denied', resource_owner_id: userId, decided_at: nowIsoClock() })
      .where('id', '=', grantId)
      .execute();
    return true;
  });
}

/** Deletes grants that expired more than an hour ago; their tokens (if any) are untouched. */
export async function purgeDeviceGrants(ctx: AppContext): Promise<void> {
  const cutoff = new Date(now() - DEVICE_CODE_TTL * 1000 - PURGE_AFTER_MS).toISOString();
  await ctx.db.deleteFrom('oauth_device_grants').where('created_at', '<', cutoff).execute();
}
