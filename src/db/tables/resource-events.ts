// Resource events (migration 0028): label, state and milestone changes of issues and merge requests.
import type { Generated } from 'kysely';

export interface ResourceEventsTable {
  id: Generated<number>;
  /** label, state or milestone. */
  kind: string;
  /** Issue or MergeRequest. */
  resource_type: string;
  resource_id: number;
  user_id: number | null;
  /** Label and milestone events: add or remove. */
  action: string | null;
  label_id: number | null;
  milestone_id: number | null;
  /** State events: closed, reopened, merged; milestone events: the or merge request's state then. */
  state: string | null;
  /** State events: the commit that closed the issue. */
  source_commit: string | null;
  /** State events: the merge request whose merge closed the issue. */
  source_merge_request_id: number | null;
  created_at: string;
}
