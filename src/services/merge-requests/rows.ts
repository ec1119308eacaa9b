// Row types and batch loaders for merge requests: everything a list needs is loaded with a fixed
// number of queries, whatever the page size (no query per item).
import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import type * as T from '../../db/tables/merge-requests.js';
import { isPostgres, selectBatch } from '../../db/batch.js';
import { prepared, type BoundStatement } from '../../db/prepared.js';
import { findUserRefsByIds, USER_REF_COLUMNS, type UserRefRow } from '../../db/repositories/users.js';
import { joinProjects, projectQueries, type NamespaceRow, type ProjectRow } from '../projects/lookup.js';

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
  /** Rows of the caller's `alsoFirst` queries, by key. */
  also: Record<string, unknown[]>;
}

/**
 * The distinct non-null values of `key` over `rows`, in first-seen order: a loop into a Set, not
 * `rows.map(key).filter(…)`, whose intermediate array is of another elements kind when it holds
 * nulls than when it holds numbers only, each kind seen anew at `.filter` throwing the caller's
 * optimised code away (loadBundle was compiled again and again under a mixed load).
 */
export function distinctNonNull<R, V>(rows: readonly R[], key: (r: R) => V | null): V[] {
  const seen = new Set<V>();
  for (let i = 0; i < rows.length; i++) {
    const v = key(rows[i]!);
    if (v !== null) seen.add(v);
  }
  return [...seen];
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
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  const { projects, namespaces } = await selectBatch(db, projectQueries(db, unique));
  return joinProjects(projects, namespaces);
}

const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;

/** Labels by id, 500 ids per query. */
async function labelsByIds(db: Kysely<DB>, ids: number[]): Promise<LabelRow[]> {
  const out: LabelRow[] = [];
  for (let i = 0; i < ids.length; i += 500) out.push(...(await db.selectFrom('labels').selectAll().where('id', 'in', ids.slice(i, i + 500)).execute()));
  return out;
}

// The bundle's statements, compiled once per list length (src/db/prepared.ts).
const assigneesOf = prepared((db, ids: readonly number[]) =>
  db.selectFrom('merge_request_assignees').select(['id', 'merge_request_id', 'user_id', 'position']).where('merge_request_id', 'in', ids),
);
const reviewersOf = prepared((db, ids: readonly number[]) => db.selectFrom('merge_request_reviewers').select(['id', 'merge_request_id', 'user_id']).where('merge_request_id', 'in', ids));
const labelLinksOf = prepared((db, ids: readonly number[]) => db.selectFrom('merge_request_labels').select(['merge_request_id', 'label_id']).where('merge_request_id', 'in', ids));
const openBlockersOf = prepared((db, ids: readonly number[]) =>
  db
    .selectFrom('merge_request_blocks')
    .innerJoin('merge_requests as blocking', 'blocking.id', 'merge_request_blocks.blocking_merge_request_id')
    .select('merge_request_blocks.blocked_merge_request_id as blocked_id')
    .where('merge_request_blocks.blocked_merge_request_id', 'in', ids)
    .where('blocking.state', '=', 'opened'),
);
const userRefs = prepared((db, ids: readonly number[]) => db.selectFrom('users').select(USER_REF_COLUMNS).where('id', 'in', ids));
const labelsById = prepared((db, ids: readonly number[]) => db.selectFrom('labels').selectAll().where('id', 'in', ids));
const milestonesById = prepared((db, ids: readonly number[]) => db.selectFrom('milestones').selectAll().where('id', 'in', ids));
const pipelinesOf = prepared((db, projectIds: readonly number[], shas: readonly string[]) =>
  db.selectFrom('ci_pipelines').selectAll().where('project_id', 'in', projectIds).where('sha', 'in', shas),
);
// PostgreSQL only: the users and labels of merge requests found through their links in the same
// statement, so the whole bundle is one round trip (loadBundle). The user ids are one UNION: with
// `id in (…) or id in (subquery)` PostgreSQL scans the whole users table.
const usersOfMrs = prepared((db, direct: readonly number[], ids: readonly number[]) =>
  db
    .selectFrom('users')
    .select(USER_REF_COLUMNS)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('merge_request_assignees')
        .select('user_id')
        .where('merge_request_id', 'in', ids)
        .union(eb.selectFrom('merge_request_reviewers').select('user_id').where('merge_request_id', 'in', ids))
        .union(eb.selectFrom('users').select('id as user_id').where('id', 'in', direct)),
    ),
);
const labelsOfMrs = prepared((db, ids: readonly number[]) =>
  db.selectFrom('labels').selectAll().where('id', 'in', (eb) => eb.selectFrom('merge_request_labels').select('label_id').where('merge_request_id', 'in', ids)),
);

