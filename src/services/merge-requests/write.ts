// Creating, updating and deleting merge requests. Reads that decide a write happen in the same
// transaction (BEGIN IMMEDIATE on SQLite, the project row locked by the iid counter on PostgreSQL)
// or statement (creation on PostgreSQL), and the database itself refuses a second open merge
// request for the same branches (migration 0012); git is only read before or after, never inside.
import { emitEvent, eventsWanted, type MrAssociations } from '../events.js';
import { recordLabelChanges, recordMilestoneChange, recordStateChange } from '../resource-events.js';
import { insertEvents } from '../event-rows.js';
import { type Compilable, type Kysely, sql, type Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import { prepared, type Prepared } from '../../db/prepared.js';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { conflict, notFound, unprocessable, validationError } from '../../http/errors.js';
import { OPEN_MR_INDEX } from '../../db/migrations/0012-open-merge-request-rule.js';
import { isUniqueViolation } from '../projects/unique.js';
import { GitRepository } from '../../git/index.js';
import {
  currentLabelIds,
  existingUserIds,
  milestoneById,
  milestoneByTitle,
  resolveLabels,
  setAssignees,
  setLabels,
  setReviewers,
} from './attributes.js';
import { branchSha, computeSnapshot, fetchCommit, fetchFromFork, fromFork, refreshMergeStatus, repoFor, sourceInNetwork } from './git-ops.js';
import { findMrById, type MrRow, type ProjectInfo } from './rows.js';
import { isDraftTitle } from './status.js';
import { deleteNotesOf } from './notes.js';
import { syncClosingIssues } from '../issues/closing.js';

export const MAX_DESCRIPTION = 1_048_576;
export const MAX_TITLE = 255;

export interface MrAttributes {
  title?: string;
  description?: string | null;
  assigneeIds?: number[];
  reviewerIds?: number[];
  labels?: string[];
  addLabels?: string[];
  removeLabels?: string[];
  milestoneId?: number | null;
  milestone?: string;
  removeSourceBranch?: boolean;
  allowCollaboration?: boolean;
  squash?: boolean;
  mergeAfter?: string | null;
  discussionLocked?: boolean;
  approvalsBeforeMerge?: number;
  targetBranch?: string;
  stateEvent?: 'close' | 'reopen';
}

export interface CreateInput extends MrAttributes {
  title: string;
  sourceBranch: string;
  targetBranch: string;
  targetProjectId?: number;
}

function validateText(attrs: MrAttributes): void {
  const errors: Record<string, string[]> = {};
  if (attrs.title !== undefined && attrs.title.length > MAX_TITLE) errors.title = [`is too long (maximum is ${MAX_TITLE} characters)`];
  if (attrs.description != null && attrs.description.length > MAX_DESCRIPTION) errors.description = [`is too long (maximum is ${MAX_DESCRIPTION} characters)`];
  if (Object.keys(errors).length) throw validationError(errors);
}

function validateBranchNames(names: Record<string, string>): void {
  const errors: Record<string, string[]> = {};
  for (const [key, name] of Object.entries(names)) if (!GitRepository.isValidBranchName(name)) errors[key] = ['is invalid'];
  if (Object.keys(errors).length) throw validationError(errors);
}

/** The 409 GitLab gives for a second open request with the same source and target branches. */
async function assertNoDuplicate(db: Kysely<DB>, projectId: number, sourceProjectId: number, source: string, target: string, exceptId?: number): Promise<void> {
  let q = db
    .selectFrom('merge_requests')
    .select('iid')
    .where('project_id', '=', projectId)
    .where('source_project_id', '=', sourceProjectId)
    .where('source_branch', '=', source)
    .where('target_branch', '=', target)
    .where('state', '=', 'opened');
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  const dup = await q.executeTakeFirst();
  if (dup) throw conflict([`Another open merge request already exists for this source branch: !${dup.iid}`]);
}

/** Whether `e` is the database refusing a second open merge request for the same branches (migration 0012). */
function isOpenDuplicate(e: unknown): boolean {
  if (!isUniqueViolation(e)) return false;
  // PostgreSQL names the index; SQLite lists its columns.
  const err = e as { constraint?: string; message?: string };
  return err.constraint === OPEN_MR_INDEX || /merge_requests\.source_branch/.test(err.message ?? '');
}

/**
 * Runs a write that may open a merge request; the database's refusal of a duplicate (a race the
 * checks before it could not see) becomes GitLab's 409, naming the open one when it still is.
 */
async function refusingDuplicates<T>(app: AppContext, mr: Branches, write: () => Promise<T>, exceptId?: number): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (!isOpenDuplicate(e)) throw e;
    return refuseDuplicate(app.db, mr, exceptId);
  }
}

