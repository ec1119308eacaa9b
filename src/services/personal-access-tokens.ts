// Personal access tokens: creation (the only time the value is seen), rotation, revocation.
import type { Selectable, Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { PersonalAccessTokensTable } from '../db/tables/core.js';
import type { DB } from '../db/types.js';
import { paramError } from '../http/errors.js';
import { recordTokenEvent } from './audit.js';
import { generateToken, PAT_PREFIX, tokenDigest } from './secrets.js';

export type PatRow = Selectable<PersonalAccessTokensTable>;

/** Scopes a token may carry (GitLab's list). */
export const KNOWN_SCOPES = [
  'api', 'read_api', 'read_user', 'create_runner', 'manage_runner', 'k8s_proxy', 'read_repository',
  'write_repository', 'read_registry', 'write_registry', 'read_virtual_registry', 'write_virtual_registry',
  'ai_features', 'sudo', 'admin_mode', 'read_service_ping', 'self_rotate', 'ai_workflows', 'mcp',
  'read_observability', 'write_observability',
] as const;

export function validateScopes(scopes: string[], name = 'scopes'): void {
  if (scopes.length === 0) throw paramError(`${name} is empty`);
  for (const s of scopes) {
    if (!(KNOWN_SCOPES as readonly string[]).includes(s)) throw paramError(`${name} does not have a valid value`);
  }
}

let today = { until: 0, value: '' };

/**
 * Today's UTC date (`YYYY-MM-DD`), recomputed at most once a second: authentication and every
 * membership lookup compare expiry dates with it.
 */
export function todayUtc(): string {
  const now = Date.now();
  // Kept for the rest of the second; a clock set back (or a test's fake one) is followed at once.
  if (now >= today.until || now < today.until - 1000) today = { until: now - (now % 1000) + 1000, value: new Date(now).toISOString().slice(0, 10) };
  return today.value;
}

export function addDays(date: string, days: number): string {
  const d = new Date(date + 'T00:00:00Z');
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export function isActive(t: Pick<PatRow, 'revoked' | 'expires_at'>): boolean {
  return !t.revoked && !(t.expires_at !== null && t.expires_at <= todayUtc());
}

export interface NewPat {
  userId: number;
  name: string;
  scopes: string[];
  expiresAt: string | null;
  description?: string | null;
  /** Exact token value (LABWRIGHT_INITIAL_ROOT_TOKEN); otherwise a random one. */
  value?: string;
  previousId?: number | null;
  /** An impersonation token (made by an administrator for the user; GitLab's impersonation_tokens API). */
  impersonation?: boolean;
}

export async function createPersonalAccessToken(
  app: AppContext,
  input: NewPat,
  trx?: Transaction<DB>,
): Promise<{ row: PatRow; token: string }> {
  const token = input.value ?? generateToken(PAT_PREFIX);
  const now = nowIso();
  const row = await (trx ?? app.db)
    .insertInto('personal_access_tokens')
    .values({
      user_id: input.userId,
      name: input.name,
      description: input.description ?? null,
      token_digest: tokenDigest(app.config.secret, token),
      scopes: JSON.stringify(input.scopes),
      revoked: 0,
      expires_at: input.expiresAt,
      last_used_at: null,
      last_used_ips: '[]',
      impersonation: input.impersonation ? 1 : 0,
      previous_personal_access_token_id: input.previousId ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordTokenEvent(trx ?? app.db, input.previousId ? 'personal_access_token_rotated' : 'personal_access_token_created', row);
  return { row, token };
}

/**
 * Rotation: a new token with the same name, scopes and description; the old one revoked in the
 * same transaction. `expiresAt` defaults to one week and may be at most one year away.
 */
export async function rotatePersonalAccessToken(
  app: AppContext,
  id: number,
  expiresAt: string | undefined,
): Promise<{ row: PatRow; token: string } | 'not_active'> {
  const today = todayUtc();
  if (expiresAt !== undefined) {
    if (expiresAt <= today) throw paramError('expires_at must be in the future');
    if (expiresAt > addDays(today, 365)) throw paramError('expires_at must not be more than one year in the future');
  }
  return app.database.transaction(async (trx) => {
    const old = await app.database
      .forUpdate(trx.selectFrom('personal_access_tokens').selectAll().where('id', '=', id))
      .executeTakeFirst();
    if (!old || !isActive(old)) return 'not_active' as const;
    await trx.updateTable('personal_access_tokens').set({ revoked: 1, updated_at: nowIso() }).where('id', '=', id).execute();
    return createPersonalAccessToken(
      app,
      {
        userId: old.user_id,
        name: old.name,
        scopes: JSON.parse(old.scopes) as string[],
        description: old.description,
        expiresAt: expiresAt ?? addDays(today, 7),
        previousId: old.id,
        impersonation: old.impersonation === 1,
      },
      trx,
    );
  });
}

export async function revokePersonalAccessToken(app: AppContext, id: number): Promise<void> {
  await app.db.updateTable('personal_access_tokens').set({ revoked: 1, updated_at: nowIso() }).where('id', '=', id).execute();
  const row = await app.db.selectFrom('personal_access_tokens').select(['id', 'user_id', 'name']).where('id', '=', id).executeTakeFirst();
  if (row) await recordTokenEvent(app.db, 'personal_access_token_revoked', row);
}
