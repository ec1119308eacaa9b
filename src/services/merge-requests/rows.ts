// Row types and batch loaders for merge requests: everything a list needs is loaded with a fixed
// number of queries, whatever the page size (no query per item).
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/types.js';
import type * as T from '../../db/tables/merge-requests.js';
import { findUserRefsByIds, type UserRefRow } from '../../db/repositories/users.js';
import type { NamespaceRow, ProjectRow } from '../projects/lookup.js';

export type MrRow = Selectable<T.MergeRequestsTable>;
export type LabelRow = Selectable<T.LabelsTable>;
export type MilestoneRow = Selectable<T.MilestonesTable>;
export type PipelineRow = Selectable<T.CiPipelinesTable>;

export interface ProjectInfo {
  project: ProjectRow;
  namespace: NamespaceRow;
}

/** Everything the presenter reads besides the rows themselves. */
export interface MrBundle {
  users: Map<number, UserRefRow>;
  assignees: Map<number, number[]>;
  reviewers: Map<number, number[]>;
  labels: Map<number, LabelRow[]>;
  milestones: Map<number, MilestoneRow>;
  projects: Map<number, ProjectInfo>;
  /** Latest pipeline per `project_id:sha`. */
  pipelines: Map<string, PipelineRow>;
  /** Ids of merge requests blocked by at least one open merge request. */
  blocked: Set<number>;
  /** Full paths of the groups that own group milestones shown. */
  groupPaths: Map<number, string>;
}

function group<K, V>(rows: V[], key: (r: V) => K): Map<K, V[]> {
  const m = new Map<K, V[]>();
  for (const r of rows) {
    const k = key(r);
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return m;
}

export async function loadProjects(db: Kysely<DB>, ids: number[]): Promise<Map<number, ProjectInfo>> {
  const out = new Map<number, ProjectInfo>();
  const unique = [...new Set(ids)];
  if (!unique.length) return out;
  const projects = await db.selectFrom('projects').selectAll().where('id', 'in', unique).execute();
  const nsIds = [...new Set(projects.map((p) => p.namespace_id))];
  const namespaces = nsIds.length ? await db.selectFrom('namespaces').selectAll().where('id', 'in', nsIds).execute() : [];
  const nsById = new Map(namespaces.map((n) => [n.id, n]));
  for (const p of projects) {
    const ns = nsById.get(p.namespace_id);
    if (ns) out.set(p.id, { project: p, namespace: ns });
  }
  return out;
}

export async function loadBundle(db: Kysely<DB>, rows: MrRow[], known?: ProjectInfo[]): Promise<MrBundle> {
  const ids = rows.map((r) => r.id);
  const empty = ids.length === 0;
  const [assigneeRows, reviewerRows, labelRows, blockRows] = empty
    ? [[], [], [], []]
    : await Promise.all([
        db.selectFrom('merge_request_assignees').select(['merge_request_id', 'user_id', 'position']).where('merge_request_id', 'in', ids).orderBy('position').orderBy('id').execute(),
        db.selectFrom('merge_request_reviewers').select(['merge_request_id', 'user_id']).where('merge_request_id', 'in', ids).orderBy('id').execute(),
        db
          .selectFrom('merge_request_labels')
          .innerJoin('labels', 'labels.id', 'merge_request_labels.label_id')
          .selectAll('labels')
          .select('merge_request_labels.merge_request_id as mr_id')
          .where('merge_request_labels.merge_request_id', 'in', ids)
          .execute(),
        db
          .selectFrom('merge_request_blocks')
          .innerJoin('merge_requests as blocking', 'blocking.id', 'merge_request_blocks.blocking_merge_request_id')
          .select('merge_request_blocks.blocked_merge_request_id as blocked_id')
          .where('merge_request_blocks.blocked_merge_request_id', 'in', ids)
          .where('blocking.state', '=', 'opened')
          .execute(),
      ]);
  const milestoneIds = [...new Set(rows.map((r) => r.milestone_id).filter((x): x is number => x !== null))];
  const userIds = rows.flatMap((r) => [r.author_id, r.merge_user_id, r.merged_by_id, r.closed_by_id].filter((x): x is number => x !== null));
  for (const a of assigneeRows) userIds.push(a.user_id);
  for (const a of reviewerRows) userIds.push(a.user_id);
  const projectIds = [...new Set(rows.map((r) => r.project_id))];
  const knownMap = new Map((known ?? []).map((k) => [k.project.id, k]));
  const missingProjects = projectIds.filter((id) => !knownMap.has(id));
  const shas = [...new Set(rows.map((r) => r.head_sha).filter((x): x is string => !!x))];
  const [users, milestones, projects, pipelines] = await Promise.all([
    findUserRefsByIds(db, userIds),
    milestoneIds.length ? db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).execute() : Promise.resolve([]),
    loadProjects(db, missingProjects),
    shas.length
      ? db.selectFrom('ci_pipelines').selectAll().where('project_id', 'in', projectIds).where('sha', 'in', shas).orderBy('id', 'asc').execute()
      : Promise.resolve([] as PipelineRow[]),
  ]);
  for (const [id, info] of knownMap) projects.set(id, info);
  const groupIds = [...new Set(milestones.map((m) => m.group_id).filter((x): x is number => x !== null))];
  const groupRows = groupIds.length ? await db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', groupIds).execute() : [];
  const pipelineMap = new Map<string, PipelineRow>();
  for (const p of pipelines) pipelineMap.set(`${p.project_id}:${p.sha}`, p); // ascending: the last one wins
  const labels = new Map<number, LabelRow[]>();
  for (const [mrId, list] of group(labelRows, (l) => l.mr_id)) {
    labels.set(mrId, list.map(({ mr_id: _drop, ...l }) => l as LabelRow).sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0)));
  }
  return {
    users,
    assignees: new Map([...group(assigneeRows, (a) => a.merge_request_id)].map(([k, v]) => [k, v.map((x) => x.user_id)])),
    reviewers: new Map([...group(reviewerRows, (a) => a.merge_request_id)].map(([k, v]) => [k, v.map((x) => x.user_id)])),
    labels,
    milestones: new Map(milestones.map((m) => [m.id, m])),
    projects,
    pipelines: pipelineMap,
    blocked: new Set(blockRows.map((b) => b.blocked_id)),
    groupPaths: new Map(groupRows.map((g) => [g.id, g.full_path])),
  };
}

export function findMrByIid(db: Kysely<DB>, projectId: number, iid: number): Promise<MrRow | undefined> {
  return db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();
}

export function findMrById(db: Kysely<DB>, id: number): Promise<MrRow | undefined> {
  return db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Largest value of an `integer` column on PostgreSQL; larger ids can match nothing. */
export const MAX_DB_INT = 2_147_483_647;

/** An id from the client as a value safe to compare with an integer column (-1 matches nothing). */
export function dbId(n: number): number {
  return n > MAX_DB_INT || n < -MAX_DB_INT ? -1 : n;
}

/** A path segment that must be a record id: its number, or -1 (no match) when not a usable integer. */
export function pathId(raw: unknown): number {
  const s = String(raw ?? '');
  return /^\d{1,10}$/.test(s) ? dbId(Number(s)) : -1;
}
