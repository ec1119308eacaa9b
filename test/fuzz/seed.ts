// The fuzzer's fixtures: callers in every token state, and "victim" resources whose ids fill path
// params. The callers' own users are kept out of the id pools so the fuzzer rarely destroys the
// identities it fuzzes with; when it does (rotate /self, revoke, block), `heal` recreates them.
import { sql } from 'kysely';
import { tokenDigest } from '../../src/services/secrets.js';
import type { TestServer } from '../helpers/server.js';
import { Agent, csrfFrom, PASSWORD } from '../oauth/helpers.js';

export type TokenState =
  | 'none' | 'admin' | 'user' | 'read_api' | 'revoked' | 'expired' | 'garbage'
  | 'oauth' | 'oauth_read_user' | 'oauth_expired' | 'oauth_revoked';
export const TOKEN_STATES: TokenState[] = ['none', 'admin', 'user', 'read_api', 'revoked', 'expired', 'garbage', 'oauth', 'oauth_read_user', 'oauth_expired', 'oauth_revoked'];

/** OAuth access tokens: sent as `Authorization: Bearer` (the only way a client sends them). */
export function isOAuthState(state: TokenState): boolean {
  return state.startsWith('oauth');
}

export interface Pools {
  tokens: Record<TokenState, string | null>;
  userIds: number[];
  usernames: string[];
  tokenIds: number[];
  projects: Array<{ id: number; path: string }>;
  groups: Array<{ id: number; path: string }>;
  mrIids: number[];
  branches: string[];
  files: string[];
  shas: string[];
  appIds: number[];
}

let serial = 0;
function uniq(prefix: string): string {
  serial += 1;
  return `${prefix}${serial}${Math.random().toString(36).slice(2, 6)}`;
}

async function tokenFor(s: TestServer, userId: number, scopes: string[], expiresAt?: string): Promise<{ id: number; token: string }> {
  const r = await s.request('POST', `/users/${userId}/personal_access_tokens`, { json: { name: uniq('fz'), scopes, expires_at: expiresAt } });
  if (r.status !== 201) throw new Error(`seed token: ${r.status} ${r.text}`);
  return { id: r.body.id, token: r.body.token };
}

/**
 * An OAuth access token through the real endpoints: a new user signs in, a trusted application of
 * its own (no consent page; its own so that the fuzzer deleting one revokes only that caller) gives
 * a code, and the code is exchanged at /oauth/token.
 */
async function oauthToken(s: TestServer, scope: string): Promise<{ access: string; uid: string; secret: string }> {
  const u = await s.createUser(uniq('fuzzoauth'));
  const redirectUri = 'https://fuzz.example/cb';
  const app = await s.request('POST', '/applications', { json: { name: uniq('fzoauth'), redirect_uri: redirectUri, scopes: 'api read_user', trusted: true } });
  if (app.status !== 201) throw new Error(`seed oauth application: ${app.status} ${app.text}`);
  const agent = new Agent(s.url);
  const page = await agent.get('/users/sign_in');
  const signIn = await agent.post('/users/sign_in', { authenticity_token: csrfFrom(page.text), login: u.username, password: PASSWORD, redirect_to: '/' });
  if (signIn.status !== 303) throw new Error(`seed oauth sign-in: ${signIn.status}`);
  const q = new URLSearchParams({ client_id: app.body.application_id, redirect_uri: redirectUri, response_type: 'code', scope, state: 'fz' });
  const auth = await agent.get(`/oauth/authorize?${q}`);
  const code = auth.location ? new URL(auth.location).searchParams.get('code') : null;
  if (auth.status !== 302 || !code) throw new Error(`seed oauth authorize: ${auth.status} ${auth.location ?? auth.text.slice(0, 200)}`);
  const t = await s.request('POST', '/oauth/token', {
    token: null,
    form: { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: app.body.application_id, client_secret: app.body.secret },
  });
  if (t.status !== 200) throw new Error(`seed oauth token: ${t.status} ${t.text}`);
  return { access: t.body.access_token, uid: app.body.application_id, secret: app.body.secret };
}

/** The states whose callers may break during a run and how to remake them. */
async function makeCaller(s: TestServer, state: TokenState, pools: Pools): Promise<string | null> {
  switch (state) {
    case 'none':
      return null;
    case 'garbage':
      return 'glpat-not-a-real-token-0000000000';
    case 'admin':
      // Root itself (user 1), through a second token: the harness keeps the initial one for set-up and healing.
      return (await tokenFor(s, 1, ['api', 'sudo'])).token;
    case 'user':
      return (await s.createUser(uniq('fuzzuser'))).token;
    case 'read_api':
      return (await s.createUser(uniq('fuzzreader'), { scopes: ['read_api'] })).token;
    case 'revoked': {
      const u = await s.createUser(uniq('fuzzrevoked'));
      const t = await tokenFor(s, u.id, ['api']);
      const r = await s.request('DELETE', `/personal_access_tokens/${t.id}`);
      if (r.status !== 204) throw new Error(`seed revoke: ${r.status}`);
      return t.token;
    }
    case 'expired': {
      const u = await s.createUser(uniq('fuzzexpired'));
      const t = await tokenFor(s, u.id, ['api']);
      // The API refuses past dates, so the fixture ages the row the way time would.
      await sql`update personal_access_tokens set expires_at = '2020-01-01' where id = ${t.id}`.execute(s.app.lw.db);
      await s.settle();
      void pools;
      return t.token;
    }
    case 'oauth':
      return (await oauthToken(s, 'api')).access;
    case 'oauth_read_user':
      return (await oauthToken(s, 'read_user')).access;
    case 'oauth_expired': {
      const t = await oauthToken(s, 'api');
      // Two hours is the lifetime: the fixture ages the row past it, as for the expired PAT.
      await s.app.lw.db
        .updateTable('oauth_access_tokens')
        .set({ created_at: new Date(Date.now() - 3 * 3600_000).toISOString() })
        .where('token_digest', '=', tokenDigest(s.app.lw.config.secret, t.access))
        .execute();
      await s.settle();
      return t.access;
    }
    case 'oauth_revoked': {
      const t = await oauthToken(s, 'api');
      const r = await s.request('POST', '/oauth/revoke', { token: null, form: { token: t.access, client_id: t.uid, client_secret: t.secret } });
      if (r.status !== 200) throw new Error(`seed oauth revoke: ${r.status} ${r.text}`);
      return t.access;
    }
  }
}

