// Merge request, issue, note and release events to the project's hooks (the webhooks' listener of
// services/events.ts).
import { instanceBase, type AppContext } from '../../context.js';
import { findUserRefsByIds } from '../../db/repositories/users.js';
import { eventListeners, type DomainEvent } from '../events.js';
import { findMrById, type ProjectInfo } from '../merge-requests/rows.js';
import { loadProjectById } from '../projects/lookup.js';
import { triggerHooks } from './dispatch.js';
import { deploymentPayload, pipelinePayload } from './ci-payloads.js';
import { flagsOf, projectHooks, type HookFlag, type HookRow } from './hooks.js';
import { emojiPayload, mergeRequestPayload, notePayload, releasePayload, type IssueHookRef } from './issuable-payloads.js';
import { issuePayload, loadIssueHookAttrs } from './issue-payloads.js';
import { findIssueById } from '../issues/rows.js';

const FLAGS: Record<DomainEvent['kind'], HookFlag[]> = {
  merge_request: ['merge_requests_events'],
  issue: ['issues_events', 'confidential_issues_events'],
  note: ['note_events', 'confidential_note_events'],
  release: ['releases_events'],
  emoji: ['emoji_events'],
  pipeline: ['pipeline_events'],
  deployment: ['deployment_events'],
};

async function wants(app: AppContext, projectId: number, kind: DomainEvent['kind']): Promise<boolean> {
  const hooks = await projectHooks(app, projectId);
  if (hooks.length === 0) return false;
  return hooks.some((h) => FLAGS[kind].some((f) => flagsOf(h)[f] === true));
}

async function userRef(app: AppContext, id: number) {
  return (await findUserRefsByIds(app.db, [id])).get(id) ?? null;
}

async function handle(app: AppContext, e: DomainEvent): Promise<void> {
  const base = instanceBase(app);
  const info: ProjectInfo | null = (e.kind === 'merge_request' || e.kind === 'issue') && e.info ? e.info : await loadProjectById(app.db, e.projectId);
  if (!info) return;
  /** The issue a note or award is on, as hooks show it (null when gone). */
  const issueRef = async (id: number): Promise<IssueHookRef | null> => {
    const issue = await findIssueById(app.db, id);
    return issue ? { iid: issue.iid, attrs: await loadIssueHookAttrs(app, base, info, issue) } : null;
  };
  if (e.kind === 'issue') {
    await triggerHooks(app, e.projectId, {
      scope: e.issue.confidential === 1 ? 'confidential_issue_hooks' : 'issue_hooks',
      payload: async () => {
        const user = await userRef(app, e.userId);
        const issue = (await findIssueById(app.db, e.issue.id)) ?? e.issue;
        return user ? issuePayload(app, { base, info, issue, user, action: e.action, previous: e.previous, previousAssociations: e.previousAssociations }) : null;
      },
    });
  } else if (e.kind === 'merge_request') {
    await triggerHooks(app, e.projectId, {
      scope: 'merge_request_hooks',
      payload: async () => {
        const user = await userRef(app, e.userId);
        // The row as it is now (approvals do not change it; merges and updates pass a fresh one).
        const mr = (await findMrById(app.db, e.mr.id)) ?? e.mr;
        return user ? mergeRequestPayload(app, { base, info, mr, user, action: e.action, ...(e.oldrev ? { oldrev: e.oldrev } : {}), ...(e.previous ? { previous: e.previous } : {}) }) : null;
      },
    });
  } else if (e.kind === 'note') {
    if (e.note.system === 1) return;
    const onIssue = e.note.noteable_type === 'Issue';
    // Notes on a confidential issue go to confidential note hooks, as internal notes do.
    const hidden = e.note.internal === 1 || (onIssue && (await findIssueById(app.db, e.note.noteable_id))?.confidential === 1);
    await triggerHooks(app, e.projectId, {
      scope: hidden ? 'confidential_note_hooks' : 'note_hooks',
      payload: async () => {
        const onMr = e.note.noteable_type === 'MergeRequest';
        const [user, mr, issue] = await Promise.all([userRef(app, e.userId), onMr ? findMrById(app.db, e.note.noteable_id) : null, onIssue ? issueRef(e.note.noteable_id) : null]);
        if (!user || (onMr && !mr) || (onIssue && !issue)) return null;
        return notePayload(app, { base, info, mr: mr ?? null, ...(issue ? { issue: { ...issue, confidential: issue.attrs.confidential === true } } : {}), note: e.note, user, action: e.action });
      },
    });
  } else if (e.kind === 'release') {
    await triggerHooks(app, e.projectId, { scope: 'release_hooks', payload: () => releasePayload(app, { base, info, release: e.release, action: e.action }) });
  } else if (e.kind === 'deployment') {
    await triggerHooks(app, e.projectId, {
      scope: 'deployment_hooks',
      payload: async () => {
        const deployment = await app.db.selectFrom('deployments').selectAll().where('id', '=', e.deploymentId).executeTakeFirst();
        return deployment ? deploymentPayload(app, { base, info, deployment }) : null;
      },
    });
  } else if (e.kind === 'pipeline') {
    await triggerHooks(app, e.projectId, {
      scope: 'pipeline_hooks',
      payload: async () => {
        const pipeline = await app.db.selectFrom('ci_pipelines').selectAll().where('id', '=', e.pipelineId).executeTakeFirst();
        return pipeline ? pipelinePayload(app, { base, info, pipeline }) : null;
      },
    });
  } else {
    const onNote = e.award.awardable_type === 'Note';
    const note = onNote ? await app.db.selectFrom('notes').selectAll().where('id', '=', e.award.awardable_id).executeTakeFirst() : null;
    const issueId = onNote ? (note?.noteable_type === 'Issue' ? note.noteable_id : null) : e.award.awardable_type === 'Issue' ? e.award.awardable_id : null;
    const issueRow = issueId === null ? null : await findIssueById(app.db, issueId);
    await triggerHooks(app, e.projectId, {
      scope: 'emoji_hooks',
      // An award on an internal note shows the note: only to hooks that take confidential notes.
      // (and an award on a confidential issue or its notes: only to hooks that take confidential issues)
      ...(note?.internal === 1 ? { accept: (row: HookRow) => flagsOf(row).confidential_note_events === true } : {}),
      ...(issueRow?.confidential === 1 ? { accept: (row: HookRow) => flagsOf(row).confidential_issues_events === true && (note?.internal !== 1 || flagsOf(row).confidential_note_events === true) } : {}),
      payload: async () => {
        const mrId = onNote ? (note?.noteable_type === 'MergeRequest' ? note.noteable_id : null) : e.award.awardable_type === 'MergeRequest' ? e.award.awardable_id : null;
        const [user, mr, issue] = await Promise.all([userRef(app, e.userId), mrId === null ? null : findMrById(app.db, mrId), issueId === null ? null : issueRef(issueId)]);
        if (!user || (!mr && !issue) || (onNote && !note)) return null;
        return emojiPayload(app, { base, info, award: e.award, user, action: e.action, mr: mr ?? null, ...(issue ? { issue } : {}), note: note ?? null });
      },
    });
  }
}

let registered = false;

export function registerIssuableEvents(): void {
  if (registered) return;
  registered = true;
  eventListeners.push({ wants, handle });
}
