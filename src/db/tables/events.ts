// Contribution events (migration 0026): one row per thing a person did in a project, as GitLab's
// events table, with a push's payload (GitLab's push_event_payloads) in the push_* columns.
import type { Generated } from 'kysely';

export interface EventsTable {
  id: Generated<number>;
  project_id: number;
  author_id: number;
  /** GitLab's action names: created, updated, closed, reopened, pushed, commented, merged, joined, left, destroyed, expired, approved. */
  action: string;
  /** Issue, MergeRequest, Milestone, Note, DiffNote, DiscussionNote; null for pushes, project creation and membership. */
  target_type: string | null;
  target_id: number | null;
  /** Pushes: pushed, created or removed. */
  push_action: string | null;
  /** Pushes: branch or tag. */
  push_ref_type: string | null;
  /** Pushes: the short ref name (the first of a bulk push's). */
  push_ref: string | null;
  push_commit_from: string | null;
  push_commit_to: string | null;
  push_commit_title: string | null;
  push_commit_count: number | null;
  /** Bulk pushes: how many refs moved (else null). */
  push_ref_count: number | null;
  created_at: string;
}
