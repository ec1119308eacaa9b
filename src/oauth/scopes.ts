// OAuth scopes: the API scopes tokens know plus the OpenID Connect ones.
import { KNOWN_SCOPES } from '../services/personal-access-tokens.js';

export const OPENID_SCOPES = ['openid', 'profile', 'email'] as const;
export const OAUTH_SCOPES: readonly string[] = [...KNOWN_SCOPES, ...OPENID_SCOPES];

/** Doorkeeper's default when a request names no scope (GitLab: DEFAULT_SCOPES = api). */
export const DEFAULT_SCOPE = 'api';

const DESCRIPTIONS: Record<string, string> = {
  api: 'Full read and write access to the API, including all groups and projects.',
  read_api: 'Read access to the API, including all groups and projects.',
  read_user: 'Read your personal information.',
  read_repository: 'Read (pull) repositories over Git over HTTP.',
  write_repository: 'Read and write (pull, push) repositories over Git over HTTP.',
  read_registry: 'Read container registry images.',
  write_registry: 'Write container registry images.',
  sudo: 'Perform API actions as any user (administrators only).',
  admin_mode: 'Perform API actions as an administrator in admin mode.',
  openid: 'Authenticate using OpenID Connect.',
  profile: 'Read your profile data using OpenID Connect.',
  email: 'Read your primary email address using OpenID Connect.',
};

export function scopeDescription(scope: string): string {
  return DESCRIPTIONS[scope] ?? `Scope ${scope}.`;
}

/** Splits a space-separated scope string (a `+` in URLs is already a space here). */
export function splitScopes(s: string | null | undefined): string[] {
  return [...new Set((s ?? '').split(/\s+/).filter(Boolean))];
}

export function isKnownScope(s: string): boolean {
  return OAUTH_SCOPES.includes(s);
}

/** True when every requested scope is known and allowed by the application's registration. */
export function scopesAllowed(requested: string[], allowed: string[]): boolean {
  return requested.length > 0 && requested.every((s) => isKnownScope(s) && allowed.includes(s));
}
