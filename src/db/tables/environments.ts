// Environments of projects (migration 0025; GitLab's environments).
import type { Generated } from 'kysely';

export interface EnvironmentsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  slug: string;
  external_url: string | null;
  description: string | null;
  /** production, staging, testing, development or other. */
  tier: string;
  /** available, stopping or stopped. */
  state: string;
  auto_stop_at: string | null;
  /** always or with_action. */
  auto_stop_setting: string;
  created_at: string;
  updated_at: string;
}
