// Who may read a project's merge requests (the feature's access level), for any user.
import type { UserRow } from '../../db/repositories/users.js';
import { AccessLevel } from '../access.js';
import type { ProjectInfo } from './rows.js';

/** Whether a user may read merge requests of the project (the feature's access level; GitLab's read_merge_request). */
export function userCanReadMrs(user: Pick<UserRow, 'is_admin'> | null, info: ProjectInfo, access: number): boolean {
  // A disabled feature is closed to administrators too (GitLab's merge_requests_disabled).
  const level = info.project.merge_requests_access_level;
  if (level === 'disabled') return false;
  if (user?.is_admin) return true;
  if (level === 'private' || info.project.visibility === 'private') return access >= AccessLevel.REPORTER; // GitLab: Guests of private projects do not read merge requests (they are code)
  return true;
}
