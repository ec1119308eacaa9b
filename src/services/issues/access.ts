// Who may do what with issues (GitLab's ProjectPolicy and IssuePolicy for the issue tracker): the
// feature's access level, confidential issues, and the write rules the API applies.
import type { Kysely } from 'kysely';
import { featureProjectIds } from '../projects/list.js';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { AccessLevel } from '../access.js';
import type { ProjectInfo } from '../merge-requests/rows.js';
import type { IssueRow } from './rows.js';

/** read_issue on the project: the issues feature on and visible to the caller (members when private). */
export function canReadIssues(user: UserRow | null, info: ProjectInfo, access: number): boolean {
  // A disabled feature is closed to administrators too (GitLab's issues_disabled prevents read_issue).
  const level = info.project.issues_access_level;
  if (level === 'disabled') return false;
  if (user?.is_admin) return true;
  if (level === 'private' || info.project.visibility === 'private') return access >= AccessLevel.GUEST;
  return true;
}

/** Planners and up see confidential issues and set an issue's metadata (GitLab's admin_issue). */
export function canAdminIssues(user: UserRow | null, access: number): boolean {
  return !!user?.is_admin || access >= AccessLevel.PLANNER;
}

/** A confidential issue is read by its author, its assignees, Planners and up and administrators. */
export function canReadIssue(user: UserRow | null, access: number, issue: IssueRow, assigneeIds: number[]): boolean {
  if (issue.confidential !== 1) return true;
  if (!user) return false;
  return canAdminIssues(user, access) || issue.author_id === user.id || assigneeIds.includes(user.id);
}

/**
 * create_issue: any signed-in caller who may read the project's issues (on public and internal
 * projects non-members too, as GitLab), not on an archived project.
 */
export function canCreateIssue(user: UserRow | null, info: ProjectInfo, access: number): boolean {
  if (!user || info.project.archived) return false;
  return canReadIssues(user, info, access);
}

/** update_issue: Planners and up, the author and the assignees; nothing on an archived project. */
export function canUpdateIssue(user: UserRow | null, info: ProjectInfo, access: number, issue: IssueRow, assigneeIds: number[]): boolean {
  if (!user || info.project.archived) return false;
  if (user.is_admin) return true;
  if (!canReadIssues(user, info, access)) return false;
  return access >= AccessLevel.PLANNER || issue.author_id === user.id || assigneeIds.includes(user.id);
}

/** destroy_issue: Owners, Planners (GitLab 17.7's Planner role may delete issues) and administrators. */
export function canDeleteIssue(user: UserRow | null, access: number): boolean {
  return !!user?.is_admin || access >= AccessLevel.OWNER || access === AccessLevel.PLANNER;
}

/** Projects whose issues the user may read (lists across projects): featureProjectIds for issues. */
export function issueProjectIds(db: Kysely<DB>, user: UserRow | null, opts: Parameters<typeof featureProjectIds>[3] = {}) {
  return featureProjectIds(db, user, 'issues_access_level', opts);
}
