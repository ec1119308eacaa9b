// Authentication of API requests (spec document 1 §5): where tokens are looked for, what makes
// them valid, which scopes a route accepts, and sudo.
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { rawSql, type RawSql } from '../db/database.js';
import { deepFreeze, EpochCache } from '../db/epoch-cache.js';
import { findUserById, findUserByUsername, type UserRow } from '../db/repositories/users.js';
import { todayUtc } from '../services/personal-access-tokens.js';
import { memoryKey, tokenDigest } from '../services/secrets.js';
import { ApiError, apiError, badRequest, forbidden, notFound, paramError, unauthorized } from './errors.js';
import { MAX_DB_INT, type Params } from './params.js';

export type TokenKind = 'personal' | 'oauth';

export interface AuthToken {
  kind: TokenKind;
  id: number;
  scopes: string[];
  applicationId: number | null;
  /** The user the token belongs to (before sudo). */
  userId: number;
}

export interface Auth {
  /** The acting user: the token's owner, or the sudo target. */
  user: UserRow | null;
  token: AuthToken | null;
  /** Set when the request acts as another user through sudo. */
  sudoFrom: UserRow | null;
}

export const ANONYMOUS: Auth = Object.freeze({ user: null, token: null, sudoFrom: null });

/** Where a token was found; two places at once is refused (spec §5 rule 2). */
interface FoundToken {
  value: string;
  /** 'private' tokens are PATs only; 'bearer' tokens may be OAuth or PAT. */
  kind: 'private' | 'bearer';
}

