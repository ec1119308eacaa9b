// Access requests (migration 0034).
import type { Generated } from 'kysely';

export interface AccessRequestsTable {
  id: Generated<number>;
  /** Project or Namespace (a group). */
  source_type: string;
  source_id: number;
  user_id: number;
  requested_at: string;
}
