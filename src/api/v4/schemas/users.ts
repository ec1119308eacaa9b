// Users (entities/user.ts), members (entities/member.ts), SSH keys and the enterprise user lists.
import { Any, Arr, Bool, Int, NInt, NStr, Str, nullable, obj, optional, Time, NTime, NDay } from './common.js';

export const userBasicProps = {
  id: Int(),
  username: Str(),
  public_email: NStr(),
  name: Str(),
  state: Str(),
  locked: Bool(),
  avatar_url: NStr(),
  web_url: Str(),
};

/** UserBasic: lists and embedded users. */
export const UserBasic = obj(userBasicProps, { title: 'UserBasic' });

/** Entities::AccessRequester: a user's basic fields without the e-mail, then when they asked. */
export const AccessRequester = obj(
  { id: Int(), username: Str(), name: Str(), state: Str(), locked: Bool(), avatar_url: NStr(), web_url: Str(), requested_at: Time() },
  { title: 'AccessRequester' },
);

export const userProps = {
  ...userBasicProps,
  created_at: Time(),
  bio: Str(),
  location: Str(),
  linkedin: Str(),
  twitter: Str(),
  discord: Str(),
  website_url: Str(),
  github: Str(),
  organization: Str(),
  job_title: Str(),
  pronouns: NStr(),
  bot: Bool(),
  work_information: NStr(),
  followers: Int(),
  following: Int(),
  is_followed: Bool(),
  local_time: NStr(),
};

export const Identity = obj({ provider: Str(), extern_uid: Str(), saml_provider_id: NInt() }, { title: 'Identity' });
export const ScimIdentity = obj({ extern_uid: Str(), group_id: Int(), active: Bool() }, { title: 'ScimIdentity' });

export const userPublicOnlyProps = {
  last_sign_in_at: NTime(),
  confirmed_at: NTime(),
  last_activity_on: NDay(),
  email: Str(),
  theme_id: Int(),
  color_scheme_id: Int(),
  projects_limit: Int(),
  current_sign_in_at: NTime(),
  identities: Arr(Identity),
  can_create_group: Bool(),
  can_create_project: Bool(),
  two_factor_enabled: Bool(),
  external: Bool(),
  private_profile: Bool(),
  commit_email: Str(),
  preferred_language: Str(),
};

export const userAdminOnlyProps = {
  is_admin: Bool(),
  note: NStr(),
  namespace_id: NInt(),
  created_by: nullable(Any()),
  email_reset_offered_at: NTime(),
};

/** Fields the enterprise-users hook adds for administrators (services/groups/enterprise.ts). */
export const userEnterpriseProps = {
  provisioned_by_group_id: NInt(),
  scim_identities: Arr(ScimIdentity),
};

/** UserPublic: the current user's own view. */
export const UserPublic = obj({ ...userProps, ...userPublicOnlyProps }, { title: 'UserPublic' });

/** UserWithAdmin: what administrators see of any user. */
export const UserWithAdmin = obj({ ...userProps, ...userPublicOnlyProps, ...userAdminOnlyProps, ...userEnterpriseProps }, { title: 'UserWithAdmin' });

/** GET /user: UserPublic, or UserWithAdmin for an administrator. */
export const CurrentUser = obj({ ...userProps, ...userPublicOnlyProps, ...optional(userAdminOnlyProps), ...optional(userEnterpriseProps) }, { title: 'CurrentUser' });

/** GET /users/:id: User, UserPublic (oneself) or UserWithAdmin (administrators). */
export const AnyUser = obj(
  { ...userProps, ...optional(userPublicOnlyProps), ...optional(userAdminOnlyProps), ...optional(userEnterpriseProps) },
  { title: 'User' },
);

/** GET /users entries: UserBasic, or UserWithAdmin for administrators. */
export const UserListEntry = obj(
  {
    ...userBasicProps,
    ...optional(userProps),
    ...optional(userPublicOnlyProps),
    ...optional(userAdminOnlyProps),
    ...optional(userEnterpriseProps),
  },
  { title: 'UserListEntry' },
);

// The enterprise user record has UserPublic's own fields but `preferred_language`.
const { preferred_language: _preferredLanguage, ...enterprisePublicProps } = userPublicOnlyProps;

// The enterprise user record has User's fields but `locked` and the profile links GitLab leaves out.
const { locked: _locked, discord: _discord, github: _github, is_followed: _isFollowed, ...enterpriseUserProps } = userProps;

/** The user record of GET /groups/:id/saml_users and /provisioned_users. */
export const EnterpriseUser = obj(
  {
    ...enterpriseUserProps,
    ...enterprisePublicProps,
    shared_runners_minutes_limit: NInt(),
    extra_shared_runners_minutes_limit: NInt(),
    ...optional({ scim_identities: Arr(ScimIdentity) }),
  },
  { title: 'EnterpriseUser' },
);

/** Entities::Member: the user's UserBasic fields with the membership. */
export const Member = obj(
  {
    ...userBasicProps,
    access_level: Int(),
    created_at: Time(),
    ...optional({ created_by: UserBasic, email: Str() }),
    expires_at: NDay(),
    membership_state: Str(),
  },
  { title: 'Member' },
);

export const sshKeyProps = {
  id: Int(),
  title: Str(),
  created_at: Time(),
  expires_at: NTime(),
  last_used_at: NTime(),
  key: Str(),
  usage_type: Str(),
};

export const SshKey = obj(sshKeyProps, { title: 'SshKey' });
export const SshKeyWithUser = obj({ ...sshKeyProps, user: nullable(UserBasic) }, { title: 'SshKeyWithUser' });

/** The credential-inventory record of a key (GET /groups/:id/manage/ssh_keys). */
export const InventorySshKey = obj(
  { id: Int(), title: Str(), created_at: Time(), expires_at: NTime(), last_used_at: NTime(), usage_type: Str(), user_id: Int() },
  { title: 'InventorySshKey' },
);

