// Creating, updating and deleting issues (GitLab's Issues::CreateService, UpdateService,
// CloseService, ReopenService and Issuable::DestroyService as the REST API drives them). Each
// write is one transaction; the project's `open_issues_count` is kept by the same transaction, and
// its iid counter (a row update) serialises creations of one project.
import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { DB } from '../../db/types.js';
import type { UserRow } from '../../db/repositories/users.js';
import { apiError, notFound, unprocessable, validationError } from '../../http/errors.js';
import { isUniqueViolation } from '../projects/unique.js';
import { existingUserIds, milestoneById, resolveLabels } from '../merge-requests/attributes.js';
import type { ProjectInfo } from '../merge-requests/rows.js';
import { findIssueById, type IssueRow } from './rows.js';
import { emitEvent, eventsWanted } from '../events.js';
import { NOTE_EVENT_TYPES } from '../event-rows.js';
import { recordLabelChanges, recordMilestoneChange, recordStateChange } from '../resource-events.js';

export const MAX_TITLE = 255;
export const MAX_DESCRIPTION = 1_048_576;
/** The largest iid (an integer column). */
export const MAX_IID = 2_147_483_647;

export interface IssueAttributes {
  title?: string;
  description?: string | null;
  /** Free tier: one assignee (GitLab keeps the first of `assignee_ids`). */
  assigneeIds?: number[];
  labels?: string[];
  addLabels?: string[];
  removeLabels?: string[];
  milestoneId?: number | null;
  dueDate?: string | null;
  confidential?: boolean;
  discussionLocked?: boolean;
  issueType?: string;
  stateEvent?: 'close' | 'reopen';
  createdAt?: string;
  updatedAt?: string;
}

export interface CreateIssueInput extends IssueAttributes {
  title: string;
  iid?: number;
}

function validateText(attrs: IssueAttributes): void {
  const errors: Record<string, string[]> = {};
  if (attrs.title !== undefined && attrs.title.length > MAX_TITLE) errors.title = [`is too long (maximum is ${MAX_TITLE} characters)`];
  if (attrs.description != null && attrs.description.length > MAX_DESCRIPTION) errors.description = [`is too long (maximum is ${MAX_DESCRIPTION} characters)`];
  if (Object.keys(errors).length) throw validationError(errors);
}

type Db = Kysely<DB> | Transaction<DB>;

async function milestoneFor(db: Db, info: ProjectInfo, id: number | null | undefined): Promise<number | null | undefined> {
  if (id === undefined) return undefined;
  if (id === null || id === 0) return null;
  // A milestone of another project or group is dropped, as GitLab's milestone check does.
  return (await milestoneById(db, info, id))?.id ?? null;
}

async function setIssueLabels(trx: Transaction<DB>, issueId: number, labelIds: number[], created: boolean): Promise<void> {
  if (!created) await trx.deleteFrom('issue_labels').where('issue_id', '=', issueId).execute();
  const unique = [...new Set(labelIds)];
  if (unique.length) await trx.insertInto('issue_labels').values(unique.map((label_id) => ({ issue_id: issueId, label_id }))).execute();
}

async function setIssueAssignees(trx: Transaction<DB>, issueId: number, userIds: number[], created: boolean): Promise<void> {
  if (!created) await trx.deleteFrom('issue_assignees').where('issue_id', '=', issueId).execute();
  if (userIds.length) await trx.insertInto('issue_assignees').values(userIds.map((user_id, position) => ({ issue_id: issueId, user_id, position }))).execute();
}

/**
 * Keeps the project's open issue counts: all of them, and the confidential ones among them (callers
 * who may not read confidential issues see the difference, as GitLab's OpenIssuesCountService).
 */
export async function adjustOpenCount(trx: Transaction<DB>, projectId: number, delta: number, confidential: boolean, confidentialDelta = confidential ? delta : 0): Promise<void> {
  if (delta === 0 && confidentialDelta === 0) return;
  await trx
    .updateTable('projects')
    .set((eb) => ({
      open_issues_count: eb.case().when(eb('open_issues_count', '+', delta), '<', 0).then(0).else(eb('open_issues_count', '+', delta)).end(),
      open_confidential_issues_count: eb
        .case()
        .when(eb('open_confidential_issues_count', '+', confidentialDelta), '<', 0)
        .then(0)
        .else(eb('open_confidential_issues_count', '+', confidentialDelta))
        .end(),
    }))
    .where('id', '=', projectId)
    .execute();
}

