// Version, audit events, and the JSON answers outside /api/v4 (OAuth provider, health checks).
import { Arr, Bool, Int, NInt, NStr, Str, Any, dict, nullable, obj, optional, Time } from './common.js';

/** GET /version and GET /metadata */
export const Version = obj(
  {
    version: Str(),
    revision: Str(),
    kas: obj({ enabled: Bool(), externalUrl: NStr(), externalK8sProxyUrl: NStr(), version: NStr() }),
    enterprise: Bool(),
    labwright_version: Str(),
  },
  { title: 'Version' },
);

export const AuditEvent = obj(
  {
    id: Int(),
    author_id: Int(),
    entity_id: Int(),
    entity_type: Str(),
    event_name: Str(),
    details: dict(Any()),
    created_at: Time(),
  },
  { title: 'AuditEvent' },
);

/** POST /oauth/token (RFC 6749 §5.1). */
export const OAuthToken = obj(
  { access_token: Str(), token_type: Str(), expires_in: Int(), refresh_token: Str(), scope: Str(), created_at: Int() },
  { title: 'OAuthToken' },
);

/** GET /oauth/token/info */
export const OAuthTokenInfo = obj(
  {
    resource_owner_id: Int(),
    scope: Arr(Str()),
    expires_in: NInt(),
    application: nullable(obj({ uid: Str() })),
    created_at: Int(),
    scopes: Arr(Str()),
    expires_in_seconds: NInt(),
  },
  { title: 'OAuthTokenInfo' },
);

/** GET/POST /oauth/userinfo (OpenID Connect claims). */
export const OAuthUserInfo = obj(
  {
    sub: Str(),
    sub_legacy: Str(),
    name: Str(),
    nickname: Str(),
    preferred_username: Str(),
    profile: Str(),
    groups: Arr(Str()),
    groups_direct: Arr(Str()),
    ...optional({
      email: Str(),
      email_verified: Bool(),
      website: Str(),
      picture: Str(),
      'https://gitlab.org/claims/groups/owner': Arr(Str()),
      'https://gitlab.org/claims/groups/maintainer': Arr(Str()),
      'https://gitlab.org/claims/groups/developer': Arr(Str()),
    }),
  },
  { title: 'OAuthUserInfo' },
);

/** POST /oauth/authorize_device (RFC 8628 §3.2). */
export const DeviceAuthorization = obj(
  {
    device_code: Str(),
    user_code: Str(),
    verification_uri: Str(),
    verification_uri_complete: Str(),
    expires_in: Int(),
    interval: Int(),
  },
  { title: 'DeviceAuthorization' },
);

/** POST /oauth/revoke answers an empty object. */
export const EmptyObject = obj({}, { title: 'EmptyObject' });

/** /.well-known/openid-configuration and /.well-known/oauth-authorization-server (RFC 8414). */
export const AuthorizationServerMetadata = obj(
  {
    issuer: Str(),
    authorization_endpoint: Str(),
    token_endpoint: Str(),
    revocation_endpoint: Str(),
    userinfo_endpoint: Str(),
    device_authorization_endpoint: Str(),
    scopes_supported: Arr(Str()),
    response_types_supported: Arr(Str()),
    response_modes_supported: Arr(Str()),
    grant_types_supported: Arr(Str()),
    token_endpoint_auth_methods_supported: Arr(Str()),
    revocation_endpoint_auth_methods_supported: Arr(Str()),
    code_challenge_methods_supported: Arr(Str()),
    subject_types_supported: Arr(Str()),
    claims_supported: Arr(Str()),
  },
  { title: 'AuthorizationServerMetadata' },
);

export const Liveness = obj({ status: Str() }, { title: 'Liveness' });
export const Readiness = obj(
  { status: Str(), master_check: Arr(obj({ status: Str() })), db_check: Arr(obj({ status: Str() })) },
  { title: 'Readiness' },
);
