// Row types of migration 0022: issues and their links.
import type { Generated } from 'kysely';

export interface IssuesTable {
  id: Generated<number>;
  iid: number;
  project_id: number;
  author_id: number;
  title: string;
  description: string | null;
  state: string; // opened | closed
  issue_type: Generated<string>;
  confidential: Generated<number>;
  discussion_locked: number | null;
  due_date: string | null;
  milestone_id: number | null;
  closed_at: string | null;
  closed_by_id: number | null;
  updated_by_id: number | null;
  moved_to_id: Generated<number | null>;
  time_estimate: Generated<number>;
  total_time_spent: Generated<number>;
  upvotes: Generated<number>;
  downvotes: Generated<number>;
  user_notes_count: Generated<number>;
  unresolved_notes_count: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface IssueAssigneesTable {
  id: Generated<number>;
  issue_id: number;
  user_id: number;
  position: number;
}

export interface IssueLabelsTable {
  id: Generated<number>;
  issue_id: number;
  label_id: number;
}

export interface MergeRequestsClosingIssuesTable {
  id: Generated<number>;
  merge_request_id: number;
  issue_id: number;
  created_at: string;
}

export interface IssueLinksTable {
  id: Generated<number>;
  source_id: number;
  target_id: number;
  link_type: string;
  created_at: string;
  updated_at: string;
}