interface Branches {
  project_id: number;
  source_project_id: number;
  source_branch: string;
  target_branch: string;
}

/** The 409 for a write refused as a duplicate: naming the open one, or (closed since) without a name; the client may simply try again. */
async function refuseDuplicate(db: Kysely<DB>, mr: Branches, exceptId?: number): Promise<never> {
  await assertNoDuplicate(db, mr.project_id, mr.source_project_id, mr.source_branch, mr.target_branch, exceptId);
  throw conflict(['Another open merge request already exists for this source branch']);
}

type Values = Record<string, string | number | null>;

type ColumnType = 'integer' | 'text';

interface InsertColumns {
  /** The columns the insert names (nulls left out: every nullable column defaults to NULL). */
  columns: string[];
  /** Each column's cast (PostgreSQL would type a SELECT list's parameters as text). */
  types: ColumnType[];
  /** Their values, the first arguments of the prepared insert. */
  args: Array<string | number>;
  /** The columns and types: what makes one prepared shape differ from another. */
  key: string;
}

function insertColumns(values: Values): InsertColumns {
  const out: InsertColumns = { columns: [], types: [], args: [], key: '' };
  for (const c of Object.keys(values)) {
    const v = values[c];
    if (v === null || v === undefined) continue;
    const type: ColumnType = typeof v === 'number' ? 'integer' : 'text';
    out.columns.push(c);
    out.types.push(type);
    out.args.push(v);
    out.key += `${c}:${type},`;
  }
  return out;
}

type InsertStatement = Prepared<Array<string | number>, MrRow>;

/** Optional columns make a few dozen shapes at most; past this bound, shapes are built anew each time. */
const MAX_INSERT_SHAPES = 256;

/** The prepared insert of `key` from `shapes`, built by `build` the first time. */
function shapeFor(shapes: Map<string, InsertStatement>, key: string, build: () => InsertStatement): InsertStatement {
  let insert = shapes.get(key);
  if (!insert) {
    insert = build();
    if (shapes.size < MAX_INSERT_SHAPES) shapes.set(key, insert);
  }
  return insert;
}

/** The open merge requests of the same project and branches as `values`, as a subquery. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function openDuplicates(selectFrom: any, values: Values) {
  return selectFrom('merge_requests')
    .select('id')
    .where('project_id', '=', values.project_id as number)
    .where('source_project_id', '=', values.source_project_id as number)
    .where('source_branch', '=', values.source_branch as string)
    .where('target_branch', '=', values.target_branch as string)
    .where('state', '=', 'opened');
}

/**
 * Inserts a new open merge request unless one is open for the same project and branches: the
 * duplicate check and the insert in one statement (`INSERT … SELECT … WHERE NOT EXISTS`), one round
 * trip fewer while the project is locked. Run after the lock is taken, the statement sees every
 * creation that held it before. Undefined when a duplicate is open.
 */
async function insertUnlessDuplicate(trx: Transaction<DB>, values: Values): Promise<MrRow | undefined> {
  const { columns, types, args, key } = insertColumns(values);
  args.push(values.project_id as number, values.source_project_id as number, values.source_branch as string, values.target_branch as string);
  return (await shapeFor(insertShapes, key, () => insertShape(columns, types))(trx, ...args))[0];
}

/**
 * The insert of insertUnlessDuplicate, built and compiled once per set of columns and their types
 * (db/prepared.ts): building and compiling it with the query builder cost about as much of the
 * server's thread as running it (issue 7). Its arguments: the columns' values in order, then the
 * project, source project and branches of the duplicate check.
 */