export async function createIssue(app: AppContext, info: ProjectInfo, author: UserRow, input: CreateIssueInput): Promise<IssueRow> {
  validateText(input);
  const assignees = (await existingUserIds(app.db, input.assigneeIds ?? [])).slice(0, 1);
  const titles = [...(input.labels ?? []), ...(input.addLabels ?? [])];
  const now = nowIso();
  const created = input.createdAt ?? now;
  try {
    const id = await app.database.transaction(async (trx) => {
      // The counter first: it locks the project row, so iids are given in order.
      const counter = await trx
        .updateTable('projects')
        .set((eb) => ({ issue_iid_counter: input.iid !== undefined ? eb.case().when('issue_iid_counter', '<', input.iid).then(input.iid).else(eb.ref('issue_iid_counter')).end() : eb('issue_iid_counter', '+', 1) }))
        .where('id', '=', info.project.id)
        .$if(input.iid === undefined, (q) => q.where('issue_iid_counter', '<', MAX_IID))
        .returning('issue_iid_counter')
        .executeTakeFirst();
      if (!counter) {
        if (!(await trx.selectFrom('projects').select('id').where('id', '=', info.project.id).executeTakeFirst())) throw notFound('Project');
        throw unprocessable(['Iid has reached its largest value']);
      }
      const row = await trx
        .insertInto('issues')
        .values({
          iid: input.iid ?? counter.issue_iid_counter,
          project_id: info.project.id,
          author_id: author.id,
          title: input.title,
          description: input.description ?? null,
          state: 'opened',
          issue_type: input.issueType ?? 'issue',
          confidential: input.confidential ? 1 : 0,
          discussion_locked: input.discussionLocked === undefined ? null : input.discussionLocked ? 1 : 0,
          due_date: input.dueDate ?? null,
          milestone_id: (await milestoneFor(trx, info, input.milestoneId)) ?? null,
          closed_at: null,
          closed_by_id: null,
          updated_by_id: null,
          created_at: created,
          updated_at: created,
        })
        .returning(['id', 'milestone_id'])
        .executeTakeFirstOrThrow();
      await setIssueAssignees(trx, row.id, assignees, true);
      const resource = { type: 'Issue' as const, id: row.id };
      if (titles.length) {
        const ids = (await resolveLabels(trx, info, titles, true)).map((l) => l.id);
        await setIssueLabels(trx, row.id, ids, true);
        await recordLabelChanges(trx, resource, author.id, [], ids);
      }
      if (row.milestone_id !== null) await recordMilestoneChange(trx, resource, author.id, null, row.milestone_id, 'opened');
      await adjustOpenCount(trx, info.project.id, 1, input.confidential === true);
      return row.id;
    });
    const issue = (await findIssueById(app.db, id))!;
    await emitEvent(app, { kind: 'issue', projectId: info.project.id, info, issue, assigneeIds: assignees, userId: author.id, action: 'open' });
    return issue;
  } catch (e) {
    // An iid given by an Owner that another issue has (GitLab's rescue of RecordNotUnique).
    if (isUniqueViolation(e)) throw apiError(409, 'Duplicated issue');
    throw e;
  }
}

