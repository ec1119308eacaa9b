// OAuth error responses with Doorkeeper's wording (gitlab-behaviour.md §10.2). One helper per code.
import { OAuthError } from '../http/errors.js';

export const DESCRIPTIONS = {
  invalid_request: 'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
  invalid_client: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  invalid_grant: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  unsupported_response_type: 'The authorization server does not support this response type.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  unauthorized_client: 'The client is not authorized to perform this request using this method.',
  access_denied: 'The resource owner or authorization server denied the request.',
  authorization_pending: 'The authorization request is still pending as the end user has not yet completed the user-interaction steps.',
  slow_down: 'The client is polling too frequently and should wait longer between requests.',
  expired_token: 'The device code has expired.',
  multiple_client_auth: 'The request utilizes more than one mechanism for authenticating the client.',
} as const;

export const invalidRequest = (description: string = DESCRIPTIONS.invalid_request) => new OAuthError('invalid_request', description, 400);
export const missingParam = (name: string) => invalidRequest(`Missing required parameter: ${name}.`);
export const duplicatedParam = (name: string) => invalidRequest(`The parameter ${name} was given more than once.`);
export const invalidGrant = () => new OAuthError('invalid_grant', DESCRIPTIONS.invalid_grant, 400);
export const invalidScope = () => new OAuthError('invalid_scope', DESCRIPTIONS.invalid_scope, 400);
export const unsupportedGrantType = () => new OAuthError('unsupported_grant_type', DESCRIPTIONS.unsupported_grant_type, 400);

/** 401 invalid_client; a WWW-Authenticate challenge when the client tried Basic (RFC 6749 §5.2). */
export function invalidClient(usedBasic: boolean): OAuthError {
  const headers: Record<string, string> = usedBasic ? { 'WWW-Authenticate': 'Basic realm="Labwright"' } : {};
  return new OAuthError('invalid_client', DESCRIPTIONS.invalid_client, 401, headers);
}

export const deviceError = (code: 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied') =>
  new OAuthError(code, DESCRIPTIONS[code], 400);
