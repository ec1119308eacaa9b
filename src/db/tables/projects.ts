// Row type of the projects table (migration 0002). Booleans are 0/1, timestamps ISO 8601 text.
import type { Generated } from 'kysely';

/** Feature access levels as GitLab names them. */
export type FeatureAccessLevel = 'enabled' | 'private' | 'disabled';

export interface ProjectsTable {
  id: Generated<number>;
  name: string;
  path: string;
  namespace_id: number;
  description: string | null;
  visibility: string; // public | internal | private
  /** Null while the repository has no branch; set by the first push or the first commit. */
  default_branch: string | null;
  archived: number;
  creator_id: number | null;
  issues_access_level: string;
  repository_access_level: string;
  merge_requests_access_level: string;
  forking_access_level: string;
  wiki_access_level: string;
  builds_access_level: string;
  snippets_access_level: string;
  pages_access_level: string;
  squash_option: string; // never | always | default_on | default_off
  merge_method: string; // merge | rebase_merge | ff
  only_allow_merge_if_pipeline_succeeds: number;
  only_allow_merge_if_all_discussions_are_resolved: number;
  allow_merge_on_skipped_pipeline: number;
  remove_source_branch_after_merge: number;
  require_sha_for_merge: number;
  resolve_outdated_diff_discussions: number;
  printing_merge_request_link_enabled: number;
  request_access_enabled: number;
  lfs_enabled: number;
  merge_commit_template: string | null;
  squash_commit_template: string | null;
  suggestion_commit_message: string | null;
  ci_config_path: string | null;
  /** JSON array of strings. */
  topics: string;
  avatar_path: string | null;
  repository_size: number;
  /** Last merge request iid handed out; the merge-request service increments it in a transaction. */
  mr_iid_counter: Generated<number>;
  /** The project this one was forked from (null when not a fork, or once that project is gone). */
  forked_from_project_id: number | null;
  /** The first project of this one's fork network; null for projects never forked nor forks. */
  fork_network_root_id: number | null;
  /** Direct forks, kept by the fork and unlink services. */
  forks_count: Generated<number>;
  mr_default_target_self: Generated<number>;
  /** Users who starred the project, kept by the star service. */
  star_count: Generated<number>;
  /** Commits on the default branch, counted when it moves (project statistics). */
  commit_count: Generated<number>;
  /** Bytes of the wiki repository (migration 0030). */
  wiki_size: Generated<number>;
  /** Bytes of the project's snippet repositories together (migration 0030). */
  snippets_size: Generated<number>;
  /** Bytes of the project's Markdown uploads (migration 0032). */
  uploads_size: Generated<number>;
  /** Migration 0022: the last issue iid given, and the open issues (GitLab's open_issues_count). */
  issue_iid_counter: Generated<number>;
  open_issues_count: Generated<number>;
  open_confidential_issues_count: Generated<number>;
  last_activity_at: string;
  created_at: string;
  updated_at: string;
}

/** users_star_projects (migration 0020). */
export interface UsersStarProjectsTable {
  id: Generated<number>;
  user_id: number;
  project_id: number;
  created_at: string;
  updated_at: string;
}
