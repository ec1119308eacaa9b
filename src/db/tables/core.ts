// Row types of the foundation tables (migration 0001). Timestamps are ISO 8601 text, booleans 0/1.
import type { Generated } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  username: string;
  name: string;
  email: string;
  password_digest: string | null;
  state: string; // active | blocked | deactivated
  is_admin: number;
  user_type: string; // human | project_bot | service_account
  bio: string;
  location: string;
  public_email: string | null;
  website_url: string;
  organization: string;
  job_title: string;
  pronouns: string | null;
  avatar_path: string | null;
  can_create_group: number;
  projects_limit: number;
  external: number;
  private_profile: number;
  failed_attempts: number;
  locked_until: string | null;
  last_sign_in_at: string | null;
  current_sign_in_at: string | null;
  last_activity_on: string | null;
  confirmed_at: string | null;
  created_by_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface NamespacesTable {
  id: Generated<number>;
  name: string;
  path: string;
  full_path: string;
  full_name: string;
  /** 'user' or 'group' */
  kind: string;
  parent_id: number | null;
  /** '/1/5/9/': ids from the root to this namespace, for descendant queries by prefix. */
  traversal: string;
  owner_id: number | null;
  visibility: string; // public | internal | private
  description: string;
  avatar_path: string | null;
  created_at: string;
  updated_at: string;
}

/** Every full path (namespace or project) lives here, so paths never collide across kinds. */
export interface RoutesTable {
  id: Generated<number>;
  source_type: string; // Namespace | Project
  source_id: number;
  path: string;
  path_lower: string;
  name: string;
  created_at: string;
}

/** Old paths of renamed or moved namespaces and projects (spec rule 12). */
export interface RedirectRoutesTable {
  id: Generated<number>;
  source_type: string;
  source_id: number;
  path: string;
  path_lower: string;
  created_at: string;
}

export interface MembersTable {
  id: Generated<number>;
  source_type: string; // Namespace | Project
  source_id: number;
  user_id: number;
  access_level: number;
  expires_at: string | null; // YYYY-MM-DD
  created_by_id: number | null;
  member_role_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  description: string | null;
  token_digest: string;
  scopes: string; // JSON array
  revoked: number;
  expires_at: string | null; // YYYY-MM-DD
  last_used_at: string | null;
  last_used_ips: string; // JSON array
  impersonation: number;
  previous_personal_access_token_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface OauthApplicationsTable {
  id: Generated<number>;
  name: string;
  uid: string;
  secret_digest: string;
  redirect_uri: string; // newline separated
  scopes: string; // space separated
  confidential: number;
  trusted: number;
  owner_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface OauthAccessGrantsTable {
  id: Generated<number>;
  resource_owner_id: number;
  application_id: number;
  token_digest: string;
  expires_in: number;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  created_at: string;
  revoked_at: string | null;
  /** OpenID Connect: the authorization request's nonce, echoed in the ID token (migration 0017). */
  nonce: Generated<string | null>;
}

export interface OauthAccessTokensTable {
  id: Generated<number>;
  resource_owner_id: number;
  application_id: number | null;
  token_digest: string;
  refresh_token_digest: string | null;
  expires_in: number | null;
  scopes: string; // space separated
  /** The grant (authorization code or device grant) this token family came from. */
  grant_id: number | null;
  grant_kind: string | null; // code | device
  /** Tokens of one refresh chain share a family id (the id of the first token). */
  family_id: number | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}
