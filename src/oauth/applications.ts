// OAuth applications: registration rules (shared by the page and the admin API), creation with a
// secret shown once, secret renewal, deletion (which ends every grant and token of the app).
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import { generateHex, tokenDigest } from '../services/secrets.js';
import type { ApplicationRow } from './client-auth.js';
import { registrationError, splitRedirectUris } from './redirect-uri.js';
import { isKnownScope, splitScopes } from './scopes.js';

/** GitLab's prefix for application secrets (gloas = GitLab OAuth application secret). */
export const SECRET_PREFIX = 'gloas-';

export interface ApplicationInput {
  name: string;
  redirectUri: string;
  scopes: string[];
  confidential: boolean;
  trusted: boolean;
  ownerId: number | null;
}

/** Model validation messages in GitLab's shape: `{"attr": ["msg"]}`; empty when valid. */
export function validateApplication(input: Pick<ApplicationInput, 'name' | 'redirectUri' | 'scopes'>): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (!input.name.trim()) add('name', "can't be blank");
  else if (input.name.length > 255) add('name', 'is too long (maximum is 255 characters)');
  const uris = splitRedirectUris(input.redirectUri);
  if (uris.length === 0) add('redirect_uri', "can't be blank");
  for (const u of uris) {
    const e = registrationError(u);
    if (e) {
      add('redirect_uri', e);
      break;
    }
  }
  if (input.scopes.length === 0) add('scopes', "can't be blank");
  else if (!input.scopes.every(isKnownScope)) add('scopes', "doesn't match configured on the server.");
  return errors;
}

export async function createApplication(ctx: AppContext, input: ApplicationInput): Promise<{ app: ApplicationRow; secret: string }> {
  const secret = SECRET_PREFIX + generateHex(32);
  const now = nowIso();
  const row = await ctx.db
    .insertInto('oauth_applications')
    .values({
      name: input.name.trim(),
      uid: generateHex(32),
      secret_digest: tokenDigest(ctx.config.secret, secret),
      redirect_uri: splitRedirectUris(input.redirectUri).join('\n'),
      scopes: [...new Set(input.scopes)].join(' '),
      confidential: input.confidential ? 1 : 0,
      trusted: input.trusted ? 1 : 0,
      owner_id: input.ownerId,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { app: row, secret };
}

export async function renewSecret(ctx: AppContext, id: number): Promise<{ app: ApplicationRow; secret: string } | null> {
  const secret = SECRET_PREFIX + generateHex(32);
  const row = await ctx.db
    .updateTable('oauth_applications')
    .set({ secret_digest: tokenDigest(ctx.config.secret, secret), updated_at: nowIso() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ? { app: row, secret } : null;
}

/** Deletes the application; its codes and device grants go, its tokens are revoked. */
export async function deleteApplication(ctx: AppContext, id: number): Promise<boolean> {
  return ctx.database.transaction(async (trx) => {
    const found = await trx.selectFrom('oauth_applications').select('id').where('id', '=', id).executeTakeFirst();
    if (!found) return false;
    await trx.updateTable('oauth_access_tokens').set({ revoked_at: nowIso() }).where('application_id', '=', id).where('revoked_at', 'is', null).execute();
    await trx.deleteFrom('oauth_access_grants').where('application_id', '=', id).execute();
    await trx.deleteFrom('oauth_device_grants').where('application_id', '=', id).execute();
    await trx.deleteFrom('oauth_applications').where('id', '=', id).execute();
    return true;
  });
}

export function applicationScopes(app: ApplicationRow): string[] {
  return splitScopes(app.scopes);
}