function insertShape(columns: string[], types: ColumnType[]): InsertStatement {
  return prepared((db, ...args: Array<string | number>) => {
    const n = columns.length;
    const dup = { project_id: args[n], source_project_id: args[n + 1], source_branch: args[n + 2], target_branch: args[n + 3] };
    const row = db
      .selectNoFrom((eb) => columns.map((c, i) => eb.cast(eb.val(args[i]), types[i]).as(c)))
      .where(({ not, exists, selectFrom }) => not(exists(openDuplicates(selectFrom, dup))));
    return db.insertInto('merge_requests').columns(columns as never).expression(row as never).returningAll() as unknown as Compilable<MrRow>;
  });
}

const insertShapes = new Map<string, InsertStatement>();

/** Counts the project's merge requests on: the new one's iid (the row stays locked until the commit on PostgreSQL). */
const nextMrIid = prepared((db, projectId: number) =>
  db
    .updateTable('projects')
    .set((eb) => ({ mr_iid_counter: eb('mr_iid_counter', '+', 1) }))
    .where('id', '=', projectId)
    .returning('mr_iid_counter'),
);

/**
 * PostgreSQL: the whole creation in one statement outside any transaction: the project's counter
 * (which locks its row until the commit, serialising creations of one project), the merge request
 * with the counter as its iid, and its label, assignee and reviewer links (data-modifying WITHs).
 * The lock is held for one statement and its commit, with no round trip to this process in
 * between (issue 7). A duplicate open merge request is refused twice over: by the counter's
 * `NOT EXISTS`, which sees every one committed before the statement began (among them those
 * migration 0012 left outside its index), and by that unique index, which also sees one committed
 * while the statement waited for the lock (its snapshot is older). Undefined when the project is
 * gone or the `NOT EXISTS` found a duplicate; the caller tells which. (Its times are taken before
 * the lock: under contention `created_at` and iid order can differ by the wait, milliseconds.)
 */
async function insertInOneStatement(app: AppContext, values: Values, links: { labels: number[]; assignees: number[]; reviewers: number[] }): Promise<MrRow | undefined> {
  const { columns, types, args, key: columnsKey } = insertColumns(values);
  const labels = [...new Set(links.labels)];
  const milestoneId = typeof values.milestone_id === 'number' ? values.milestone_id : null;
  const shape: OneStatementShape = { labels: labels.length > 0, milestone: milestoneId !== null, assignees: links.assignees.length > 0, reviewers: links.reviewers.length > 0 };
  const key = `${columnsKey}${+shape.labels}${+shape.milestone}${+shape.assignees}${+shape.reviewers}`;
  // PostgreSQL array literals as text parameters: one shape for lists of every length.
  const list = (ids: number[]) => `{${ids.join(',')}}`;
  args.push(
    values.project_id as number, values.source_project_id as number, values.source_branch as string, values.target_branch as string,
    values.author_id as number, values.created_at as string,
    list(labels), milestoneId ?? 0, list(links.assignees), Math.max(links.assignees.length - 1, 0), list(links.reviewers),
  );
  return (await shapeFor(oneStatementShapes, key, () => oneStatementShape(columns, types, shape))(app.db, ...args))[0];
}

interface OneStatementShape {
  labels: boolean;
  milestone: boolean;
  assignees: boolean;
  reviewers: boolean;
}

const oneStatementShapes = new Map<string, InsertStatement>();

/**
 * insertInOneStatement's statement, built and compiled once per set of columns, their types and
 * the links it makes (db/prepared.ts). Its arguments: the columns' values in order; the project,
 * source project and branches of the duplicate check; the author and the time; the labels (an
 * array literal), the milestone (0: none), the assignees (an array literal) and the last of their
 * positions, the reviewers (an array literal).
 */
