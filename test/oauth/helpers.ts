// Shared set-up for OAuth and web tests: applications through the admin API, a cookie-keeping
// browser stand-in, the consent round trip, and token requests.
import { createHash, randomBytes } from 'node:crypto';
import type { TestServer } from '../helpers/server.js';

export const PASSWORD = 'password-1234';

export interface TestApp {
  id: number;
  uid: string;
  secret: string;
  redirectUri: string;
}

export async function createApp(
  s: TestServer,
  opts: { name?: string; redirectUri?: string; scopes?: string; confidential?: boolean; trusted?: boolean } = {},
): Promise<TestApp> {
  const redirectUri = opts.redirectUri ?? 'https://app.example/cb';
  const r = await s.request('POST', '/applications', {
    json: {
      name: opts.name ?? 'Test app',
      redirect_uri: redirectUri,
      scopes: opts.scopes ?? 'api read_user openid email',
      confidential: opts.confidential ?? true,
      trusted: opts.trusted ?? false,
    },
  });
  if (r.status !== 201) throw new Error(`createApp: ${r.status} ${r.text}`);
  return { id: r.body.id, uid: r.body.application_id, secret: r.body.secret, redirectUri };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/** Keeps cookies between requests like a browser (one cookie jar per instance). */
export class Agent {
  cookies = new Map<string, string>();
  constructor(public readonly base: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, opts: { form?: Record<string, string | string[]>; headers?: Record<string, string>; body?: string } = {}): Promise<PageResponse> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (this.cookies.size) headers.cookie = this.cookieHeader();
    let body = opts.body;
    if (opts.form) {
      const usp = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.form)) for (const x of Array.isArray(v) ? v : [v]) usp.append(k, x);
      body = usp.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (body !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded';
    const res = await fetch(path.startsWith('http') ? path : this.base + path, { method, headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /max-age=0/i.test(a.trim()) || /expires=Thu, 01 Jan 1970/i.test(a.trim()));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
  }

  get(path: string) {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string | string[]>) {
    return this.request('POST', path, { form });
  }
}

export function csrfFrom(html: string): string {
  const m = /name="authenticity_token" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1];
}

export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  const form = html.slice(html.indexOf('action="/oauth/authorize"'));
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[m[1]] = decodeEntities(m[2]);
  return out;
}

function decodeEntities(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#96;/g, '`').replace(/&amp;/g, '&');
}

export async function signIn(s: TestServer, login: string, password = PASSWORD): Promise<Agent> {
  const a = new Agent(s.url);
  const page = await a.get('/users/sign_in');
  const r = await a.post('/users/sign_in', { authenticity_token: csrfFrom(page.text), login, password, redirect_to: '/user_settings/applications' });
  if (r.status !== 303) throw new Error(`sign in as ${login}: ${r.status}`);
  return a;
}

export function authorizeUrl(app: TestApp, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({ client_id: app.uid, redirect_uri: app.redirectUri, response_type: 'code', scope: 'api', state: 'xyz', ...extra });
  return `/oauth/authorize?${q}`;
}

/**
 * Opens the consent page and approves; returns the code and the redirect URL. A confidential
 * application the user already holds a token of these scopes for is approved without the page
 * (GitLab's matching_token?), as a browser would follow.
 */
export async function authorizeCode(agent: Agent, app: TestApp, extra: Record<string, string> = {}): Promise<{ code: string; location: URL }> {
  const page = await agent.get(authorizeUrl(app, extra));
  if (page.status === 302 && page.location && new URL(page.location).searchParams.has('code')) {
    const location = new URL(page.location);
    return { code: location.searchParams.get('code')!, location };
  }
  if (page.status !== 200) throw new Error(`consent page: ${page.status} ${page.location ?? page.text.slice(0, 200)}`);
  const r = await agent.post('/oauth/authorize', { ...hiddenFields(page.text), decision: 'approve' });
  if (r.status !== 303 || !r.location) throw new Error(`approve: ${r.status}`);
  const location = new URL(r.location);
  return { code: location.searchParams.get('code')!, location };
}

export interface TokenCall {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function tokenRequest(s: TestServer, form: Record<string, string>, opts: { basic?: [string, string]; path?: string; headers?: Record<string, string>; raw?: string } = {}): Promise<TokenCall> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', ...(opts.headers ?? {}) };
  if (opts.basic) headers.authorization = 'Basic ' + Buffer.from(`${encodeURIComponent(opts.basic[0])}:${encodeURIComponent(opts.basic[1])}`).toString('base64');
  const res = await fetch(`${s.url}${opts.path ?? '/oauth/token'}`, { method: 'POST', headers, body: opts.raw ?? new URLSearchParams(form).toString() });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Full code flow for a confidential app: returns the token response body. */
export async function codeFlowTokens(s: TestServer, agent: Agent, app: TestApp, scope = 'api'): Promise<any> {
  const { code } = await authorizeCode(agent, app, { scope });
  const t = await tokenRequest(s, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.uid, client_secret: app.secret });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${t.text}`);
  return t.body;
}

export async function apiUser(s: TestServer, accessToken: string): Promise<number> {
  const r = await fetch(`${s.api}/user`, { headers: { authorization: `Bearer ${accessToken}` } });
  await r.text();
  return r.status;
}

export async function tokenInfoStatus(s: TestServer, accessToken: string): Promise<number> {
  const r = await fetch(`${s.url}/oauth/token/info`, { headers: { authorization: `Bearer ${accessToken}` } });
  await r.text();
  return r.status;
}

export async function countRows(s: TestServer, table: 'oauth_access_grants' | 'oauth_access_tokens' | 'oauth_device_grants' | 'web_sessions'): Promise<number> {
  const r = await s.app.lw.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}