/** The keys loadBundle's own queries use in its batches (callers' extra queries must not). */
const BUNDLE_KEYS = new Set(['assignees', 'reviewers', 'labelLinks', 'blocks', 'users', 'labels', 'milestones', 'projects', 'namespaces', 'pipelines']);

/**
 * The users, labels, milestones, projects and pipelines of merge requests: on SQLite in two waves
 * of independent queries (the links, then what they point to); on PostgreSQL as one statement, the
 * users and labels found through the links by subqueries. `alsoFirst` are more queries of the
 * caller's that need nothing from the bundle: they go with the first wave, and their rows come back
 * under `also`.
 */
export async function loadBundle(
  db: Kysely<DB>,
  rows: MrRow[],
  known?: ProjectInfo[],
  alsoFirst: Record<string, SelectQueryBuilder<DB, any, any> | BoundStatement<unknown>> = {}, // eslint-disable-line @typescript-eslint/no-explicit-any
): Promise<MrBundle> {
  type FirstWave = {
    assignees: Array<{ id: number; merge_request_id: number; user_id: number; position: number }>;
    reviewers: Array<{ id: number; merge_request_id: number; user_id: number }>;
    labelLinks: Array<{ merge_request_id: number; label_id: number }>;
    blocks: Array<{ blocked_id: number }>;
  };
  // One loop, not `rows.map(…).filter(…)` chains: the arrays `map` makes are of another elements
  // kind when they hold nulls (or nothing) than when they hold ids only, and each new kind seen at
  // a `.filter` threw this function's optimised code away; it was compiled again (over 100 ms of a
  // background thread) again and again under a mixed load.
  const ids: number[] = [];
  const milestoneSet = new Set<number>();
  const directUsers: number[] = [];
  // Targets, and the sources of requests from forks (their pipelines are presented with them).
  const projectSet = new Set<number>();
  const shaSet = new Set<string>();
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    ids.push(r.id);
    if (r.milestone_id !== null) milestoneSet.add(r.milestone_id);
    directUsers.push(r.author_id);
    if (r.merge_user_id !== null) directUsers.push(r.merge_user_id);
    if (r.merged_by_id !== null) directUsers.push(r.merged_by_id);
    if (r.closed_by_id !== null) directUsers.push(r.closed_by_id);
    projectSet.add(r.project_id);
    if (r.source_project_id !== r.project_id) projectSet.add(r.source_project_id);
    if (r.head_sha) shaSet.add(r.head_sha);
  }
  const milestoneIds = [...milestoneSet];
  const projectIds = [...projectSet];
  const shas = [...shaSet];
  const knownMap = new Map((known ?? []).map((k) => [k.project.id, k]));
  const missingProjects = projectIds.filter((id) => !knownMap.has(id));
  // Lookups that need only the rows (stored one by one: spreading conditional literals is slow on
  // Node 20, see bench/object-spread.mjs).
  const byRows: Record<string, SelectQueryBuilder<DB, any, any> | BoundStatement<unknown>> = {}; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (milestoneIds.length) byRows.milestones = milestonesById.with(milestoneIds);
  if (missingProjects.length) Object.assign(byRows, projectQueries(db, missingProjects));
  // A request from a fork has its pipelines in the fork (or, run for it, in the target).
  if (shas.length) byRows.pipelines = pipelinesOf.with(projectIds, shas);

  let first: FirstWave & Record<string, unknown[]>;
  let second: Partial<Record<string, unknown[]>>;
  let usersInBatch: boolean;
  let labelsInBatch: boolean;
  let uniqueUsers: number[];
  let labelIds: number[];
  const wave: Record<string, SelectQueryBuilder<DB, any, any> | BoundStatement<unknown>> = {}; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (ids.length) {
    wave.assignees = assigneesOf.with(ids);
    wave.reviewers = reviewersOf.with(ids);
    // Links only: a page shows few distinct labels, read once each (by the second wave on SQLite).
    wave.labelLinks = labelLinksOf.with(ids);
    wave.blocks = openBlockersOf.with(ids);
  }
  for (const k of Object.keys(alsoFirst)) {
    if (BUNDLE_KEYS.has(k)) throw new Error(`loadBundle: the extra query key ${k} is one of the bundle's own`);
    wave[k] = alsoFirst[k];
  }
  // Pages (at most 100 requests) take one round trip; the lists that load every blocking request
  // take the two waves, whose statements hold fewer parameters (PostgreSQL allows 65,535).
  if (ids.length && ids.length <= 500 && isPostgres(db)) {
    // One round trip: users and labels through the links, in the same statement.
    wave.users = usersOfMrs.with([...new Set(directUsers)], ids);
    wave.labels = labelsOfMrs.with(ids);
    Object.assign(wave, byRows);
    const all = (await selectBatch(db, wave)) as FirstWave & Record<string, unknown[]>;
    first = all;
    second = all;
    usersInBatch = labelsInBatch = true;
    uniqueUsers = [];
    labelIds = [];
  } else {
    first = (ids.length ? await selectBatch(db, wave) : { assignees: [], reviewers: [], labelLinks: [], blocks: [] }) as FirstWave & Record<string, unknown[]>;
    for (const k of Object.keys(alsoFirst)) first[k] ??= [];
    const userIds = directUsers;
    for (const a of first.assignees) userIds.push(a.user_id);
    for (const a of first.reviewers) userIds.push(a.user_id);
    uniqueUsers = [...new Set(userIds)];
    labelIds = [...new Set(first.labelLinks.map((l) => l.label_id))];
    labelsInBatch = labelIds.length > 0 && labelIds.length <= 500;
    // Up to 500 users go with the rest; more (100 merge requests with many assignees) in chunks.
    usersInBatch = uniqueUsers.length > 0 && uniqueUsers.length <= 500;
    if (usersInBatch) byRows.users = userRefs.with(uniqueUsers);
    if (labelsInBatch) byRows.labels = labelsById.with(labelIds);
    second = await selectBatch(db, byRows);
  }
  // Shown in position order (then insertion order), as GitLab lists them.
  const assigneeRows = first.assignees.sort((a, b) => a.position - b.position || a.id - b.id);
  const reviewerRows = first.reviewers.sort(byId);
  const users = usersInBatch ? new Map((second.users as UserRefRow[]).map((u) => [u.id, u])) : await findUserRefsByIds(db, uniqueUsers);
  const milestones = (second.milestones ?? []) as MilestoneRow[];
  const projects = joinProjects((second.projects ?? []) as ProjectRow[], (second.namespaces ?? []) as NamespaceRow[]);
  for (const [id, info] of knownMap) projects.set(id, info);
  const groupIds = distinctNonNull(milestones, (m) => m.group_id);
  const groupRows = groupIds.length ? await db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', groupIds).execute() : [];
  const pipelineMap = new Map<string, PipelineRow>();
  // In id order: the latest pipeline of a sha wins.
  for (const p of ((second.pipelines ?? []) as PipelineRow[]).sort(byId)) pipelineMap.set(`${p.project_id}:${p.sha}`, p);
  const labelRows = labelsInBatch ? ((second.labels ?? []) as LabelRow[]) : await labelsByIds(db, labelIds);
  const labelById = new Map(labelRows.map((l) => [l.id, l]));
  const labels = new Map<number, LabelRow[]>();
  for (const [mrId, links] of group(first.labelLinks, (l) => l.merge_request_id)) {
    const list: LabelRow[] = [];
    for (const link of links) {
      const label = labelById.get(link.label_id);
      if (label) list.push(label);
    }
    labels.set(mrId, list.sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0)));
  }
  return {
    users,
    assignees: new Map([...group(assigneeRows, (a) => a.merge_request_id)].map(([k, v]) => [k, v.map((x) => x.user_id)])),
    reviewers: new Map([...group(reviewerRows, (a) => a.merge_request_id)].map(([k, v]) => [k, v.map((x) => x.user_id)])),
    labels,
    milestones: new Map(milestones.map((m) => [m.id, m])),
    projects,
    pipelines: pipelineMap,
    blocked: new Set(first.blocks.map((b) => b.blocked_id)),
    groupPaths: new Map(groupRows.map((g) => [g.id, g.full_path])),
    also: Object.fromEntries(Object.keys(alsoFirst).map((k) => [k, (first as Record<string, unknown[]>)[k]])),
  };
}