function oneStatementShape(columns: string[], types: ColumnType[], shape: OneStatementShape): InsertStatement {
  /* eslint-disable @typescript-eslint/no-explicit-any */
  return prepared((kysely, ...args: Array<string | number>) => {
    const n = columns.length;
    const [projectId, sourceProjectId, sourceBranch, targetBranch, authorId, createdAt, labels, milestoneId, assignees, lastPosition, reviewers] = args.slice(n);
    const dup = { project_id: projectId, source_project_id: sourceProjectId, source_branch: sourceBranch, target_branch: targetBranch };
    const ints = (literal: string | number) => sql<number>`unnest(${literal}::integer[])`;
    const lit = (v: string) => sql<string>`${v}::text`;
    const by = sql<number>`${authorId}::integer`;
    const at = sql<string>`${createdAt}::text`;
    let q: any = (kysely as unknown as Kysely<any>)
      .with('counter', (db) =>
        db
          .updateTable('projects')
          .set((eb) => ({ mr_iid_counter: eb('mr_iid_counter', '+', 1) }))
          .where('id', '=', projectId)
          .where(({ not, exists, selectFrom }) => not(exists(openDuplicates(selectFrom, dup))))
          .returning('mr_iid_counter'),
      )
      .with('created', (db) =>
        db
          .insertInto('merge_requests')
          .columns(['iid', ...columns])
          .expression(db.selectFrom('counter').select((eb) => [eb.ref('counter.mr_iid_counter').as('iid'), ...columns.map((c, i) => eb.cast(eb.val(args[i]), types[i]).as(c))]))
          .returningAll(),
      );
    // The resource events of the labels and the milestone it starts with, in the same statement.
    const eventColumns = ['kind', 'resource_type', 'resource_id', 'user_id', 'action', 'label_id', 'milestone_id', 'state', 'created_at'];
    if (shape.labels) {
      q = q.with('labelled', (db: Kysely<any>) => db.insertInto('merge_request_labels').columns(['merge_request_id', 'label_id']).expression(db.selectFrom('created').select(['created.id', ints(labels).as('label_id')])));
      q = q.with('label_events', (db: Kysely<any>) => db.insertInto('resource_events').columns(eventColumns).expression(db.selectFrom('created').select([lit('label').as('kind'), lit('MergeRequest').as('resource_type'), 'created.id', by.as('user_id'), lit('add').as('action'), ints(labels).as('label_id'), sql`null::integer`.as('milestone_id'), sql`null::text`.as('state'), at.as('created_at')])));
    }
    // Its contribution event (services/activity.ts records the others after the fact).
    q = q.with('created_event', (db: Kysely<any>) => db.insertInto('events').columns(['project_id', 'author_id', 'action', 'target_type', 'target_id', 'created_at']).expression(db.selectFrom('created').select(['created.project_id', by.as('author_id'), lit('created').as('action'), lit('MergeRequest').as('target_type'), 'created.id', at.as('created_at')])));
    if (shape.milestone) {
      const milestone = sql<number>`${milestoneId}::integer`;
      q = q.with('milestone_event', (db: Kysely<any>) => db.insertInto('resource_events').columns(eventColumns).expression(db.selectFrom('created').select([lit('milestone').as('kind'), lit('MergeRequest').as('resource_type'), 'created.id', by.as('user_id'), lit('add').as('action'), sql`null::integer`.as('label_id'), milestone.as('milestone_id'), lit('opened').as('state'), at.as('created_at')])));
    }
    if (shape.assignees) {
      // Two set-returning functions of one length in a SELECT list run side by side: each user with its position.
      const positions = sql<number>`generate_series(0, ${lastPosition}::integer)`;
      q = q.with('assigned', (db: Kysely<any>) => db.insertInto('merge_request_assignees').columns(['merge_request_id', 'user_id', 'position']).expression(db.selectFrom('created').select(['created.id', ints(assignees).as('user_id'), positions.as('position')])));
    }
    if (shape.reviewers) {
      q = q.with('reviewing', (db: Kysely<any>) => db.insertInto('merge_request_reviewers').columns(['merge_request_id', 'user_id', 'state', 'created_at']).expression(db.selectFrom('created').select(['created.id', ints(reviewers).as('user_id'), sql<string>`'unreviewed'`.as('state'), at.as('created_at')])));
    }
    return q.selectFrom('created').selectAll() as Compilable<MrRow>;
  });
  /* eslint-enable @typescript-eslint/no-explicit-any */
}

