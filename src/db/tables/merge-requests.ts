// Row types of migration 0005: merge requests and the records their filters and checks read.
import type { Generated } from 'kysely';

export interface MergeRequestsTable {
  id: Generated<number>;
  iid: number;
  project_id: number;
  source_project_id: number;
  author_id: number;
  title: string;
  description: string | null;
  state: string; // opened | closed | merged | locked
  /** Derived from the title prefix at every write, so lists can filter on it. */
  draft: number;
  source_branch: string;
  target_branch: string;
  /** unchecked | can_be_merged | cannot_be_merged; computed for checked_source/target_sha. */
  merge_status: string;
  checked_source_sha: string | null;
  checked_target_sha: string | null;
  /** diff_refs of the latest preparation: head = source tip, start = target tip, base = merge base. */
  head_sha: string | null;
  start_sha: string | null;
  base_sha: string | null;
  commits_count: Generated<number>;
  behind_count: Generated<number>;
  ff_possible: Generated<number>;
  source_missing: Generated<number>;
  changes_count: string | null;
  merge_commit_sha: string | null;
  squash_commit_sha: string | null;
  /** Set between writing the merge commit and recording the merge; reconciled at start-up. */
  in_progress_merge_commit_sha: string | null;
  merge_lock: string | null;
  merge_lock_at: string | null;
  squash: number;
  force_remove_source_branch: number | null;
  should_remove_source_branch: number | null;
  allow_collaboration: Generated<number>;
  discussion_locked: number | null;
  milestone_id: number | null;
  merge_user_id: number | null;
  merged_by_id: number | null;
  merged_at: string | null;
  closed_by_id: number | null;
  closed_at: string | null;
  merge_after: string | null;
  prepared_at: string | null;
  merge_when_pipeline_succeeds: Generated<number>;
  /** JSON: options of a pending auto-merge (commit messages, squash, removal of the source branch). */
  merge_params: Generated<string>;
  merge_error: string | null;
  approvals_before_merge: number | null;
  time_estimate: Generated<number>;
  total_time_spent: Generated<number>;
  upvotes: Generated<number>;
  downvotes: Generated<number>;
  /** Notes that are not system notes (migration 0013). */
  user_notes_count: Generated<number>;
  /** Resolvable notes not resolved yet (migration 0013). */
  unresolved_notes_count: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface MergeRequestAssigneesTable {
  id: Generated<number>;
  merge_request_id: number;
  user_id: number;
  position: number;
}

export interface MergeRequestReviewersTable {
  id: Generated<number>;
  merge_request_id: number;
  user_id: number;
  state: string;
  created_at: string;
}

export interface LabelsTable {
  id: Generated<number>;
  project_id: number | null;
  group_id: number | null;
  title: string;
  title_lower: string;
  color: string;
  description: string | null;
  priority: number | null;
  archived: number;
  created_at: string;
  updated_at: string;
}

export interface MergeRequestLabelsTable {
  id: Generated<number>;
  merge_request_id: number;
  label_id: number;
}

export interface MilestonesTable {
  id: Generated<number>;
  iid: number;
  project_id: number | null;
  group_id: number | null;
  title: string;
  description: string | null;
  state: string; // active | closed
  due_date: string | null;
  start_date: string | null;
  created_at: string;
  updated_at: string;
}

export interface MergeRequestApprovalsTable {
  id: Generated<number>;
  merge_request_id: number;
  user_id: number;
  created_at: string;
}

export interface AwardEmojiTable {
  id: Generated<number>;
  awardable_type: string;
  awardable_id: number;
  user_id: number;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface NotesTable {
  id: Generated<number>;
  project_id: number;
  noteable_type: string;
  noteable_id: number;
  author_id: number;
  body: string;
  discussion_id: string;
  type: string | null;
  system: Generated<number>;
  internal: Generated<number>;
  /** JSON of GitLab's diff position (DiffNote). */
  position: string | null;
  line_code: string | null;
  commit_id: string | null;
  resolved_at: string | null;
  resolved_by_id: number | null;
  updated_by_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface SubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  project_id: number;
  subscribable_type: string;
  subscribable_id: number;
  subscribed: number;
  created_at: string;
  updated_at: string;
}

export interface MergeRequestBlocksTable {
  id: Generated<number>;
  blocking_merge_request_id: number;
  blocked_merge_request_id: number;
  created_at: string;
}

export interface CiPipelinesTable {
  id: Generated<number>;
  iid: number;
  project_id: number;
  sha: string;
  before_sha: string;
  ref: string;
  tag: number;
  source: string;
  status: string;
  user_id: number | null;
  merge_request_id: number | null;
  coverage: string | null;
  started_at: string | null;
  finished_at: string | null;
  committed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface CommitStatusesTable {
  id: Generated<number>;
  project_id: number;
  pipeline_id: number;
  sha: string;
  ref: string | null;
  name: string;
  stage: string;
  status: string;
  target_url: string | null;
  description: string | null;
  coverage: string | null;
  allow_failure: number;
  author_id: number | null;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeploymentsTable {
  id: Generated<number>;
  iid: number;
  project_id: number;
  environment: string;
  ref: string;
  sha: string;
  tag: number;
  status: string;
  user_id: number | null;
  finished_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeploymentMergeRequestsTable {
  id: Generated<number>;
  deployment_id: number;
  merge_request_id: number;
  environment: string;
  deployed_at: string;
}

export interface SpamLogsTable {
  id: Generated<number>;
  user_id: number | null;
  title: string | null;
  description: string | null;
  source_ip: string | null;
  user_agent: string | null;
  noteable_type: string;
  recaptcha_verified: number;
  submitted_as_ham: number;
  created_at: string;
}