function headerValue(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function findToken(req: FastifyRequest, params: Params): FoundToken | null {
  const found: FoundToken[] = [];
  const privateHeader = headerValue(req, 'private-token');
  if (privateHeader) found.push({ value: privateHeader.trim(), kind: 'private' });
  const authz = headerValue(req, 'authorization');
  if (authz) {
    const m = /^bearer\s+(.+)$/i.exec(authz.trim());
    if (m) found.push({ value: m[1].trim(), kind: 'bearer' });
  }
  for (const [name, kind] of [['private_token', 'private'], ['access_token', 'bearer']] as const) {
    const v = params.raw[name];
    if (typeof v === 'string' && v !== '') found.push({ value: v, kind });
    else if (v !== undefined && v !== null && v !== '') throw apiError(401, '401 Unauthorized');
  }
  if (found.length === 0) return null;
  if (found.length > 1) throw badRequest('token given in more than one place; send it once');
  return found[0];
}

function parseScopes(s: string): string[] {
  if (s.startsWith('[')) return JSON.parse(s) as string[];
  return s.split(/\s+/).filter(Boolean);
}

/** Tokens' last_used_at is written at most once per interval per process, never on every request. */
const LAST_USED_INTERVAL_MS = 10 * 60 * 1000;
/** Per token id: when last_used_at was last written (or found written); read before anything else. */
const lastUsedWrites: Record<TokenKind, Map<number, number>> = { personal: new Map(), oauth: new Map() };

function noteUsed(ctx: AppContext, kind: TokenKind, id: number, lastUsedAt: string | null): void {
  const now = Date.now();
  const writes = lastUsedWrites[kind];
  if (now - (writes.get(id) ?? 0) < LAST_USED_INTERVAL_MS) return;
  if (writes.size > 100_000) writes.clear();
  const stored = lastUsedAt ? Date.parse(lastUsedAt) : 0;
  if (now - stored < LAST_USED_INTERVAL_MS) {
    writes.set(id, stored);
    return;
  }
  writes.set(id, now);
  const iso = new Date(now).toISOString();
  const table = kind === 'personal' ? 'personal_access_tokens' : 'oauth_access_tokens';
  ctx.db
    .updateTable(table)
    .set({ last_used_at: iso })
    .where('id', '=', id)
    .execute()
    .catch((err) => ctx.log.warn({ err }, 'could not record token use'));
}

const INVALID = () => unauthorized();

// Every authenticated request runs these: fixed statements without the query builder, on the
// read connection (SQLite) or as prepared statements (PostgreSQL). Token and user are two point
// lookups: on SQLite a LEFT JOIN returning all user columns cost several times the two lookups.
const PAT_COLUMNS = ['id', 'user_id', 'scopes', 'revoked', 'expires_at', 'last_used_at'];
const OAUTH_COLUMNS = ['id', 'resource_owner_id', 'application_id', 'scopes', 'expires_in', 'created_at', 'revoked_at', 'last_used_at'];
const columns = (cols: string[], prefix = '') => cols.map((c) => prefix + c).join(', ');
const PAT_SQL = rawSql(`select ${columns(PAT_COLUMNS)} from personal_access_tokens where token_digest = ?`);
const OAUTH_SQL = rawSql(`select ${columns(OAUTH_COLUMNS)} from oauth_access_tokens where token_digest = ?`);
const USER_SQL = rawSql('select * from users where id = ?');
// On PostgreSQL every statement is a round trip, so the owner comes with the token, as JSON (a LEFT
// JOIN keeps "token of a deleted user" apart from "no such token"). Columns are integers and text
// on both dialects, so the JSON values have the same types as a plain select.
const PAT_WITH_USER_PG = rawSql(
  `select ${columns(PAT_COLUMNS, 't.')}, row_to_json(u.*) as owner from personal_access_tokens t left join users u on u.id = t.user_id where t.token_digest = ?`,
);
const OAUTH_WITH_USER_PG = rawSql(
  `select ${columns(OAUTH_COLUMNS, 't.')}, row_to_json(u.*) as owner from oauth_access_tokens t left join users u on u.id = t.resource_owner_id where t.token_digest = ?`,
);

interface PatRow {
  id: number;
  user_id: number;
  scopes: string;
  revoked: number;
  expires_at: string | null;
  last_used_at: string | null;
}

interface OauthRow {
  id: number;
  resource_owner_id: number;
  application_id: number | null;
  scopes: string;
  expires_in: number | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

function activeUser(user: UserRow | undefined | null): UserRow {
  if (!user || user.state !== 'active') throw INVALID();
  return user;
}

/** The token's owner: joined to the token row on PostgreSQL, a second point lookup on SQLite. */
async function ownerOf(ctx: AppContext, id: number, joined: UserRow | null | undefined): Promise<UserRow> {
  return activeUser(joined !== undefined ? joined : (await ctx.database.read<UserRow>(USER_SQL, [id]))[0]);
}

/** The token row (and, on PostgreSQL, its owner under `owner`). */
function readToken<T>(ctx: AppContext, sqlite: RawSql, postgres: RawSql, digest: string): Promise<Array<T & { owner?: UserRow | null }>> {
  return ctx.database.read(ctx.database.dialect === 'postgres' ? postgres : sqlite, [digest]);
}

/** Throws unless the personal (or group/project access) token may be used now. */
function checkPersonal(row: PatRow): void {
  if (row.revoked) throw INVALID();
  if (row.expires_at && row.expires_at <= todayUtc()) throw INVALID();
}

/** Throws unless the OAuth access token may be used now (expiry from created_at + expires_in). */
function checkOauth(row: OauthRow): void {
  const www = { 'WWW-Authenticate': 'Bearer realm="Labwright", error="invalid_token"' };
  if (row.revoked_at) throw new ApiError(401, { message: '401 Unauthorized' }, www);
  if (row.expires_in != null && Date.parse(row.created_at) + row.expires_in * 1000 <= Date.now()) {
    throw new ApiError(401, { message: '401 Unauthorized' }, www);
  }
}

/** A valid token and its owner, with the row it was read from (checked again on every use). */
type Resolved = { token: AuthToken; user: UserRow } & ({ kind: 'personal'; row: PatRow } | { kind: 'oauth'; row: OauthRow });

async function personalToken(ctx: AppContext, digest: string): Promise<Resolved | null> {
  const [row] = await readToken<PatRow>(ctx, PAT_SQL, PAT_WITH_USER_PG, digest);
  if (!row) return null;
  checkPersonal(row);
  const user = await ownerOf(ctx, row.user_id, row.owner);
  return {
    kind: 'personal',
    row,
    token: { kind: 'personal', id: row.id, scopes: parseScopes(row.scopes), applicationId: null, userId: user.id },
    user,
  };
}

async function oauthToken(ctx: AppContext, digest: string): Promise<Resolved | null> {
  const [row] = await readToken<OauthRow>(ctx, OAUTH_SQL, OAUTH_WITH_USER_PG, digest);
  if (!row) return null;
  checkOauth(row);
  const user = await ownerOf(ctx, row.resource_owner_id, row.owner);
  return {
    kind: 'oauth',
    row,
    token: { kind: 'oauth', id: row.id, scopes: parseScopes(row.scopes), applicationId: row.application_id, userId: user.id },
    user,
  };
}

/**
 * Resolved tokens by database, `authChanges()` stamp and the token's memoryKey. An entry is used
 * only while the stamp and the write epoch are what they were before its rows were read: no process has
 * changed a user or an access token since (a revoked token, a blocked user or a changed scope is
 * seen by the next request, in every process; on PostgreSQL once the notice arrives, milliseconds).
 * The stamp is part of the key, so entries of an older one are never found again (and go when the
 * map is full). At most 10 s old whatever the stamps say (a notice lost without the connection
 * failing). Expiry is checked on every use. Entries are frozen: requests share them.
 */
const resolvedTokens = new EpochCache<Resolved>(10_000, 10_000);

/** Resolves a raw token value of either kind (used by the API and by git over HTTP). */
export async function resolveToken(
  ctx: AppContext,
  value: string,
  kind: 'private' | 'bearer',
): Promise<{ token: AuthToken; user: UserRow } | null> {
  const database = ctx.database;
  // Both stamps before the reads they vouch for: a change during the reads makes the entry stale.
  const changes = database.authChanges();
  const mark = EpochCache.mark(database);
  const key = `${changes}:${kind === 'bearer' ? 'b' : 'p'}${memoryKey(value)}`;
  let resolved = changes === null ? undefined : resolvedTokens.get(database, key);
  if (resolved) {
    if (resolved.kind === 'personal') checkPersonal(resolved.row);
    else checkOauth(resolved.row);
  } else {
    const digest = tokenDigest(ctx.config.secret, value);
    const read = (kind === 'bearer' ? await oauthToken(ctx, digest) : null) ?? (await personalToken(ctx, digest));
    if (!read) return null;
    resolved = read;
    if (changes !== null) resolvedTokens.set(database, key, deepFreeze(read), mark);
  }
  noteUsed(ctx, resolved.kind, resolved.row.id, resolved.row.last_used_at);
  return resolved;
}

export interface ScopeRule {
  /** Scopes that grant access to this route besides `api` (and `read_api` on GET/HEAD). */
  extraScopes?: string[];
}

/** Scope check: `api` always; `read_api` for GET/HEAD; a route's extra scopes (e.g. read_user). */
export function checkScopes(token: AuthToken, method: string, rule: ScopeRule | undefined): void {
  const allowed = ['api'];
  if (method === 'GET' || method === 'HEAD') allowed.push('read_api');
  if (rule?.extraScopes) allowed.push(...rule.extraScopes);
  if (token.scopes.some((s) => allowed.includes(s))) return;
  throw new ApiError(403, {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: allowed.join(' '),
  });
}

async function applySudo(ctx: AppContext, req: FastifyRequest, params: Params, auth: Auth): Promise<Auth> {
  const header = headerValue(req, 'sudo');
  const given = params.has('sudo') ? params.raw.sudo : undefined;
  // `sudo[a]=1` arrives as a hash without a prototype: String() of it throws (it was a 500).
  if (header === undefined && given !== undefined && given !== null && typeof given === 'object') throw paramError('sudo is invalid');
  const raw = header ?? (given === undefined || given === null ? undefined : String(given));
  if (raw === undefined || raw === '') return auth;
  if (!auth.user?.is_admin) throw forbidden('Must be admin to use sudo');
  if (!auth.token) throw forbidden('Must be authenticated using an OAuth or personal access token to use sudo');
  if (!auth.token.scopes.includes('sudo')) {
    throw new ApiError(403, {
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: 'sudo',
    });
  }
  const numeric = /^\d+$/.test(raw);
  const target = numeric ? (Number(raw) <= MAX_DB_INT ? await findUserById(ctx.db, Number(raw)) : undefined) : await findUserByUsername(ctx.db, raw);
  if (!target) throw notFound(`User with ID or username '${raw}'`);
  return { user: target, token: auth.token, sudoFrom: auth.user };
}

/** The header that carries a refresh round's request identity into the refresher's app. */
export const REFRESH_HEADER = 'x-labwright-refresh';

export interface RefreshRequest {
  /** Which of the batch's responses this is. */
  n: number;
  /** The token the response was first made for (by id: the refresher never sees token values). */
  identity: { kind: TokenKind; id: number } | null;
}

/**
 * A refresh round's request (http/refresher.ts), or null. Only the refresher's own app, which
 * listens on no socket and is fed by the round alone, acts on it (callers check `ctx.refresh`).
 */
export function refreshRequest(req: FastifyRequest): RefreshRequest | null {
  const v = req.headers[REFRESH_HEADER];
  if (typeof v !== 'string') return null;
  try {
    const r = JSON.parse(v) as RefreshRequest;
    return typeof r.n === 'number' ? r : null;
  } catch {
    return null;
  }
}

const PAT_BY_ID_SQL = rawSql(`select ${columns(PAT_COLUMNS)} from personal_access_tokens where id = ?`);
const OAUTH_BY_ID_SQL = rawSql(`select ${columns(OAUTH_COLUMNS)} from oauth_access_tokens where id = ?`);

/**
 * A refresh round's caller: the token of the first request, read again by id and checked as a
 * token given by value is (revoked, expired, its owner blocked: the request fails, and nothing is
 * kept), then its scopes and sudo. Its last use is not written (the refresher only reads).
 */
async function refreshAuth(ctx: AppContext, req: FastifyRequest, params: Params, rule: ScopeRule | undefined, identity: RefreshRequest['identity']): Promise<Auth> {
  if (!identity) return authenticate(ctx, req, params, rule, false);
  let resolved: { token: AuthToken; user: UserRow };
  if (identity.kind === 'personal') {
    const [row] = await ctx.database.read<PatRow>(PAT_BY_ID_SQL, [identity.id]);
    if (!row) throw INVALID();
    checkPersonal(row);
    const user = await ownerOf(ctx, row.user_id, undefined);
    resolved = { token: { kind: 'personal', id: row.id, scopes: parseScopes(row.scopes), applicationId: null, userId: user.id }, user };
  } else {
    const [row] = await ctx.database.read<OauthRow>(OAUTH_BY_ID_SQL, [identity.id]);
    if (!row) throw INVALID();
    checkOauth(row);
    const user = await ownerOf(ctx, row.resource_owner_id, undefined);
    resolved = { token: { kind: 'oauth', id: row.id, scopes: parseScopes(row.scopes), applicationId: row.application_id, userId: user.id }, user };
  }
  checkScopes(resolved.token, req.method, rule);
  return applySudo(ctx, req, params, { user: resolved.user, token: resolved.token, sudoFrom: null });
}

/**
 * Authenticates an API request. An invalid token fails the request even on public routes, as
 * GitLab does; no token means anonymous.
 */
export async function authenticate(
  ctx: AppContext,
  req: FastifyRequest,
  params: Params,
  rule: ScopeRule | undefined,
  fromRefresh = true,
): Promise<Auth> {
  if (fromRefresh && ctx.refresh) {
    const r = refreshRequest(req);
    if (r) return refreshAuth(ctx, req, params, rule, r.identity);
  }
  const found = findToken(req, params);
  if (!found) {
    // GitLab's sudo! answers 401 when there is no user to check admin rights on.
    if (headerValue(req, 'sudo') || (params.has('sudo') && params.raw.sudo !== '')) throw INVALID();
    return ANONYMOUS;
  }
  const resolved = await resolveToken(ctx, found.value, found.kind);
  if (!resolved) throw INVALID();
  checkScopes(resolved.token, req.method, rule);
  return applySudo(ctx, req, params, { user: resolved.user, token: resolved.token, sudoFrom: null });
}