async function resolveMilestone(db: Kysely<DB>, info: ProjectInfo, attrs: MrAttributes): Promise<number | null | undefined> {
  if (attrs.milestone !== undefined) return attrs.milestone === '' ? null : (await milestoneByTitle(db, info, attrs.milestone)).id;
  if (attrs.milestoneId !== undefined) {
    if (attrs.milestoneId === null || attrs.milestoneId === 0) return null;
    return (await milestoneById(db, info, attrs.milestoneId))?.id ?? null;
  }
  return undefined;
}

/**
 * Opens a merge request in `info`'s project. `source` is the project its source branch lives in
 * when that is another project of the fork network (the caller checked both projects' rules).
 */
export async function createMergeRequest(app: AppContext, info: ProjectInfo, author: UserRow, input: CreateInput, source: ProjectInfo = info): Promise<MrRow> {
  const mr = await insertMergeRequest(app, info, author, input, source);
  await syncClosingIssues(app, info, mr, { created: true });
  const people = { assigneeIds: input.assigneeIds ?? [], reviewerIds: input.reviewerIds ?? [] };
  await emitEvent(app, { kind: 'merge_request', projectId: mr.project_id, info, mr, people, userId: author.id, action: 'open' });
  return mr;
}

async function insertMergeRequest(app: AppContext, info: ProjectInfo, author: UserRow, input: CreateInput, sourceInfo: ProjectInfo): Promise<MrRow> {
  const project = info.project;
  const fork = sourceInfo.project.id !== project.id;
  validateText(input);
  validateBranchNames({ source_branch: input.sourceBranch, target_branch: input.targetBranch });
  if (!fork && input.sourceBranch === input.targetBranch) throw unprocessable(["You can't use same project/branch for source and target"]);
  const repo = repoFor(app, project.id);
  const [source, target] = await Promise.all([branchSha(repoFor(app, sourceInfo.project.id), input.sourceBranch), branchSha(repo, input.targetBranch)]);
  if (!source) throw unprocessable([`Source branch "${input.sourceBranch}" does not exist`]);
  if (!target) throw unprocessable([`Target branch "${input.targetBranch}" does not exist`]);
  // From a fork: the source commits are copied into the target repository, where the diff is made.
  if (fork) await fetchCommit(app, sourceInfo.project.id, repo, source);
  const [assignees, reviewers] = await Promise.all([existingUserIds(app.db, input.assigneeIds ?? []), existingUserIds(app.db, input.reviewerIds ?? [])]);
  const squash = input.squash ?? (project.squash_option === 'always' || project.squash_option === 'default_on');
  // GITLAB-COMPAT: GitLab prepares the diff asynchronously (changes_count and diff_refs are null in
  // the create response); Labwright prepares it before the insert, so they are filled at once and
  // the row is written in one transaction.
  const snap = await computeSnapshot(repo, source, target, null);
  const now = nowIso();
  const values = (milestoneId: number | null | undefined): Values => ({
    project_id: project.id,
    source_project_id: sourceInfo.project.id,
    author_id: author.id,
    title: input.title,
    description: input.description ?? null,
    state: 'opened',
    draft: isDraftTitle(input.title) ? 1 : 0,
    source_branch: input.sourceBranch,
    target_branch: input.targetBranch,
    ...snap,
    prepared_at: now,
    squash: squash ? 1 : 0,
    force_remove_source_branch: input.removeSourceBranch === undefined ? null : input.removeSourceBranch ? 1 : 0,
    allow_collaboration: input.allowCollaboration ? 1 : 0,
    milestone_id: milestoneId ?? null,
    merge_after: input.mergeAfter ?? null,
    approvals_before_merge: input.approvalsBeforeMerge ?? null,
    created_at: now,
    updated_at: now,
  });
  const branches: Branches = { project_id: project.id, source_project_id: sourceInfo.project.id, source_branch: input.sourceBranch, target_branch: input.targetBranch };
  // The fork's commit, kept alive in the target repository under the merge request's own ref.
  const settle = async (row: MrRow) => {
    if (fork) await fetchFromFork(app, row, source);
    return refreshMergeStatus(app, row);
  };
  const titles = [...(input.labels ?? []), ...(input.addLabels ?? [])];

  if (app.database.dialect === 'postgres') {
    // Labels and the milestone are looked up before: creations of one project queue on its row
    // lock, and every round trip under it would be waited for by all of them. (One deleted in
    // between leaves a link to nothing, which no view shows; no foreign key refuses it.) Labels
    // that do not exist yet are created with the request, in a transaction (below).
    const labels = titles.length ? await resolveLabels(app.db, info, titles, false) : [];
    if (new Set(labels.map((l) => l.title)).size === new Set(titles).size) {
      const milestoneId = await resolveMilestone(app.db, info, input);
      const links = { labels: labels.map((l) => l.id), assignees, reviewers };
      const row = await refusingDuplicates(app, branches, () => insertInOneStatement(app, values(milestoneId), links));
      if (!row) {
        if (!(await app.db.selectFrom('projects').select('id').where('id', '=', project.id).executeTakeFirst())) throw notFound('Project');
        return refuseDuplicate(app.db, branches);
      }
      return settle(row);
    }
  }

  const created = await refusingDuplicates(app, branches, () =>
    app.database.transaction(async (trx) => {
      // Incrementing the counter first locks the project row (PostgreSQL; SQLite's transaction
      // holds the write lock from its start), so the duplicate check in the insert sees every
      // creation before this one; a rollback gives the iid back.
      const [counter] = await nextMrIid(trx, project.id);
      if (!counter) throw notFound('Project');
      const row = await insertUnlessDuplicate(trx, { iid: counter.mr_iid_counter, ...values(await resolveMilestone(trx, info, input)) });
      if (!row) return refuseDuplicate(trx, branches);
      await setAssignees(trx, row.id, assignees, true);
      await setReviewers(trx, row.id, reviewers, true);
      const resource = { type: 'MergeRequest' as const, id: row.id };
      // Its contribution event, in the same transaction (no commit of its own on the hot path).
      await insertEvents(trx, [{ projectId: project.id, authorId: author.id, action: 'created', targetType: 'MergeRequest', targetId: row.id }]);
      if (titles.length) {
        const ids = (await resolveLabels(trx, info, titles, true)).map((l) => l.id);
        await setLabels(trx, row.id, ids, true);
        await recordLabelChanges(trx, resource, author.id, [], ids);
      }
      if (row.milestone_id !== null) await recordMilestoneChange(trx, resource, author.id, null, row.milestone_id, 'opened');
      return row;
    }),
  );
  // A branch that moved since the snapshot was taken is seen here, as on every read.
  return settle(created);
}

