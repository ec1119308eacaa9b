// Notes (comments) and threads on merge requests and issues (GitLab's Notes::CreateService,
// UpdateService, DestroyService, ResolveService). Every write runs in one transaction that first
// touches the noteable, as GitLab's note saves do: that takes its row lock, so concurrent note
// writes on one merge request or issue queue there and each recounts its notes (user_notes_count
// and the notes still to resolve) from a state that includes every earlier write.
import { emitEvent } from '../events.js';
import { NOTE_EVENT_TYPES } from '../event-rows.js';
import { randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { DB } from '../../db/types.js';
import type { NotesTable } from '../../db/tables/merge-requests.js';
import type { Selectable } from 'kysely';
import { notFound } from '../../http/errors.js';

export type NoteRow = Selectable<NotesTable>;

export const NOTEABLE_MR = 'MergeRequest';

export type NoteableType = 'MergeRequest' | 'Issue';

/** What notes are written on: a merge request or an issue (both keep the note counts on their row). */
export interface Noteable {
  type: NoteableType;
  id: number;
}

/** The noteable's table; both have updated_at, user_notes_count and unresolved_notes_count. */
function tableOf(n: Noteable): 'merge_requests' {
  return (n.type === 'Issue' ? 'issues' : 'merge_requests') as 'merge_requests';
}

export function noteableOf(note: Pick<NoteRow, 'noteable_type' | 'noteable_id'>): Noteable {
  return { type: note.noteable_type === 'Issue' ? 'Issue' : 'MergeRequest', id: note.noteable_id };
}

/** The notes that can be resolved: those of threads (GitLab's ResolvableNote::RESOLVABLE_TYPES). */
export const RESOLVABLE_TYPES = ['DiscussionNote', 'DiffNote'];

export type NoteType = 'DiscussionNote' | 'DiffNote' | null;

/** GitLab's discussion ids: 40 hexadecimal characters. */
export function newDiscussionId(): string {
  return randomBytes(20).toString('hex');
}

/** GitLab's limit on a note's length (Note validates `note` at most 1,000,000 characters). */
export const MAX_NOTE_LENGTH = 1_000_000;

/**
 * Touches the noteable (taking its row lock); 404 when it was deleted since it was read, so no
 * note is written to a merge request or issue that is gone.
 */
async function touch(trx: Transaction<DB>, on: Noteable, now: string): Promise<void> {
  const res = await trx.updateTable(tableOf(on)).set({ updated_at: now }).where('id', '=', on.id).executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw notFound();
}

async function recount(trx: Transaction<DB>, on: Noteable): Promise<void> {
  await trx
    .updateTable(tableOf(on))
    .set((eb) => ({
      user_notes_count: eb
        .selectFrom('notes')
        .select(eb.fn.countAll<number>().as('n'))
        .where('noteable_id', '=', on.id)
        .where('noteable_type', '=', on.type)
        .where('system', '=', 0),
      unresolved_notes_count: eb
        .selectFrom('notes')
        .select(eb.fn.countAll<number>().as('n'))
        .where('noteable_id', '=', on.id)
        .where('noteable_type', '=', on.type)
        .where('system', '=', 0)
        .where('type', 'in', RESOLVABLE_TYPES)
        .where('resolved_at', 'is', null),
    }))
    .where('id', '=', on.id)
    .execute();
}

/** The notes of one thread, oldest first (GitLab's `fresh`). */
export function threadNotes(db: Pick<Transaction<DB>, 'selectFrom'>, on: Noteable, discussionId: string): Promise<NoteRow[]> {
  return db
    .selectFrom('notes')
    .selectAll()
    .where('noteable_id', '=', on.id)
    .where('noteable_type', '=', on.type)
    .where('discussion_id', '=', discussionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export interface NewNote {
  projectId: number;
  noteable: Noteable;
  authorId: number;
  body: string;
  /** A comment (null) or the first note of a thread. Ignored for a reply. */
  type: NoteType;
  /** A thread on the diff: the position (JSON), its line code, and the commit named. */
  diff?: { position: string; lineCode: string | null; commitId: string | null };
  internal: boolean;
  /** Set by an Owner or administrator (then also the note's updated_at). */
  createdAt?: string;
  /** A reply to this thread. */
  inReplyTo?: string;
}

/**
 * Creates a note; null when the thread replied to no longer exists. A reply to a comment turns it
 * into a thread (GitLab's convert_to_discussion!), takes the thread's internal flag, and is
 * created resolved, by its author, when the thread is resolved (Notes::BuildService).
 */
export async function createNote(app: AppContext, n: NewNote): Promise<NoteRow | null> {
  const note = await insertNote(app, n);
  if (note) await emitEvent(app, { kind: 'note', projectId: n.projectId, note, userId: n.authorId, action: 'create' });
  return note;
}

function insertNote(app: AppContext, n: NewNote): Promise<NoteRow | null> {
  return app.database.transaction(async (trx) => {
    const now = nowIso();
    await touch(trx, n.noteable, now);
    const created = n.createdAt ?? now;
    let type: NoteType = n.type;
    let diff = n.diff ?? null;
    let internal = n.internal;
    let discussionId = newDiscussionId();
    let resolvedAt: string | null = null;
    if (n.inReplyTo !== undefined) {
      const thread = await threadNotes(trx, n.noteable, n.inReplyTo);
      if (thread.length === 0) return null;
      if (thread[0]!.type === null) {
        await trx.updateTable('notes').set({ type: 'DiscussionNote' }).where('id', 'in', thread.map((t) => t.id)).execute();
        for (const t of thread) t.type = 'DiscussionNote';
      }
      // A reply takes the thread's kind, and on the diff its position (GitLab's reply_attributes).
      const first = thread[0]!;
      type = first.type === 'DiffNote' ? 'DiffNote' : 'DiscussionNote';
      diff = first.position === null ? null : { position: first.position, lineCode: first.line_code, commitId: first.commit_id };
      internal = first.internal === 1;
      discussionId = n.inReplyTo;
      const resolvable = thread.filter((t) => t.system === 0 && RESOLVABLE_TYPES.includes(t.type ?? ''));
      if (resolvable.length > 0 && resolvable.every((t) => t.resolved_at !== null)) resolvedAt = now;
    }
    const row = {
      project_id: n.projectId,
      noteable_type: n.noteable.type as string,
      noteable_id: n.noteable.id,
      author_id: n.authorId,
      body: n.body,
      discussion_id: discussionId,
      type,
      system: 0,
      internal: internal ? 1 : 0,
      position: diff?.position ?? null,
      line_code: diff?.lineCode ?? null,
      commit_id: diff?.commitId ?? null,
      resolved_at: resolvedAt,
      resolved_by_id: resolvedAt ? n.authorId : null,
      updated_by_id: null,
      created_at: created,
      updated_at: created,
    };
    const { id } = await trx.insertInto('notes').values(row).returning('id').executeTakeFirstOrThrow();
    await recount(trx, n.noteable);
    return Object.assign(row, { id: Number(id) });
  });
}

/** A note's new body; null when the note is gone. */
export async function updateNoteBody(app: AppContext, note: NoteRow, body: string, userId: number): Promise<NoteRow | null> {
  const fresh = await app.database.transaction(async (trx) => {
    const now = nowIso();
    await touch(trx, noteableOf(note), now);
    const res = await trx.updateTable('notes').set({ body, updated_at: now, updated_by_id: userId }).where('id', '=', note.id).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return null;
    return (await trx.selectFrom('notes').selectAll().where('id', '=', note.id).executeTakeFirst()) ?? null;
  });
  if (fresh) await emitEvent(app, { kind: 'note', projectId: fresh.project_id, note: fresh, previousBody: note.body, userId, action: 'update' });
  return fresh;
}

export async function deleteNote(app: AppContext, note: NoteRow): Promise<void> {
  await app.database.transaction(async (trx) => {
    await touch(trx, noteableOf(note), nowIso());
    await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', '=', note.id).execute();
    await trx.deleteFrom('events').where('target_type', 'in', NOTE_EVENT_TYPES).where('target_id', '=', note.id).execute();
    await trx.deleteFrom('notes').where('id', '=', note.id).execute();
    await recount(trx, noteableOf(note));
  });
}

/**
 * Resolves (or reopens) the resolvable notes of a whole thread (read again under the merge
 * request's lock, so a reply that just arrived is included) or one note. Notes already in that
 * state keep their resolver and time. Returns the notes as they are afterwards.
 */
export async function setResolved(app: AppContext, on: Noteable, target: { discussionId: string } | { noteId: number }, resolved: boolean, userId: number): Promise<NoteRow[]> {
  return app.database.transaction(async (trx) => {
    const now = nowIso();
    await touch(trx, on, now);
    const noteIds = 'noteId' in target ? [target.noteId] : (await threadNotes(trx, on, target.discussionId)).map((n) => n.id);
    if (noteIds.length === 0) return [];
    let q = trx
      .updateTable('notes')
      .set(resolved ? { resolved_at: now, resolved_by_id: userId, updated_at: now } : { resolved_at: null, resolved_by_id: null, updated_at: now })
      .where('id', 'in', noteIds)
      .where('noteable_id', '=', on.id)
      .where('noteable_type', '=', on.type)
      .where('type', 'in', RESOLVABLE_TYPES)
      .where('system', '=', 0);
    q = resolved ? q.where('resolved_at', 'is', null) : q.where('resolved_at', 'is not', null);
    await q.execute();
    await recount(trx, on);
    return trx.selectFrom('notes').selectAll().where('id', 'in', noteIds).orderBy('created_at').orderBy('id').execute();
  });
}

/** A merge request's notes, and their award emoji, go with it (deleteMergeRequest). */
export async function deleteNotesOf(trx: Transaction<DB>, mrId: number): Promise<void> {
  await trx
    .deleteFrom('award_emoji')
    .where('awardable_type', '=', 'Note')
    .where('awardable_id', 'in', (eb) => eb.selectFrom('notes').select('id').where('noteable_type', '=', NOTEABLE_MR).where('noteable_id', '=', mrId))
    .execute();
  await trx
    .deleteFrom('events')
    .where('target_type', 'in', NOTE_EVENT_TYPES)
    .where('target_id', 'in', (eb) => eb.selectFrom('notes').select('id').where('noteable_type', '=', NOTEABLE_MR).where('noteable_id', '=', mrId))
    .execute();
  await trx.deleteFrom('notes').where('noteable_type', '=', NOTEABLE_MR).where('noteable_id', '=', mrId).execute();
}
