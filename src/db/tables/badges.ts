// Project and group badges (migration 0033).
import type { Generated } from 'kysely';

export interface BadgesTable {
  id: Generated<number>;
  /** ProjectBadge or GroupBadge. */
  type: string;
  project_id: number | null;
  group_id: number | null;
  name: string | null;
  link_url: string;
  image_url: string;
  created_at: string;
  updated_at: string;
}
