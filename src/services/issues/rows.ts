// Issue rows and their batch loader: the users, labels, milestones and projects a page of issues
// shows, loaded with a fixed number of queries whatever the page size (no query per item).
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/types.js';
import type { IssuesTable } from '../../db/tables/issues.js';
import { selectBatch } from '../../db/batch.js';
import { findUserRefsByIds, type UserRefRow, type UserRow } from '../../db/repositories/users.js';
import { readableProjectIds } from '../merge-requests/list.js';
import { joinProjects, projectQueries, type NamespaceRow, type ProjectRow } from '../projects/lookup.js';
import { distinctNonNull, type LabelRow, type MilestoneRow, type ProjectInfo } from '../merge-requests/rows.js';

export type IssueRow = Selectable<IssuesTable>;

export interface IssueBundle {
  users: Map<number, UserRefRow>;
  assignees: Map<number, number[]>;
  labels: Map<number, LabelRow[]>;
  milestones: Map<number, MilestoneRow>;
  projects: Map<number, ProjectInfo>;
  groupPaths: Map<number, string>;
  /** Open merge requests (any state but closed) that close each issue when merged. */
  mergeRequestCounts: Map<number, number>;
}

export const ISSUE_TYPES = ['issue', 'incident', 'test_case', 'task'] as const;

/**
 * `viewer`: the caller whose view this is (merge requests counted in `merge_requests_count` are
 * those they may read); left out (webhooks), every one counts.
 */
export async function loadIssueBundle(db: Kysely<DB>, rows: IssueRow[], known: ProjectInfo[] = [], viewer?: UserRow | null): Promise<IssueBundle> {
  const ids = rows.map((r) => r.id);
  const knownMap = new Map(known.map((k) => [k.project.id, k]));
  const missingProjects = [...new Set(rows.map((r) => r.project_id))].filter((id) => !knownMap.has(id));
  const milestoneIds = distinctNonNull(rows, (r) => r.milestone_id);
  const empty = { assignees: [], labelLinks: [], milestones: [], closing: [] } as {
    assignees: Array<{ id: number; issue_id: number; user_id: number; position: number }>;
    labelLinks: Array<{ issue_id: number; label_id: number }>;
    milestones: MilestoneRow[];
    closing: Array<{ issue_id: number; n: number }>;
    projects?: ProjectRow[];
    namespaces?: NamespaceRow[];
  };
  const readableMrProjects = ids.length && viewer !== undefined ? await readableProjectIds(db, viewer) : null;
  const first = ids.length
    ? await selectBatch(db, {
        assignees: db.selectFrom('issue_assignees').select(['id', 'issue_id', 'user_id', 'position']).where('issue_id', 'in', ids),
        labelLinks: db.selectFrom('issue_labels').select(['issue_id', 'label_id']).where('issue_id', 'in', ids),
        milestones: db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds.length ? milestoneIds : [-1]),
        closing: db
          .selectFrom('merge_requests_closing_issues as c')
          .innerJoin('merge_requests as m', 'm.id', 'c.merge_request_id')
          .select((eb) => ['c.issue_id', eb.fn.countAll<number>().as('n')])
          .where('c.issue_id', 'in', ids)
          .where('m.state', '!=', 'closed')
          .$if(readableMrProjects !== null, (q) => q.where('m.project_id', 'in', readableMrProjects!))
          .groupBy('c.issue_id'),
        ...(missingProjects.length ? projectQueries(db, missingProjects) : {}),
      })
    : empty;
  const userIds = new Set<number>();
  for (const r of rows) {
    userIds.add(r.author_id);
    if (r.closed_by_id !== null) userIds.add(r.closed_by_id);
  }
  for (const a of first.assignees) userIds.add(a.user_id);
  const labelIds = [...new Set(first.labelLinks.map((l) => l.label_id))];
  const groupIds = distinctNonNull(first.milestones as MilestoneRow[], (m) => m.group_id);
  const [users, second] = await Promise.all([
    findUserRefsByIds(db, [...userIds]),
    selectBatch(db, {
      labels: db.selectFrom('labels').selectAll().where('id', 'in', labelIds.length ? labelIds : [-1]),
      groups: db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', groupIds.length ? groupIds : [-1]),
    }),
  ]);
  const projects = joinProjects(((first as { projects?: ProjectRow[] }).projects ?? []) as ProjectRow[], ((first as { namespaces?: NamespaceRow[] }).namespaces ?? []) as NamespaceRow[]);
  for (const [id, info] of knownMap) projects.set(id, info);
  const assignees = new Map<number, number[]>();
  for (const a of [...first.assignees].sort((x, y) => x.position - y.position || x.id - y.id)) {
    const list = assignees.get(a.issue_id);
    if (list) list.push(a.user_id);
    else assignees.set(a.issue_id, [a.user_id]);
  }
  const labelById = new Map((second.labels as LabelRow[]).map((l) => [l.id, l]));
  const labels = new Map<number, LabelRow[]>();
  for (const link of first.labelLinks) {
    const label = labelById.get(link.label_id);
    if (!label) continue;
    const list = labels.get(link.issue_id);
    if (list) list.push(label);
    else labels.set(link.issue_id, [label]);
  }
  for (const list of labels.values()) list.sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
  return {
    users,
    assignees,
    labels,
    milestones: new Map((first.milestones as MilestoneRow[]).map((m) => [m.id, m])),
    projects,
    groupPaths: new Map((second.groups as Array<{ id: number; full_path: string }>).map((g) => [g.id, g.full_path])),
    mergeRequestCounts: new Map((first.closing as Array<{ issue_id: number; n: number }>).map((c) => [c.issue_id, Number(c.n)])),
  };
}

export async function findIssueByIid(db: Kysely<DB>, projectId: number, iid: number): Promise<IssueRow | undefined> {
  return db.selectFrom('issues').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();
}

export async function findIssueById(db: Kysely<DB>, id: number): Promise<IssueRow | undefined> {
  return db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirst();
}
