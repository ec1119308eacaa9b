// POST /oauth/token: authorization codes and refresh tokens redeemed as fast as the server issues
// token pairs. Codes and refresh tokens are single use, so each request needs its own: the
// scenario writes them straight into the server's database at its start (codes live ten minutes,
// so they cannot be seeded before the ratio scenarios), stored as the server stores them (keyed
// digests, src/oauth/codes.ts and tokens.ts), and checks one of each through the real endpoint first.
import autocannon from 'autocannon';
import { createDatabase, type Database } from '../src/db/database.js';
import { tokenDigest } from '../src/services/secrets.js';
import { measure, SECRET, type Measure } from './load.js';
import type { SpecialCtx } from './special.js';

/** The confidential application the seed registers through POST /applications. */
export interface BenchOAuthApp {
  id: number;
  uid: string;
  secret: string;
  redirectUri: string;
  ownerId: number;
}

export const BENCH_REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** Rows per multi-row INSERT (at most 12 columns: well under both dialects' parameter limits). */
const CHUNK = 500;

/** Inserts `count` rows, `rowAt(i)` each, in multi-row INSERTs. */
async function insertRows(database: Database, table: 'oauth_access_grants' | 'oauth_access_tokens', count: number, rowAt: (i: number) => Record<string, unknown>): Promise<void> {
  for (let start = 0; start < count; start += CHUNK) {
    const rows = Array.from({ length: Math.min(CHUNK, count - start) }, (_, k) => rowAt(start + k));
    await database.db.insertInto(table).values(rows as never).execute();
  }
}

/**
 * Authorization codes `<codes>-<i>`, and live token pairs whose refresh tokens are `<refresh>-<i>`
 * (each the first of its own family), for i in [0, count), issued now for the application's owner.
 */
async function insertGrants(database: Database, secret: string, app: BenchOAuthApp, prefixes: { codes: string; refresh: string }, count: number): Promise<void> {
  const issued = { resource_owner_id: app.ownerId, application_id: app.id, scopes: 'api', created_at: new Date().toISOString(), revoked_at: null };
  await insertRows(database, 'oauth_access_grants', count, (i) => ({
    ...issued,
    token_digest: tokenDigest(secret, `${prefixes.codes}-${i}`),
    expires_in: 600,
    redirect_uri: app.redirectUri,
    code_challenge: null,
    code_challenge_method: null,
  }));
  await insertRows(database, 'oauth_access_tokens', count, (i) => ({
    ...issued,
    token_digest: tokenDigest(secret, `${prefixes.refresh}-access-${i}`),
    refresh_token_digest: tokenDigest(secret, `${prefixes.refresh}-${i}`),
    expires_in: 7200,
    grant_id: 0,
    grant_kind: 'code',
    family_id: null,
    last_used_at: null,
  }));
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** One redemption through the endpoint, and the issued token used on GET /user: the inserted rows work. */
async function check(url: string, body: string): Promise<void> {
  const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const issued = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !issued.access_token) throw new Error(`oauth bench: a seeded grant was refused: ${res.status} ${JSON.stringify(issued)}`);
  const me = await fetch(`${url}/api/v4/user`, { headers: { authorization: `Bearer ${issued.access_token}` } });
  if (me.status !== 200) throw new Error(`oauth bench: an issued token was refused: ${me.status}`);
}

function tokenRequest(fields: (n: number) => Record<string, string>, next: () => number): autocannon.Request {
  return {
    method: 'POST',
    path: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    setupRequest: (req) => Object.assign({}, req, { body: form(fields(next())) }),
  };
}

// POST /oauth/token, grant_type=authorization_code and grant_type=refresh_token
export async function oauthToken(c: SpecialCtx): Promise<void> {
  const app = c.env.seeded.oauthApp;
  const secret = SECRET;
  // Enough for the warm-up and the measurement at several thousand a second.
  const count = c.smoke ? 2_000 : 30_000;
  const run = Date.now().toString(36);
  const codePrefix = `bench-code-${run}`;
  const refreshPrefix = `bench-refresh-${run}`;
  const database = createDatabase({ databaseUrl: c.databaseUrl, dataDir: c.dataDir });
  try {
    await insertGrants(database, secret, app, { codes: codePrefix, refresh: refreshPrefix }, count);
  } finally {
    await database.close();
  }
  const client = { client_id: app.uid, client_secret: app.secret };
  const codeFields = (n: number) => ({ grant_type: 'authorization_code', code: `${codePrefix}-${n}`, redirect_uri: app.redirectUri, ...client });
  const refreshFields = (n: number) => ({ grant_type: 'refresh_token', refresh_token: `${refreshPrefix}-${n}`, ...client });
  await check(c.env.url, form(codeFields(0)));
  await check(c.env.url, form(refreshFields(0)));

  const timing = { ...c.timing, warmup: Math.min(c.timing.warmup, 1) };
  const kinds: Array<[string, (n: number) => Record<string, string>]> = [
    ['authorization code', codeFields],
    ['refresh token', refreshFields],
  ];
  for (const [kind, fields] of kinds) {
    let next = 1;
    const m: Measure = await measure(timing, c.env.url, {}, { requests: [tokenRequest(fields, () => next++)] });
    const used = next - 1;
    c.row({
      scenario: `oauth-token: ${kind}`,
      m,
      baseline: `${used} of ${count} prepared used`,
      result: `${m.okRps.toFixed(0)} issued/s`,
      goal: '≥ 500 issued/s',
      met: used < count && m.non2xx === 0 && m.okRps >= 500,
    });
  }
}