/** A merge request by project and iid (`mrByIid.with(projectId, iid)` in a batch). */
export const mrByIid = prepared((db, projectId: number, iid: number) => db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId).where('iid', '=', iid));
const mrById = prepared((db, id: number) => db.selectFrom('merge_requests').selectAll().where('id', '=', id));

export async function findMrByIid(db: Kysely<DB>, projectId: number, iid: number): Promise<MrRow | undefined> {
  return (await mrByIid(db, projectId, iid))[0];
}

export async function findMrById(db: Kysely<DB>, id: number): Promise<MrRow | undefined> {
  return (await mrById(db, id))[0];
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

/** The pipeline of a merge request's head commit: its source project's, or (from a fork) the target's when newer. */
export function headPipelineOf(mr: MrRow, bundle: Pick<MrBundle, 'pipelines'>, sha: string | null = mr.head_sha): PipelineRow | undefined {
  if (!sha) return undefined;
  const source = bundle.pipelines.get(`${mr.source_project_id}:${sha}`);
  if (mr.source_project_id === mr.project_id) return source;
  // Both may have one: the newer counts, as GitLab's head pipeline is the latest.
  const target = bundle.pipelines.get(`${mr.project_id}:${sha}`);
  return !source || (target && target.id > source.id) ? target : source;
}
