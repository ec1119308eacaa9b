// Client authentication at the token, revoke and device endpoints (spec §4.3 rule 1): an
// `Authorization: Basic` header or `client_id`/`client_secret` parameters, never both. Public
// clients authenticate with `client_id` alone (also `Basic base64("id:")`, as golang.org/x/oauth2 sends).
import type { FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.js';
import type { OauthApplicationsTable } from '../db/tables/core.js';
import { constantTimeEqual, tokenDigest } from '../services/secrets.js';
import { DESCRIPTIONS, invalidClient, invalidRequest } from './errors.js';
import type { OAuthParams } from './raw-params.js';

export type ApplicationRow = Selectable<OauthApplicationsTable>;

interface BasicCredentials {
  id: string;
  secret: string;
}

function formDecode(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** Parses `Basic <base64(id:secret)>`; null when there is no Basic header; throws when malformed. */
function basicCredentials(req: FastifyRequest): BasicCredentials | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  const m = /^basic(?:\s+(.*))?$/i.exec(header.trim());
  if (!m) return null;
  const b64 = (m[1] ?? '').trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) throw invalidClient(true);
  const decoded = Buffer.from(b64, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient(true);
  // RFC 6749 §2.3.1: both parts are form-encoded before base64.
  const id = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  // No client id or secret holds a NUL (and PostgreSQL text cannot): refused as unknown.
  if (id === null || secret === null || id === '' || id.includes('\u0000') || secret.includes('\u0000')) throw invalidClient(true);
  return { id, secret };
}

export function findApplicationByUid(ctx: AppContext, uid: string): Promise<ApplicationRow | undefined> {
  return ctx.db.selectFrom('oauth_applications').selectAll().where('uid', '=', uid).executeTakeFirst();
}

export function secretMatches(ctx: AppContext, app: ApplicationRow, secret: string): boolean {
  return constantTimeEqual(tokenDigest(ctx.config.secret, secret), app.secret_digest);
}

export interface AuthenticatedClient {
  app: ApplicationRow;
  usedBasic: boolean;
}

/** Authenticates the calling client or throws invalid_client / invalid_request. */
export async function authenticateClient(ctx: AppContext, req: FastifyRequest, params: OAuthParams): Promise<AuthenticatedClient> {
  for (const name of ['client_id', 'client_secret']) {
    if (params.isDuplicated(name)) throw invalidRequest(`The parameter ${name} was given more than once.`);
  }
  const basic = basicCredentials(req);
  const bodyId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  if (basic && bodySecret !== undefined) throw invalidRequest(DESCRIPTIONS.multiple_client_auth);
  if (basic && bodyId !== undefined && bodyId !== basic.id) throw invalidClient(true);
  const clientId = basic?.id ?? bodyId;
  if (!clientId) throw invalidClient(false);
  const app = await findApplicationByUid(ctx, clientId);
  const secret = basic ? basic.secret : bodySecret;
  if (!app) throw invalidClient(basic !== null);
  if (app.confidential) {
    if (!secret || !secretMatches(ctx, app, secret)) throw invalidClient(basic !== null);
  } else if (secret && !secretMatches(ctx, app, secret)) {
    // A public client need not send its secret, but a wrong one is still wrong.
    throw invalidClient(basic !== null);
  }
  return { app, usedBasic: basic !== null };
}
