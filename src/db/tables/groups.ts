// Row types of the groups migration (0003): group settings, group sharing, custom attributes,
// audit events, SSH keys, resource access token bots and enterprise-user provisioning.
import type { Generated } from 'kysely';

/** One row per group namespace: the §4.4 settings (JSON) plus the columns lists filter on. */
export interface GroupSettingsTable {
  id: Generated<number>;
  namespace_id: number;
  /** JSON object of the settings that differ from the defaults in services/groups/settings.ts. */
  settings: string;
  archived: number;
  marked_for_deletion_on: string | null; // YYYY-MM-DD
  repository_storage: string;
  created_by_id: number | null;
  updated_at: string;
}

/** A group shared with another group (spec document 3 §4.3). */
export interface GroupGroupLinksTable {
  id: Generated<number>;
  shared_group_id: number;
  shared_with_group_id: number;
  group_access: number;
  expires_at: string | null; // YYYY-MM-DD
  member_role_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface NamespaceCustomAttributesTable {
  id: Generated<number>;
  namespace_id: number;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

export interface AuditEventsTable {
  id: Generated<number>;
  author_id: number | null;
  author_name: string;
  /** Group | Project | User */
  entity_type: string;
  entity_id: number;
  entity_path: string;
  target_type: string | null;
  target_id: number | null;
  target_details: string | null;
  event_name: string;
  /** JSON object */
  details: string;
  ip_address: string | null;
  created_at: string;
}

export interface SshKeysTable {
  id: Generated<number>;
  user_id: number;
  title: string;
  /** The public key as given (normalised to `type base64 [comment]`); public, not a secret. */
  key: string;
  key_type: string;
  fingerprint: string; // MD5, colon separated
  fingerprint_sha256: string; // SHA256:base64
  usage_type: string; // auth | signing | auth_and_signing
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Bot users behind group and project access tokens. */
export interface ResourceAccessBotsTable {
  id: Generated<number>;
  user_id: number;
  /** Namespace | Project */
  source_type: string;
  source_id: number;
  created_at: string;
}

/** Enterprise users: provisioned by a group (SCIM/SAML). */
export interface UserGroupProvisionsTable {
  id: Generated<number>;
  user_id: number;
  provisioned_by_group_id: number | null;
  enterprise_group_id: number | null;
  created_at: string;
}

export interface UserIdentitiesTable {
  id: Generated<number>;
  user_id: number;
  provider: string;
  extern_uid: string;
  saml_provider_id: number | null;
  created_at: string;
}

export interface ScimIdentitiesTable {
  id: Generated<number>;
  user_id: number;
  group_id: number;
  extern_uid: string;
  active: number;
  created_at: string;
}
