// Deploy keys and their project links (migration 0036).
import type { Generated } from 'kysely';

/** GitLab's keys rows of type DeployKey. */
export interface DeployKeysTable {
  id: Generated<number>;
  /** Who added the key; null once that user is deleted (GitLab's dependent: :nullify). */
  user_id: number | null;
  title: string;
  /** The public key, normalised to `type base64 [comment]`; public, not a secret. */
  key: string;
  key_type: string;
  fingerprint: string; // MD5, colon separated
  fingerprint_sha256: string; // SHA256:base64, unique here and against ssh_keys
  usage_type: string;
  /** 1 for instance-wide keys (POST /deploy_keys): any user may enable them in projects they maintain. */
  public: number;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A key enabled in a project (GitLab's deploy_keys_projects). */
export interface DeployKeysProjectsTable {
  id: Generated<number>;
  deploy_key_id: number;
  project_id: number;
  can_push: number;
  created_at: string;
  updated_at: string;
}
