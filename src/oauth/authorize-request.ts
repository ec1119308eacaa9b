// Validation of an authorization request (RFC 6749 §4.1.1, RFC 7636), shared by the consent page
// (GET) and the decision form (POST). Client and redirect_uri problems are shown on a page and never
// redirected (RFC 6749 §4.1.2.1); every later problem is redirected to the client with `state`.
import type { AppContext } from '../context.js';
import { findApplicationByUid, type ApplicationRow } from './client-auth.js';
import { DESCRIPTIONS } from './errors.js';
import { validChallenge } from './pkce.js';
import type { OAuthParams } from './raw-params.js';
import { matchRedirectUri } from './redirect-uri.js';
import { DEFAULT_SCOPE, scopesAllowed, splitScopes } from './scopes.js';

export const AUTHORIZE_PARAMS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'root_namespace_id', 'nonce'] as const;

/** Longest OpenID Connect nonce kept (it is echoed in the ID token). */
const MAX_NONCE = 512;

export interface ValidAuthorization {
  kind: 'ok';
  app: ApplicationRow;
  redirectUri: string;
  scopes: string[];
  state?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  /** OpenID Connect: echoed in the ID token. */
  nonce?: string;
  /** The request's parameters as sent, for the hidden fields of the consent form. */
  fields: Record<string, string>;
}

export type AuthorizationCheck =
  | ValidAuthorization
  | { kind: 'page'; error: string; description: string }
  | { kind: 'redirect'; redirectUri: string; error: string; description: string; state?: string };

export async function checkAuthorizationRequest(ctx: AppContext, p: OAuthParams): Promise<AuthorizationCheck> {
  if (p.isDuplicated('client_id') || p.isDuplicated('redirect_uri')) {
    return { kind: 'page', error: 'invalid_request', description: 'The client_id or redirect_uri parameter was given more than once.' };
  }
  const clientId = p.get('client_id');
  const app = clientId ? await findApplicationByUid(ctx, clientId) : undefined;
  if (!app) return { kind: 'page', error: 'invalid_client', description: DESCRIPTIONS.invalid_client };
  const redirectUri = p.get('redirect_uri');
  if (!redirectUri) return { kind: 'page', error: 'invalid_request', description: 'Missing required parameter: redirect_uri.' };
  if (!matchRedirectUri(app.redirect_uri, redirectUri)) {
    return { kind: 'page', error: 'invalid_redirect_uri', description: 'The redirect URI included is not valid.' };
  }

  const stateDuplicated = p.isDuplicated('state');
  const state = stateDuplicated ? undefined : p.get('state');
  const fail = (error: string, description: string): AuthorizationCheck => ({ kind: 'redirect', redirectUri, error, description, state });
  const dup = p.firstDuplicate();
  if (dup) return fail('invalid_request', `The parameter ${dup} was given more than once.`);

  const responseType = p.get('response_type');
  if (!responseType) return fail('invalid_request', 'Missing required parameter: response_type.');
  if (responseType !== 'code') return fail('unsupported_response_type', DESCRIPTIONS.unsupported_response_type);

  const scopes = splitScopes(p.get('scope') ?? DEFAULT_SCOPE);
  if (!scopesAllowed(scopes, splitScopes(app.scopes))) return fail('invalid_scope', DESCRIPTIONS.invalid_scope);

  const challenge = p.get('code_challenge');
  const method = p.get('code_challenge_method');
  if (method !== undefined && method !== 'S256') return fail('invalid_request', 'Code challenge method must be S256.');
  if (method !== undefined && challenge === undefined) return fail('invalid_request', 'Missing required parameter: code_challenge.');
  if (challenge !== undefined) {
    // Without a method the RFC's default is `plain`, which Labwright does not accept.
    if (method === undefined) return fail('invalid_request', 'Missing required parameter: code_challenge_method.');
    if (!validChallenge(challenge)) return fail('invalid_request', 'The code_challenge is malformed.');
  } else if (!app.confidential) {
    return fail('invalid_request', 'PKCE is required for public clients: code_challenge is missing.');
  }
  const rootNamespaceId = p.get('root_namespace_id');
  // Accepted for compatibility; SAML group SSO does not exist here, so the value is not used.
  if (rootNamespaceId !== undefined && !/^\d+$/.test(rootNamespaceId)) return fail('invalid_request', 'root_namespace_id is invalid.');
  const nonce = p.get('nonce');
  if (nonce !== undefined && nonce.length > MAX_NONCE) return fail('invalid_request', 'The nonce is too long.');

  const fields: Record<string, string> = {};
  for (const name of AUTHORIZE_PARAMS) {
    const v = p.get(name);
    if (v !== undefined) fields[name] = v;
  }
  return { kind: 'ok', app, redirectUri, scopes, state, codeChallenge: challenge, codeChallengeMethod: method, ...(nonce ? { nonce } : {}), fields };
}