const EXPECTED: Record<TokenState, number> = {
  none: 401, garbage: 401, admin: 200, user: 200, read_api: 200, revoked: 401, expired: 401,
  oauth: 200, oauth_read_user: 200, oauth_expired: 401, oauth_revoked: 401,
};

/** Re-creates any caller whose token no longer behaves as its state says (the fuzzer revoked or rotated it). */
export async function heal(s: TestServer, pools: Pools): Promise<string[]> {
  const healed: string[] = [];
  const root = await s.request('GET', '/user');
  if (root.status !== 200) throw new Error(`the fuzzer broke the root token the harness needs: ${root.status} ${root.text}`);
  for (const state of TOKEN_STATES) {
    const token = pools.tokens[state];
    const r = isOAuthState(state)
      ? await s.request('GET', '/user', { token: null, headers: { authorization: `Bearer ${token}` } })
      : await s.request('GET', '/user', { token });
    const adminOk = state !== 'admin' || r.body?.is_admin === true;
    if (r.status === EXPECTED[state] && adminOk) continue;
    pools.tokens[state] = await makeCaller(s, state, pools);
    healed.push(state);
  }
  return healed;
}

async function tryJson(s: TestServer, method: string, path: string, json: unknown, token?: string | null): Promise<any | null> {
  const r = await s.request(method, path, { json, token: token ?? undefined });
  return r.status >= 200 && r.status < 300 ? r.body : null;
}

/** Victim resources: users, tokens, a group, projects with a branch and a merge request when those modules exist. */
export async function seed(s: TestServer): Promise<Pools> {
  const pools: Pools = {
    tokens: {
      none: null, garbage: null, admin: null, user: null, read_api: null, revoked: null, expired: null,
      oauth: null, oauth_read_user: null, oauth_expired: null, oauth_revoked: null,
    },
    userIds: [],
    usernames: [],
    tokenIds: [],
    projects: [],
    groups: [],
    mrIids: [1, 2],
    branches: ['main', 'feature'],
    files: ['README.md'],
    shas: ['main', 'HEAD'],
    appIds: [],
  };
  for (const state of TOKEN_STATES) pools.tokens[state] = await makeCaller(s, state, pools);
  // Every caller is what its state says before the run starts (heal remakes any that is not).
  const wrong = await heal(s, pools);
  if (wrong.length) throw new Error(`seeded callers not in their state: ${wrong.join(', ')}`);
  for (const name of ['victim-a', 'victim-b', 'victim-c']) {
    const v = await s.createUser(uniq(name));
    pools.userIds.push(v.id);
    pools.usernames.push(v.username);
    const t = await tokenFor(s, v.id, ['api', 'read_user']);
    pools.tokenIds.push(t.id);
    // A project per victim (the projects module may not exist yet: failures are ignored).
    const p = await tryJson(s, 'POST', '/projects', { name: uniq('fuzzproj'), initialize_with_readme: true, visibility: 'public' }, v.token);
    if (p) pools.projects.push({ id: p.id, path: p.path_with_namespace });
  }
  const g = await tryJson(s, 'POST', '/groups', { name: uniq('fuzzgroup'), path: uniq('fuzzgroup'), visibility: 'public' });
  if (g) pools.groups.push({ id: g.id, path: g.full_path });
  const app = await tryJson(s, 'POST', '/applications', { name: 'fuzzapp', redirect_uri: 'http://127.0.0.1/cb', scopes: 'api' });
  if (app) pools.appIds.push(app.id);
  for (const p of pools.projects) {
    await tryJson(s, 'POST', `/projects/${p.id}/repository/commits`, {
      branch: 'feature',
      start_branch: 'main',
      commit_message: 'fuzz change',
      actions: [{ action: 'create', file_path: 'fuzz.txt', content: 'fuzz\n' }],
    });
    const mr = await tryJson(s, 'POST', `/projects/${p.id}/merge_requests`, { source_branch: 'feature', target_branch: 'main', title: 'fuzz mr' });
    if (mr) pools.mrIids.push(mr.iid);
    const c = await tryJson(s, 'GET', `/projects/${p.id}/repository/commits/main`, undefined);
    if (c?.id) pools.shas.push(c.id);
  }
  return pools;
}