export const UPDATE_PARAMS = [
  'assignee_id', 'assignee_ids', 'reviewer_ids', 'description', 'labels', 'add_labels', 'remove_labels', 'milestone_id', 'milestone',
  'remove_source_branch', 'allow_collaboration', 'allow_maintainer_to_push', 'squash', 'target_branch', 'title', 'state_event',
  'discussion_locked', 'merge_after',
];

export async function updateMergeRequest(app: AppContext, info: ProjectInfo, mr: MrRow, user: UserRow, attrs: MrAttributes): Promise<MrRow> {
  validateText(attrs);
  // GitLab's reopenable?: not once the source project is gone or has left the fork network.
  const reopenable = attrs.stateEvent !== 'reopen' || (await sourceInNetwork(app, mr));
  const retarget = attrs.targetBranch !== undefined && mr.state !== 'merged' && attrs.targetBranch !== mr.target_branch;
  if (retarget) {
    validateBranchNames({ target_branch: attrs.targetBranch! });
    if (!fromFork(mr) && attrs.targetBranch === mr.source_branch) throw unprocessable(["You can't use same project/branch for source and target"]);
    if (!(await branchSha(repoFor(app, mr.project_id), attrs.targetBranch!))) throw unprocessable([`Target branch "${attrs.targetBranch}" does not exist`]);
  }
  const [assignees, reviewers] = await Promise.all([
    attrs.assigneeIds ? existingUserIds(app.db, attrs.assigneeIds) : Promise.resolve(undefined),
    attrs.reviewerIds ? existingUserIds(app.db, attrs.reviewerIds) : Promise.resolve(undefined),
  ]);
  // What it was: for the events' `changes` when someone listens, for to-dos when its people change.
  const wanted = (await eventsWanted(app, mr.project_id, 'merge_request')) || assignees !== undefined || reviewers !== undefined;
  const previous = wanted ? { row: mr, associations: await loadAssociations(app.db, mr.id) } : { row: mr };
  // A reopen or retarget racing a creation (they lock different rows) is refused by the database.
  const branches: Branches = { project_id: mr.project_id, source_project_id: mr.source_project_id, source_branch: mr.source_branch, target_branch: retarget ? attrs.targetBranch! : mr.target_branch };
  await refusingDuplicates(app, branches, () => app.database.transaction(async (trx) => {
    const current = await app.database.forUpdate(trx.selectFrom('merge_requests').selectAll().where('id', '=', mr.id)).executeTakeFirstOrThrow();
    const now = nowIso();
    const set: Partial<MrRow> = { updated_at: now };
    if (attrs.title !== undefined) {
      set.title = attrs.title;
      set.draft = isDraftTitle(attrs.title) ? 1 : 0;
    }
    if (attrs.description !== undefined) set.description = attrs.description;
    if (attrs.removeSourceBranch !== undefined) set.force_remove_source_branch = attrs.removeSourceBranch ? 1 : 0;
    if (attrs.allowCollaboration !== undefined) set.allow_collaboration = attrs.allowCollaboration ? 1 : 0;
    if (attrs.squash !== undefined) set.squash = attrs.squash ? 1 : 0;
    if (attrs.mergeAfter !== undefined) set.merge_after = attrs.mergeAfter;
    if (attrs.discussionLocked !== undefined) set.discussion_locked = attrs.discussionLocked ? 1 : 0;
    const milestoneId = await resolveMilestone(trx, info, attrs);
    if (milestoneId !== undefined) set.milestone_id = milestoneId;
    if (retarget) {
      await assertNoDuplicate(trx, current.project_id, current.source_project_id, current.source_branch, attrs.targetBranch!, current.id);
      set.target_branch = attrs.targetBranch;
      set.merge_status = 'unchecked';
    }
    if (attrs.stateEvent === 'close' && current.state === 'opened') {
      Object.assign(set, { state: 'closed', closed_at: now, closed_by_id: user.id, merge_when_pipeline_succeeds: 0 });
    } else if (attrs.stateEvent === 'reopen' && current.state === 'closed' && reopenable) {
      await assertNoDuplicate(trx, current.project_id, current.source_project_id, current.source_branch, set.target_branch ?? current.target_branch, current.id);
      Object.assign(set, { state: 'opened', closed_at: null, closed_by_id: null, merge_status: 'unchecked' });
    }
    await trx.updateTable('merge_requests').set(set).where('id', '=', mr.id).execute();
    const resource = { type: 'MergeRequest' as const, id: mr.id };
    if (set.milestone_id !== undefined) await recordMilestoneChange(trx, resource, user.id, current.milestone_id, set.milestone_id ?? null, set.state ?? current.state);
    if (set.state === 'closed') await recordStateChange(trx, resource, user.id, 'closed');
    else if (set.state === 'opened') await recordStateChange(trx, resource, user.id, 'reopened');
    if (assignees) await setAssignees(trx, mr.id, assignees);
    if (reviewers) await setReviewers(trx, mr.id, reviewers);
    if (attrs.labels !== undefined || attrs.addLabels !== undefined || attrs.removeLabels !== undefined) {
      const before = await currentLabelIds(trx, mr.id);
      let ids = attrs.labels !== undefined ? (await resolveLabels(trx, info, attrs.labels, true)).map((l) => l.id) : before;
      if (attrs.addLabels?.length) ids = [...ids, ...(await resolveLabels(trx, info, attrs.addLabels, true)).map((l) => l.id)];
      if (attrs.removeLabels?.length) {
        const remove = new Set((await resolveLabels(trx, info, attrs.removeLabels, false)).map((l) => l.id));
        ids = ids.filter((id) => !remove.has(id));
      }
      await setLabels(trx, mr.id, ids);
      await recordLabelChanges(trx, resource, user.id, before, ids);
    }
  }), mr.id);
  const fresh = await refreshMergeStatus(app, (await findMrById(app.db, mr.id))!);
  if (attrs.title !== undefined || attrs.description !== undefined || retarget) await syncClosingIssues(app, info, fresh);
  const action = mr.state === 'opened' && fresh.state === 'closed' ? 'close' : mr.state === 'closed' && fresh.state === 'opened' ? 'reopen' : 'update';
  // The people an update sets (the others kept as they were), for to-dos.
  const people = previous.associations && (assignees || reviewers) ? { assigneeIds: assignees ?? previous.associations.assigneeIds, reviewerIds: reviewers ?? previous.associations.reviewerIds } : undefined;
  await emitEvent(app, { kind: 'merge_request', projectId: mr.project_id, info, mr: fresh, previous, ...(people ? { people } : {}), userId: user.id, action });
  return fresh;
}