export async function updateIssue(app: AppContext, info: ProjectInfo, issue: IssueRow, user: UserRow, attrs: IssueAttributes): Promise<IssueRow> {
  validateText(attrs);
  const assignees = attrs.assigneeIds ? (await existingUserIds(app.db, attrs.assigneeIds)).slice(0, 1) : undefined;
  // What it was, for the events' `changes`, when someone listens.
  // Its people and labels before: for the events' `changes` when someone listens, for to-dos when the assignees change.
  const wanted = (await eventsWanted(app, issue.project_id, 'issue')) || assignees !== undefined;
  const previousAssociations = wanted ? await associations(app.db, issue.id) : undefined;
  await app.database.transaction(async (trx) => {
    const current = await app.database.forUpdate(trx.selectFrom('issues').selectAll().where('id', '=', issue.id)).executeTakeFirst();
    if (!current) throw notFound();
    const now = attrs.updatedAt ?? nowIso();
    const set: Partial<IssueRow> = { updated_at: now, updated_by_id: user.id };
    if (attrs.title !== undefined) set.title = attrs.title;
    if (attrs.description !== undefined) set.description = attrs.description;
    if (attrs.confidential !== undefined) set.confidential = attrs.confidential ? 1 : 0;
    if (attrs.discussionLocked !== undefined) set.discussion_locked = attrs.discussionLocked ? 1 : 0;
    if (attrs.dueDate !== undefined) set.due_date = attrs.dueDate;
    if (attrs.issueType !== undefined) set.issue_type = attrs.issueType;
    if (attrs.createdAt !== undefined) set.created_at = attrs.createdAt;
    const milestoneId = await milestoneFor(trx, info, attrs.milestoneId);
    if (milestoneId !== undefined) set.milestone_id = milestoneId;
    let delta = 0;
    if (attrs.stateEvent === 'close' && current.state === 'opened') {
      Object.assign(set, { state: 'closed', closed_at: now, closed_by_id: user.id });
      delta = -1;
    } else if (attrs.stateEvent === 'reopen' && current.state === 'closed' && current.discussion_locked !== 1) {
      // A closed issue whose discussion is locked stays closed (IssuePolicy: locked prevents reopen_issue).
      Object.assign(set, { state: 'opened', closed_at: null, closed_by_id: null });
      delta = 1;
    }
    await trx.updateTable('issues').set(set).where('id', '=', issue.id).execute();
    const resource = { type: 'Issue' as const, id: issue.id };
    if (set.milestone_id !== undefined) await recordMilestoneChange(trx, resource, user.id, current.milestone_id, set.milestone_id ?? null, set.state ?? current.state);
    if (set.state === 'closed') await recordStateChange(trx, resource, user.id, 'closed');
    else if (set.state === 'opened') await recordStateChange(trx, resource, user.id, 'reopened');
    if (assignees) await setIssueAssignees(trx, issue.id, assignees, false);
    if (attrs.labels !== undefined || attrs.addLabels !== undefined || attrs.removeLabels !== undefined) {
      const before = (await trx.selectFrom('issue_labels').select('label_id').where('issue_id', '=', issue.id).execute()).map((r) => r.label_id);
      let ids = attrs.labels !== undefined ? (await resolveLabels(trx, info, attrs.labels, true)).map((l) => l.id) : before;
      if (attrs.addLabels?.length) ids = [...ids, ...(await resolveLabels(trx, info, attrs.addLabels, true)).map((l) => l.id)];
      if (attrs.removeLabels?.length) {
        const remove = new Set((await resolveLabels(trx, info, attrs.removeLabels, false)).map((l) => l.id));
        ids = ids.filter((id) => !remove.has(id));
      }
      await setIssueLabels(trx, issue.id, ids, false);
      await recordLabelChanges(trx, resource, user.id, before, ids);
    }
    // Open and confidential before and after: the counts follow both the state and the flag.
    const wasOpen = current.state === 'opened';
    const isOpen = set.state !== undefined ? set.state === 'opened' : wasOpen;
    const wasHidden = wasOpen && current.confidential === 1;
    const isHidden = isOpen && (set.confidential !== undefined ? set.confidential === 1 : current.confidential === 1);
    await adjustOpenCount(trx, issue.project_id, delta, false, Number(isHidden) - Number(wasHidden));
  });
  const fresh = (await findIssueById(app.db, issue.id))!;
  const action = issue.state === 'opened' && fresh.state === 'closed' ? 'close' : issue.state === 'closed' && fresh.state === 'opened' ? 'reopen' : 'update';
  await emitEvent(app, { kind: 'issue', projectId: issue.project_id, info, issue: fresh, previous: issue, ...(previousAssociations ? { previousAssociations } : {}), userId: user.id, action });
  return fresh;
}

