// Contribution event rows (migration 0026) and their vocabulary, apart from services/activity.ts so
// that the writers which insert events in their own transaction (projects, members) import nothing
// else.
import type { Kysely, Transaction } from 'kysely';
import { nowIso } from '../db/database.js';
import type { DB } from '../db/types.js';
import { prepared } from '../db/prepared.js';

/** GitLab's Event.actions, in the order of its enum (the values the `action` filter takes). */
export const EVENT_ACTIONS = ['created', 'updated', 'closed', 'reopened', 'pushed', 'commented', 'merged', 'joined', 'left', 'destroyed', 'expired', 'approved'] as const;
export type EventAction = (typeof EVENT_ACTIONS)[number];

/** GitLab's Event::TARGET_TYPES: the `target_type` filter's values and the class each stands for. */
export const EVENT_TARGET_TYPES: Record<string, string> = {
  issue: 'Issue',
  milestone: 'Milestone',
  merge_request: 'MergeRequest',
  note: 'Note',
  project: 'Project',
  snippet: 'Snippet',
  user: 'User',
  wiki: 'WikiPage::Meta',
  design: 'DesignManagement::Design',
};

/** The note classes a comment event names as its target type. */
export const NOTE_EVENT_TYPES = ['Note', 'DiscussionNote', 'DiffNote', 'LegacyDiffNote'];

export interface PushData {
  action: 'pushed' | 'created' | 'removed';
  refType: 'branch' | 'tag';
  ref: string | null;
  commitFrom: string | null;
  commitTo: string | null;
  commitTitle: string | null;
  commitCount: number;
  refCount: number | null;
}

export interface NewEvent {
  projectId: number;
  authorId: number;
  action: EventAction;
  targetType?: string | null;
  targetId?: number | null;
  push?: PushData;
}

function row(e: NewEvent, now: string) {
  return {
    project_id: e.projectId,
    author_id: e.authorId,
    action: e.action,
    target_type: e.targetType ?? null,
    target_id: e.targetId ?? null,
    push_action: e.push?.action ?? null,
    push_ref_type: e.push?.refType ?? null,
    push_ref: e.push?.ref ?? null,
    push_commit_from: e.push?.commitFrom ?? null,
    push_commit_to: e.push?.commitTo ?? null,
    push_commit_title: e.push?.commitTitle ?? null,
    push_commit_count: e.push ? e.push.commitCount : null,
    push_ref_count: e.push?.refCount ?? null,
    created_at: now,
  };
}

/** One event with a target and no push (the common case), compiled once (issue 7: on merge request creation). */
const INSERT_TARGET_EVENT = prepared((db, projectId: number, authorId: number, action: string, targetType: string, targetId: number, now: string) =>
  db.insertInto('events').values({ project_id: projectId, author_id: authorId, action, target_type: targetType, target_id: targetId, created_at: now }),
);

/** Inserts events, inside the caller's transaction when given one. */
export async function insertEvents(db: Kysely<DB> | Transaction<DB>, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const now = nowIso();
  const [one] = events;
  if (events.length === 1 && !one.push && one.targetType && one.targetId) {
    await INSERT_TARGET_EVENT(db, one.projectId, one.authorId, one.action, one.targetType, one.targetId, now);
    return;
  }
  await db.insertInto('events').values(events.map((e) => row(e, now))).execute();
}
