// To-do items (migration 0031).
import type { Generated } from 'kysely';

export interface TodosTable {
  id: Generated<number>;
  user_id: number;
  /** Null for a group's to-do (then group_id is set). */
  project_id: number | null;
  group_id: number | null;
  /** Issue, MergeRequest, Project or Namespace (a group). */
  target_type: string;
  target_id: number;
  author_id: number;
  /** GitLab's Todo action values (1 assigned, 2 mentioned, 4 marked, 7 directly_addressed, 9 review_requested, ...). */
  action: number;
  /** The comment that mentioned the user, for mentions in comments. */
  note_id: number | null;
  /** The text of a to-do that has no note or title to show (a failed transfer's reason). */
  body: string | null;
  /** pending or done. */
  state: string;
  resolved_by_action: string | null;
  created_at: string;
  updated_at: string;
}
