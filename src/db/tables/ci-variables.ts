// CI/CD variables of projects, groups and the instance (migration 0023). GitLab keeps three tables
// (ci_variables, ci_group_variables, ci_instance_variables); one table with the owner's kind serves
// the same three APIs here.
import type { Generated } from 'kysely';

export interface CiVariablesTable {
  id: Generated<number>;
  /** 'Project', 'Namespace' (a group) or 'Instance'. */
  source_type: string;
  /** The project's or group's id; 0 for instance variables. */
  source_id: number;
  key: string;
  /** AES-256-GCM under the instance secret (src/services/webhooks/crypto.ts): jobs need the clear value, so no digest. */
  encrypted_value: string;
  /** 'env_var' or 'file'. */
  variable_type: string;
  protected: number;
  masked: number;
  hidden: number;
  raw: number;
  /** '*' for instance variables, which have no scope. */
  environment_scope: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}
