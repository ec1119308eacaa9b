// After-the-fact notices of merge request, issue, note and release changes, for modules that react to
// them (webhooks) without the writers knowing of them, as repository/ref-hooks.ts does for refs.
// A listener says first whether it wants a project's events at all, so writers only load the
// state before a change (for `changes`) when someone will read it. Listener failures are logged,
// never turned into an error for the writer whose change already happened.
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.js';
import type { NotesTable } from '../db/tables/merge-requests.js';
import type { ReleasesTable } from '../db/tables/releases.js';
import type { MrRow, ProjectInfo } from './merge-requests/rows.js';
import type { IssueRow } from './issues/rows.js';

export type MrAction = 'open' | 'close' | 'reopen' | 'update' | 'merge' | 'approved' | 'unapproved' | 'approval' | 'unapproval';

export interface MrAssociations {
  assigneeIds: number[];
  reviewerIds: number[];
  labelIds: number[];
}

export interface MergeRequestEvent {
  kind: 'merge_request';
  projectId: number;
  info?: ProjectInfo;
  mr: MrRow;
  /** The merge request before an update (its people and labels when a listener wanted them, or when they changed). */
  previous?: { row: MrRow; associations?: MrAssociations };
  /** The assignees and reviewers asked for: a new merge request's, or an update's when it sets them (to-dos). */
  people?: { assigneeIds: number[]; reviewerIds: number[] };
  userId: number;
  action: MrAction;
  /** A push to the source branch: where it was before (GitLab's `oldrev`). */
  oldrev?: string;
}

export interface IssueAssociations {
  assigneeIds: number[];
  labelIds: number[];
}

export interface IssueEvent {
  kind: 'issue';
  projectId: number;
  info?: ProjectInfo;
  issue: IssueRow;
  /** The issue before an update, when a listener wanted it (with its people and labels for an update). */
  previous?: IssueRow;
  previousAssociations?: IssueAssociations;
  /** A new issue's assignees (to-dos). */
  assigneeIds?: number[];
  userId: number;
  action: 'open' | 'close' | 'reopen' | 'update';
}

export interface NoteEvent {
  kind: 'note';
  projectId: number;
  note: Selectable<NotesTable>;
  /** An edited note's text before (to-dos go to the people newly mentioned). */
  previousBody?: string;
  userId: number;
  action: 'create' | 'update';
}

export interface ReleaseEvent {
  kind: 'release';
  projectId: number;
  release: Selectable<ReleasesTable>;
  action: 'create' | 'update' | 'delete';
}

export interface EmojiEvent {
  kind: 'emoji';
  projectId: number;
  award: { id: number; name: string; user_id: number; awardable_type: string; awardable_id: number; created_at: string; updated_at: string };
  userId: number;
  action: 'award' | 'revoke';
}

export interface PipelineEvent {
  kind: 'pipeline';
  projectId: number;
  pipelineId: number;
}

export interface DeploymentEvent {
  kind: 'deployment';
  projectId: number;
  deploymentId: number;
}

export type DomainEvent = MergeRequestEvent | IssueEvent | NoteEvent | ReleaseEvent | EmojiEvent | PipelineEvent | DeploymentEvent;

export interface EventListener {
  wants(app: AppContext, projectId: number, kind: DomainEvent['kind']): Promise<boolean>;
  handle(app: AppContext, event: DomainEvent): Promise<void>;
}

export const eventListeners: EventListener[] = [];

/**
 * Called with every domain event, whether or not a listener wants it (the contribution events of
 * services/activity.ts); failures are theirs to log.
 */
export const eventRecorders: Array<(app: AppContext, event: DomainEvent) => Promise<void>> = [];

/** Whether any listener takes this project's events of `kind` (writers load extra state only then). */
export async function eventsWanted(app: AppContext, projectId: number, kind: DomainEvent['kind']): Promise<boolean> {
  for (const l of eventListeners) {
    try {
      if (await l.wants(app, projectId, kind)) return true;
    } catch (err) {
      app.log.error({ err, projectId }, 'event listener check failed');
    }
  }
  return false;
}

export async function emitEvent(app: AppContext, event: DomainEvent): Promise<void> {
  for (const record of eventRecorders) await record(app, event);
  for (const l of eventListeners) {
    try {
      if (await l.wants(app, event.projectId, event.kind)) await l.handle(app, event);
    } catch (err) {
      app.log.error({ err, projectId: event.projectId, kind: event.kind }, 'event listener failed');
    }
  }
}
