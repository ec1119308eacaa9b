// Moving and cloning issues (GitLab's Issues::MoveService and CloneService): a new issue in the
// target project with the original's title, description, confidentiality, due date, time
// tracking and assignees, its labels and milestone matched by title in the target, and (always
// when moving, with `with_notes` when cloning) its notes and award emoji; a moved issue is closed
// and points to the new one (`moved_to_id`). GITLAB-COMPAT: no system notes are written.
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import { emitEvent } from '../events.js';
import { recordStateChange } from '../resource-events.js';
import { groupScopeIds } from '../merge-requests/attributes.js';
import { newDiscussionId } from '../merge-requests/notes.js';
import type { ProjectInfo } from '../merge-requests/rows.js';
import { findIssueById, type IssueRow } from './rows.js';
import { adjustOpenCount, closeIssue, MAX_IID } from './write.js';
import { apiError, notFound, unprocessable } from '../../http/errors.js';

export async function copyIssue(app: AppContext, from: { info: ProjectInfo; issue: IssueRow }, to: ProjectInfo, user: UserRow, opts: { move: boolean; withNotes: boolean }): Promise<IssueRow> {
  let src = from.issue;
  const now = nowIso();
  const groups = groupScopeIds(to);
  let closedCopy = false;
  const newId = await app.database.transaction(async (trx) => {
    // The original as it is now, locked: two moves at once make one copy, and a change made since
    // it was read (confidentiality, state) is what is copied.
    const fresh = await app.database.forUpdate(trx.selectFrom('issues').selectAll().where('id', '=', src.id)).executeTakeFirst();
    if (!fresh) throw notFound('Issue');
    if (opts.move && fresh.moved_to_id !== null) throw apiError(400, 'Cannot move issue due to insufficient permissions!');
    src = fresh;
    // A moved issue keeps its state (a closed one stays closed); a clone is a new, open issue of its maker's.
    closedCopy = opts.move && src.state === 'closed';
    const counter = await trx
      .updateTable('projects')
      .set((eb) => ({ issue_iid_counter: eb('issue_iid_counter', '+', 1) }))
      .where('id', '=', to.project.id)
      .where('issue_iid_counter', '<', MAX_IID)
      .returning('issue_iid_counter')
      .executeTakeFirst();
    if (!counter) throw unprocessable(['Iid has reached its largest value']);
    const labels = await trx
      .selectFrom('issue_labels')
      .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
      .select('labels.title')
      .where('issue_labels.issue_id', '=', src.id)
      .execute();
    const titles = [...new Set(labels.map((l) => l.title))];
    const targetLabels = titles.length
      ? await trx
          .selectFrom('labels')
          .select(['id', 'title', 'project_id'])
          .where('title', 'in', titles)
          .where((eb) => eb.or([eb('project_id', '=', to.project.id), ...(groups.length ? [eb('group_id', 'in', groups)] : [])]))
          .orderBy('id')
          .execute()
      : [];
    const labelByTitle = new Map<string, number>();
    for (const l of targetLabels) if (!labelByTitle.has(l.title) || l.project_id !== null) labelByTitle.set(l.title, l.id);
    let milestoneId: number | null = null;
    if (src.milestone_id !== null) {
      const m = await trx.selectFrom('milestones').select('title').where('id', '=', src.milestone_id).executeTakeFirst();
      if (m) {
        const found = await trx
          .selectFrom('milestones')
          .select('id')
          .where('title', '=', m.title)
          .where((eb) => eb.or([eb('project_id', '=', to.project.id), ...(groups.length ? [eb('group_id', 'in', groups)] : [])]))
          .orderBy('id')
          .executeTakeFirst();
        milestoneId = found?.id ?? null;
      }
    }
    const row = await trx
      .insertInto('issues')
      .values({
        iid: counter.issue_iid_counter,
        project_id: to.project.id,
        author_id: opts.move ? src.author_id : user.id,
        title: src.title,
        description: src.description,
        state: closedCopy ? 'closed' : 'opened',
        issue_type: src.issue_type,
        confidential: src.confidential,
        discussion_locked: src.discussion_locked,
        due_date: src.due_date,
        milestone_id: milestoneId,
        closed_at: closedCopy ? src.closed_at : null,
        closed_by_id: closedCopy ? src.closed_by_id : null,
        updated_by_id: null,
        time_estimate: src.time_estimate,
        total_time_spent: src.total_time_spent,
        upvotes: opts.move || opts.withNotes ? src.upvotes : 0,
        downvotes: opts.move || opts.withNotes ? src.downvotes : 0,
        created_at: opts.move ? src.created_at : now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = row.id;
    if (!closedCopy) await adjustOpenCount(trx, to.project.id, 1, src.confidential === 1);
    const assignees = await trx.selectFrom('issue_assignees').select(['user_id', 'position']).where('issue_id', '=', src.id).execute();
    if (assignees.length) await trx.insertInto('issue_assignees').values(assignees.map((a) => ({ issue_id: id, user_id: a.user_id, position: a.position }))).execute();
    const labelIds = [...new Set(titles.map((t) => labelByTitle.get(t)).filter((x): x is number => x !== undefined))];
    if (labelIds.length) await trx.insertInto('issue_labels').values(labelIds.map((label_id) => ({ issue_id: id, label_id }))).execute();
    if (opts.move || opts.withNotes) {
      const awards = await trx.selectFrom('award_emoji').selectAll().where('awardable_type', '=', 'Issue').where('awardable_id', '=', src.id).execute();
      if (awards.length) {
        await trx.insertInto('award_emoji').values(awards.map((a) => ({ awardable_type: 'Issue', awardable_id: id, user_id: a.user_id, name: a.name, created_at: a.created_at, updated_at: a.updated_at }))).execute();
      }
      const notes = await trx.selectFrom('notes').selectAll().where('noteable_type', '=', 'Issue').where('noteable_id', '=', src.id).orderBy('id').execute();
      const threads = new Map<string, string>();
      for (const n of notes) {
        if (!threads.has(n.discussion_id)) threads.set(n.discussion_id, newDiscussionId());
        const { id: _old, ...rest } = n;
        void _old;
        await trx.insertInto('notes').values({ ...rest, project_id: to.project.id, noteable_id: id, discussion_id: threads.get(n.discussion_id)! }).execute();
      }
      await trx
        .updateTable('issues')
        .set({ user_notes_count: src.user_notes_count, unresolved_notes_count: src.unresolved_notes_count })
        .where('id', '=', id)
        .execute();
    }
    if (opts.move) {
      if (await closeIssue(trx, src.id, user.id, now)) await recordStateChange(trx, { type: 'Issue', id: src.id }, user.id, 'closed');
      await trx.updateTable('issues').set({ moved_to_id: id, updated_at: now }).where('id', '=', src.id).execute();
    }
    return id;
  });
  const created = (await findIssueById(app.db, newId))!;
  await emitEvent(app, { kind: 'issue', projectId: to.project.id, info: to, issue: created, userId: user.id, action: 'open' });
  if (opts.move && src.state === 'opened') {
    const closed = (await findIssueById(app.db, src.id))!;
    await emitEvent(app, { kind: 'issue', projectId: from.info.project.id, info: from.info, issue: closed, previous: src, userId: user.id, action: 'close' });
  }
  return created;
}
