// Personal, group and project access tokens, OAuth applications of the admin API.
import { Arr, Bool, Int, NStr, Str, obj, oneOfStrings, optional, Time, NTime, NDay } from './common.js';

export const patProps = {
  id: Int(),
  name: Str(),
  revoked: Bool(),
  created_at: Time(),
  description: NStr(),
  scopes: Arr(Str()),
  user_id: Int(),
  last_used_at: NTime(),
  last_used_ips: Arr(Str()),
  active: Bool(),
  expires_at: NDay(),
};

export const PersonalAccessToken = obj(patProps, { title: 'PersonalAccessToken' });
export const PersonalAccessTokenWithToken = obj({ ...patProps, token: Str() }, { title: 'PersonalAccessTokenWithToken' });
/** Entities::ImpersonationToken and …WithToken. */
export const ImpersonationToken = obj({ ...patProps, impersonation: Bool() }, { title: 'ImpersonationToken' });
export const ImpersonationTokenWithToken = obj({ ...patProps, impersonation: Bool(), token: Str() }, { title: 'ImpersonationTokenWithToken' });

// Group and project access tokens: a personal token's fields but `last_used_ips`.
const { last_used_ips: _lastUsedIps, ...tokenCommonProps } = patProps;

const resourceTokenProps = {
  ...tokenCommonProps,
  access_level: Int(),
  resource_type: oneOfStrings(['group', 'project']),
  resource_id: Int(),
};

/** Group and project access tokens (services/groups/access-tokens.ts). */
export const ResourceAccessToken = obj({ ...resourceTokenProps, ...optional({ token: Str() }) }, { title: 'ResourceAccessToken' });
/** The same with the token itself (creation and rotation). */
export const ResourceAccessTokenWithToken = obj({ ...resourceTokenProps, token: Str() }, { title: 'ResourceAccessTokenWithToken' });

const applicationProps = {
  id: Int(),
  application_id: Str(),
  application_name: Str(),
  callback_url: Str(),
  confidential: Bool(),
};

export const Application = obj(applicationProps, { title: 'Application' });
export const ApplicationWithSecret = obj({ ...applicationProps, secret: Str() }, { title: 'ApplicationWithSecret' });

/** Entities::DeployToken; DeployTokenWithToken adds `token` (creation only). */
export const DeployToken = obj({
  id: Int(),
  name: Str(),
  username: Str(),
  expires_at: NTime(),
  scopes: Arr(Str()),
  revoked: Bool(),
  expired: Bool(),
});
export const DeployTokenWithToken = obj({ ...DeployToken.properties, token: Str() });
