// Issues (entities/issue.ts, issues/*.ts): Entities::Issue and IssueBasic, issue links, statistics.
import { Type } from '@sinclair/typebox';
import { Arr, Bool, Int, NBool, NInt, NStr, Str, nullable, obj, optional, Time, NTime, NDay } from './common.js';
import { LabelDetails, Milestone, TimeStats } from './merge-requests.js';
import { UserBasic } from './users.js';

const issueBasicProps = {
  id: Int(),
  iid: Int(),
  project_id: Int(),
  title: Str(),
  description: NStr(),
  state: Str(),
  created_at: Time(),
  updated_at: Time(),
  closed_at: NTime(),
  closed_by: nullable(UserBasic),
  // Titles, or LabelDetails with with_labels_details=true.
  labels: Arr(Type.Union([Str(), LabelDetails])),
  milestone: nullable(Milestone),
  assignees: Arr(UserBasic),
  author: nullable(UserBasic),
  type: Str(),
  assignee: nullable(UserBasic),
  user_notes_count: Int(),
  merge_requests_count: Int(),
  upvotes: Int(),
  downvotes: Int(),
  due_date: NDay(),
  confidential: Bool(),
  discussion_locked: NBool(),
  issue_type: Str(),
  web_url: Str(),
  time_stats: TimeStats,
  task_completion_status: obj({ count: Int(), completed_count: Int() }),
  blocking_issues_count: Int(),
};

/** IssueBasic (an issue link's source and target). */
export const IssueBasic = obj(issueBasicProps, { title: 'IssueBasic' });

const issueProps = {
  ...issueBasicProps,
  has_tasks: Bool(),
  _links: obj({ self: Str(), notes: Str(), award_emoji: Str(), project: Str(), closed_as_duplicate_of: NStr() }),
  references: obj({ short: Str(), relative: Str(), full: Str() }),
  severity: Str(),
  moved_to_id: NInt(),
  imported: Bool(),
  imported_from: Str(),
  service_desk_reply_to: NStr(),
  ...optional({
    // A description without checklist items (GitLab's inverted has_tasks).
    task_status: Str(),
    // Single reads and writes.
    subscribed: Bool(),
  }),
};

/** Issue (lists without `subscribed`, single reads and writes with it). */
export const Issue = obj(issueProps, { title: 'Issue' });

/** RelatedIssue: the other issue of a link, with the link's fields. */
export const RelatedIssue = obj({ ...issueProps, issue_link_id: Int(), link_type: Str(), link_created_at: Time(), link_updated_at: Time() }, { title: 'RelatedIssue' });

/** IssueLink: a link's two issues and its type. */
export const IssueLink = obj({ source_issue: IssueBasic, target_issue: IssueBasic, link_type: Str() }, { title: 'IssueLink' });

export const IssuesStatistics = obj({ statistics: obj({ counts: obj({ all: Int(), closed: Int(), opened: Int() }) }) }, { title: 'IssuesStatistics' });
