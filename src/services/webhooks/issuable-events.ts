// Merge request, note and release events to the project's hooks (the webhooks' listener of
// services/events.ts).
import { instanceBase, type AppContext } from '../../context.js';
import { findUserRefsByIds } from '../../db/repositories/users.js';
import { eventListeners, type DomainEvent } from '../events.js';
import { findMrById, type ProjectInfo } from '../merge-requests/rows.js';
import { loadProjectById } from '../projects/lookup.js';
import { triggerHooks } from './dispatch.js';
import { deploymentPayload, pipelinePayload } from './ci-payloads.js';
import { flagsOf, projectHooks, type HookFlag, type HookRow } from './hooks.js';
import { emojiPayload, mergeRequestPayload, notePayload, releasePayload } from './issuable-payloads.js';

const FLAGS: Record<DomainEvent['kind'], HookFlag[]> = {
  merge_request: ['merge_requests_events'],
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
  const info: ProjectInfo | null = e.kind === 'merge_request' && e.info ? e.info : await loadProjectById(app.db, e.projectId);
  if (!info) return;
  if (e.kind === 'merge_request') {
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
    await triggerHooks(app, e.projectId, {
      scope: e.note.internal === 1 ? 'confidential_note_hooks' : 'note_hooks',
      payload: async () => {
        const onMr = e.note.noteable_type === 'MergeRequest';
        const [user, mr] = await Promise.all([userRef(app, e.userId), onMr ? findMrById(app.db, e.note.noteable_id) : null]);
        if (!user || (onMr && !mr)) return null;
        return notePayload(app, { base, info, mr: mr ?? null, note: e.note, user, action: e.action });
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
    await triggerHooks(app, e.projectId, {
      scope: 'emoji_hooks',
      // An award on an internal note shows the note: only to hooks that take confidential notes.
      ...(note?.internal === 1 ? { accept: (row: HookRow) => flagsOf(row).confidential_note_events === true } : {}),
      payload: async () => {
        const mrId = onNote ? (note?.noteable_type === 'MergeRequest' ? note.noteable_id : null) : e.award.awardable_type === 'MergeRequest' ? e.award.awardable_id : null;
        const [user, mr] = await Promise.all([userRef(app, e.userId), mrId === null ? null : findMrById(app.db, mrId)]);
        if (!user || !mr || (onNote && !note)) return null;
        return emojiPayload(app, { base, info, award: e.award, user, action: e.action, mr, note: note ?? null });
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
