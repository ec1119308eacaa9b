// Deploy tokens of projects and groups (migration 0024): read-only credentials for git over HTTP
// (and, in GitLab, registries), stored as keyed digests like every other token.
import type { Generated } from 'kysely';

export interface DeployTokensTable {
  id: Generated<number>;
  /** 'project_type' or 'group_type' (GitLab's deploy_token_type). */
  deploy_token_type: string;
  project_id: number | null;
  group_id: number | null;
  name: string;
  /** The custom username, or null for the default `gitlab+deploy-token-<id>`. */
  username: string | null;
  token_digest: string;
  /** JSON array of scopes. */
  scopes: string;
  expires_at: string | null;
  revoked: number;
  creator_id: number | null;
  created_at: string;
  updated_at: string;
}
