// Contribution events (GitLab's Event and EventCreateService): what people did in projects, kept
// for the events APIs. Recorded after the change they describe, as GitLab does (its services create
// the event after saving): from the domain events (services/events.ts) for merge requests, issues
// and comments, from the ref change listeners for pushes, and by the project and membership writers
// for project creation and members joining or leaving. Recording after the fact never fails the
// writer (an error is logged and the change stands); events written inside a writer's own
// transaction (project creation, members, milestones, merge request creation: see event-rows.ts)
// commit or fail with it.
import type { AppContext } from '../context.js';
import type { RefChange } from '../git/index.js';
import { eventRecorders, type DomainEvent } from './events.js';
import { insertEvents, NOTE_EVENT_TYPES, type EventAction, type NewEvent, type PushData } from './event-rows.js';
import { repoFor } from './merge-requests/git-ops.js';
import { projectDeletionHooks } from './projects/create.js';
import { refChangeListeners } from './repository/ref-hooks.js';
import { userDeletionHooks } from './users.js';

/** Records events after the change they describe; a failure is logged, never thrown. */
export async function recordEvents(app: AppContext, events: NewEvent[]): Promise<void> {
  try {
    await insertEvents(app.db, events);
  } catch (err) {
    app.log.error({ err }, 'recording events failed');
  }
}

// A merge request's opening is recorded by its creation itself (in the same transaction or statement).
const MR_ACTIONS: Partial<Record<string, EventAction>> = { close: 'closed', reopen: 'reopened', merge: 'merged', approved: 'approved' };
const ISSUE_ACTIONS: Partial<Record<string, EventAction>> = { open: 'created', close: 'closed', reopen: 'reopened' };
const NOTEABLE_TYPES = ['Issue', 'MergeRequest', 'Commit'];

/** The contribution event a domain event makes, if any (services/events.ts calls this for every one). */
export function eventFor(e: DomainEvent): NewEvent | null {
  if (e.kind === 'merge_request') {
    const action = MR_ACTIONS[e.action];
    return action ? { projectId: e.mr.project_id, authorId: e.userId, action, targetType: 'MergeRequest', targetId: e.mr.id } : null;
  }
  if (e.kind === 'issue') {
    const action = ISSUE_ACTIONS[e.action];
    return action ? { projectId: e.issue.project_id, authorId: e.userId, action, targetType: 'Issue', targetId: e.issue.id } : null;
  }
  if (e.kind === 'note') {
    // Comments only: not system notes, not edits.
    if (e.action !== 'create' || e.note.system || !NOTEABLE_TYPES.includes(e.note.noteable_type)) return null;
    // The note's class: Note, DiscussionNote, DiffNote, or LegacyDiffNote (a commit's line comment).
    const type = e.note.type && NOTE_EVENT_TYPES.includes(e.note.type) ? e.note.type : 'Note';
    return { projectId: e.note.project_id, authorId: e.userId, action: 'commented', targetType: type, targetId: e.note.id };
  }
  return null;
}

/** GitLab's push_event_activities_limit (default 3): a push moving more refs of one kind makes one bulk event. */
const PUSH_EVENT_ACTIVITIES_LIMIT = 3;
/** GitLab's PushEventPayloadService: the newest commit's title, cut to 70 characters. */
const COMMIT_TITLE_LENGTH = 70;

function truncateTitle(message: string): string {
  const first = message.split(/\r|\n/, 1)[0].trim();
  const chars = [...first];
  return chars.length > COMMIT_TITLE_LENGTH ? `${chars.slice(0, COMMIT_TITLE_LENGTH - 3).join('')}...` : first;
}

function pushAction(c: RefChange): PushData['action'] {
  return c.before === null ? 'created' : c.after === null ? 'removed' : 'pushed';
}

/** The push data of one ref change: how many commits it brought (as the push hook counts them) and the newest one's title. */
async function pushDataFor(app: AppContext, projectId: number, c: RefChange, defaultBranch: string | null): Promise<PushData> {
  const tag = c.ref.startsWith('refs/tags/');
  const ref = c.ref.replace(/^refs\/(heads|tags)\//, '');
  const data: PushData = { action: pushAction(c), refType: tag ? 'tag' : 'branch', ref, commitFrom: c.before, commitTo: c.after, commitTitle: null, commitCount: 0, refCount: null };
  if (!c.after) return data;
  const repo = repoFor(app, projectId);
  const commit = await repo.getCommit(c.after);
  if (!commit) return data;
  data.commitTitle = truncateTitle(commit.message ?? commit.title);
  if (tag) {
    data.commitCount = 1;
  } else if (c.before) {
    data.commitCount = await repo.countCommits(c.after, { exclude: c.before });
  } else if (!defaultBranch || defaultBranch === ref) {
    data.commitCount = await repo.countCommits(c.after);
  } else {
    const base = await repo.branchSha(defaultBranch);
    data.commitCount = await repo.countCommits(c.after, base ? { exclude: base } : {});
  }
  return data;
}

/**
 * Push events (GitLab's EventCreateService#push and #bulk_push): the ref changes are grouped by
 * kind (branch, tag) and action (created, removed, pushed), as ProcessRefChangesService does; a
 * group of more than three makes one bulk event, the others one event per ref.
 */
async function recordPushes(app: AppContext, projectId: number, changes: RefChange[], userId: number | null): Promise<void> {
  if (userId === null) return;
  const groups = new Map<string, { refType: PushData['refType']; action: PushData['action']; changes: RefChange[] }>();
  for (const c of changes) {
    const refType = c.ref.startsWith('refs/heads/') ? 'branch' : c.ref.startsWith('refs/tags/') ? 'tag' : null;
    if (!refType) continue;
    const action = pushAction(c);
    const key = `${refType}:${action}`;
    const group = groups.get(key) ?? { refType, action, changes: [] };
    group.changes.push(c);
    groups.set(key, group);
  }
  if (groups.size === 0) return;
  const project = await app.db.selectFrom('projects').select(['id', 'default_branch']).where('id', '=', projectId).executeTakeFirst();
  if (!project) return;
  const events: NewEvent[] = [];
  for (const g of groups.values()) {
    if (g.changes.length > PUSH_EVENT_ACTIVITIES_LIMIT) {
      const push: PushData = { action: g.action, refType: g.refType, ref: null, commitFrom: null, commitTo: null, commitTitle: null, commitCount: 0, refCount: g.changes.length };
      events.push({ projectId, authorId: userId, action: 'pushed', push });
      continue;
    }
    for (const c of g.changes) events.push({ projectId, authorId: userId, action: 'pushed', push: await pushDataFor(app, projectId, c, project.default_branch) });
  }
  await recordEvents(app, events);
}

let registered = false;

/** Registers the push listener and the deletion hooks (once per process). */
export function registerActivity(): void {
  if (registered) return;
  registered = true;
  refChangeListeners.push(recordPushes);
  eventRecorders.push(async (app, e) => {
    const event = eventFor(e);
    if (event) await recordEvents(app, [event]);
  });
  projectDeletionHooks.push(async (_app, trx, projectId) => {
    await trx.deleteFrom('events').where('project_id', '=', projectId).execute();
  });
  userDeletionHooks.push(async (_app, trx, user) => {
    await trx.deleteFrom('events').where('author_id', '=', user.id).execute();
  });
}
