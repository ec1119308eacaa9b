// To-do items (migration 0031).
import type { Generated } from 'kysely';

export interface TodosTable {
  id: Generated<number>;
  user_id: number;
  project_id: number;
  /** Issue or MergeRequest. */
  target_type: string;
  target_id: number;
  author_id: number;
  /** GitLab's Todo action values (1 assigned, 2 mentioned, 4 marked, 7 directly_addressed, 9 review_requested, ...). */
  action: number;
  /** The comment that mentioned the user, for mentions in comments. */
  note_id: number | null;
  /** pending or done. */
  state: string;
  resolved_by_action: string | null;
  created_at: string;
  updated_at: string;
}