/** The people and labels of a merge request (its state before an update). */
async function loadAssociations(db: Kysely<DB>, mrId: number): Promise<MrAssociations> {
  const [assignees, reviewers, labels] = await Promise.all([
    db.selectFrom('merge_request_assignees').select('user_id').where('merge_request_id', '=', mrId).orderBy('id').execute(),
    db.selectFrom('merge_request_reviewers').select('user_id').where('merge_request_id', '=', mrId).orderBy('id').execute(),
    db.selectFrom('merge_request_labels').select('label_id').where('merge_request_id', '=', mrId).orderBy('label_id').execute(),
  ]);
  return { assigneeIds: assignees.map((r) => r.user_id), reviewerIds: reviewers.map((r) => r.user_id), labelIds: labels.map((r) => r.label_id) };
}

export async function deleteMergeRequest(app: AppContext, mr: MrRow): Promise<void> {
  await app.database.transaction(async (trx) => {
    // The merge request's row lock first, as every note write takes it before its notes: the
    // other order deadlocks with them on PostgreSQL, or misses a note one commits meanwhile.
    await trx.updateTable('merge_requests').set({ updated_at: nowIso() }).where('id', '=', mr.id).execute();
    for (const table of ['merge_request_assignees', 'merge_request_reviewers', 'merge_request_labels', 'merge_request_approvals'] as const) {
      await trx.deleteFrom(table).where('merge_request_id', '=', mr.id).execute();
    }
    await trx.deleteFrom('merge_request_blocks').where((eb) => eb.or([eb('blocking_merge_request_id', '=', mr.id), eb('blocked_merge_request_id', '=', mr.id)])).execute();
    await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'MergeRequest').where('awardable_id', '=', mr.id).execute();
    await deleteNotesOf(trx, mr.id);
    await trx.deleteFrom('events').where('target_type', '=', 'MergeRequest').where('target_id', '=', mr.id).execute();
    await trx.deleteFrom('todos').where('target_type', '=', 'MergeRequest').where('target_id', '=', mr.id).execute();
    await trx.deleteFrom('resource_events').where('resource_type', '=', 'MergeRequest').where('resource_id', '=', mr.id).execute();
    await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'MergeRequest').where('subscribable_id', '=', mr.id).execute();
    await trx.deleteFrom('deployment_merge_requests').where('merge_request_id', '=', mr.id).execute();
    await trx.deleteFrom('merge_requests_closing_issues').where('merge_request_id', '=', mr.id).execute();
    await trx.updateTable('ci_pipelines').set({ merge_request_id: null }).where('merge_request_id', '=', mr.id).execute();
    await trx.deleteFrom('merge_requests').where('id', '=', mr.id).execute();
  });
}

