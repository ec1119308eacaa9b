// Who may do what with issues (GitLab's ProjectPolicy and IssuePolicy for the issue tracker): the
// feature's access level, confidential issues, and the write rules the API applies.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { AccessLevel } from '../access.js';
import type { ProjectInfo } from '../merge-requests/rows.js';
import type { IssueRow } from './rows.js';

/** read_issue on the project: the issues feature on and visible to the caller (members when private). */
export function canReadIssues(user: UserRow | null, info: ProjectInfo, access: number): boolean {
  if (user?.is_admin) return true;
  const level = info.project.issues_access_level;
  if (level === 'disabled') return false;
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

/**
 * Projects whose issues the user may read (lists across projects): admins all; public projects
 * (internal ones for users who are not external) with the feature enabled; and projects where the
 * user is a member (directly, through an ancestor group, or as the personal namespace's owner) at
 * `minLevel` or above, the feature not disabled.
 */
export function issueProjectIds(db: Kysely<DB>, user: UserRow | null, opts: { minLevel?: number; membersOnly?: boolean } = {}) {
  let q = db.selectFrom('projects as p').innerJoin('namespaces as n', 'n.id', 'p.namespace_id').select('p.id').where('p.issues_access_level', '!=', 'disabled');
  if (user?.is_admin) return q;
  const uid = user?.id ?? -1;
  const level = opts.minLevel ?? AccessLevel.GUEST;
  q = q.where((eb) => {
    const member = eb.or([
      eb('n.owner_id', '=', uid),
      eb.exists(eb.selectFrom('members as m').select('m.id').where('m.source_type', '=', 'Project').whereRef('m.source_id', '=', 'p.id').where('m.user_id', '=', uid).where('m.access_level', '>=', level)),
      eb.exists(
        eb
          .selectFrom('members as gm')
          .select('gm.id')
          .where('gm.source_type', '=', 'Namespace')
          .where('gm.user_id', '=', uid)
          .where('gm.access_level', '>=', level)
          .where(sql<boolean>`n.traversal like ${sql.raw("'%/'")} || cast(gm.source_id as text) || ${sql.raw("'/%'")}`),
      ),
    ]);
    if (opts.membersOnly) return member;
    const open = [eb('p.visibility', '=', 'public')];
    if (user && !user.external) open.push(eb('p.visibility', '=', 'internal'));
    return eb.or([eb.and([eb.or(open), eb('p.issues_access_level', '=', 'enabled')]), member]);
  });
  return q;
}
