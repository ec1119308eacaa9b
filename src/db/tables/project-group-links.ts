// Row type of migration 0006: a project shared with a group (POST /projects/:id/share).
import type { Generated } from 'kysely';

export interface ProjectGroupLinksTable {
  id: Generated<number>;
  project_id: number;
  group_id: number;
  group_access: number;
  expires_at: string | null; // YYYY-MM-DD
  created_at: string;
}
