// PersonalAccessToken and PersonalAccessTokenWithToken (spec document 3 §2.5 field order).
import { isActive, type PatRow } from '../../../services/personal-access-tokens.js';

export function presentPersonalAccessToken(t: PatRow) {
  return {
    id: t.id,
    name: t.name,
    revoked: t.revoked === 1,
    created_at: t.created_at,
    description: t.description,
    scopes: JSON.parse(t.scopes) as string[],
    user_id: t.user_id,
    last_used_at: t.last_used_at,
    last_used_ips: JSON.parse(t.last_used_ips) as string[],
    active: isActive(t),
    expires_at: t.expires_at,
  };
}

export function presentPersonalAccessTokenWithToken(t: PatRow, token: string) {
  return Object.assign({}, presentPersonalAccessToken(t), { token });
}

/** Entities::ImpersonationToken: the token's fields, then `impersonation`. */
export function presentImpersonationToken(t: PatRow) {
  return Object.assign(presentPersonalAccessToken(t), { impersonation: t.impersonation === 1 });
}

export function presentImpersonationTokenWithToken(t: PatRow, token: string) {
  return Object.assign(presentImpersonationToken(t), { token });
}