async function associations(db: Kysely<DB>, issueId: number) {
  const [assignees, labels] = await Promise.all([
    db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issueId).orderBy('position').orderBy('id').execute(),
    db.selectFrom('issue_labels').select('label_id').where('issue_id', '=', issueId).orderBy('label_id').execute(),
  ]);
  return { assigneeIds: assignees.map((r) => r.user_id), labelIds: labels.map((r) => r.label_id) };
}

/** Closes an issue (a merge request that closes it was merged); nothing when it is not open. */
export async function closeIssue(trx: Transaction<DB>, issueId: number, userId: number, at: string): Promise<boolean> {
  const res = await trx.updateTable('issues').set({ state: 'closed', closed_at: at, closed_by_id: userId, updated_at: at }).where('id', '=', issueId).where('state', '=', 'opened').returning(['project_id', 'confidential']).executeTakeFirst();
  if (!res) return false;
  await adjustOpenCount(trx, res.project_id, -1, res.confidential === 1);
  return true;
}

/** The rows that belong to issues (links, votes, subscriptions, notes) go with them. */
async function deleteIssueChildren(trx: Transaction<DB>, ids: () => number[] | SelectQueryBuilder<DB, 'issues', { id: number }>): Promise<void> {
  await trx.deleteFrom('issue_assignees').where('issue_id', 'in', ids()).execute();
  await trx.deleteFrom('issue_labels').where('issue_id', 'in', ids()).execute();
  await trx.deleteFrom('merge_requests_closing_issues').where('issue_id', 'in', ids()).execute();
  await trx.deleteFrom('issue_links').where((eb) => eb.or([eb('source_id', 'in', ids()), eb('target_id', 'in', ids())])).execute();
  await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Issue').where('awardable_id', 'in', ids()).execute();
  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Issue').where('subscribable_id', 'in', ids()).execute();
  await trx
    .deleteFrom('award_emoji')
    .where('awardable_type', '=', 'Note')
    .where('awardable_id', 'in', (eb) => eb.selectFrom('notes').select('id').where('noteable_type', '=', 'Issue').where('noteable_id', 'in', ids()))
    .execute();
  // Their events and their comments' events go with them (GitLab's dependent: :delete_all).
  await trx
    .deleteFrom('events')
    .where('target_type', 'in', NOTE_EVENT_TYPES)
    .where('target_id', 'in', (eb) => eb.selectFrom('notes').select('id').where('noteable_type', '=', 'Issue').where('noteable_id', 'in', ids()))
    .execute();
  await trx.deleteFrom('events').where('target_type', '=', 'Issue').where('target_id', 'in', ids()).execute();
  await trx.deleteFrom('todos').where('target_type', '=', 'Issue').where('target_id', 'in', ids()).execute();
  await trx.deleteFrom('resource_events').where('resource_type', '=', 'Issue').where('resource_id', 'in', ids()).execute();
  await trx.deleteFrom('notes').where('noteable_type', '=', 'Issue').where('noteable_id', 'in', ids()).execute();
}

/** A deleted project's issues go with it (a projectDeletionHooks entry, registered by the issue routes). */
export async function deleteProjectIssues(trx: Transaction<DB>, projectId: number): Promise<void> {
  await deleteIssueChildren(trx, () => trx.selectFrom('issues').select('id').where('project_id', '=', projectId));
  await trx.deleteFrom('issues').where('project_id', '=', projectId).execute();
}

export async function deleteIssue(app: AppContext, issue: IssueRow): Promise<void> {
  await app.database.transaction(async (trx) => {
    const gone = await trx.deleteFrom('issues').where('id', '=', issue.id).returning(['state', 'confidential']).executeTakeFirst();
    // Deleted by a request that raced this one.
    if (!gone) throw notFound();
    await deleteIssueChildren(trx, () => [issue.id]);
    if (gone.state === 'opened') await adjustOpenCount(trx, issue.project_id, -1, gone.confidential === 1);
  });
}
