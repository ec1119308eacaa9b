// Note and Discussion presenters named after GitLab's Entities::Note and Entities::Discussion.
// Field order follows GitLab.
import type { UserRefRow } from '../../../db/repositories/users.js';
import { presentPosition } from '../../../services/merge-requests/diff-position.js';
import { presentUserBasic } from './user.js';

export type { NoteRow } from '../../../services/merge-requests/notes.js';
import type { NoteRow } from '../../../services/merge-requests/notes.js';

/** Only threads' notes on merge requests can be resolved (DiscussionNote, DiffNote; no system note). */
export function isResolvable(n: Pick<NoteRow, 'type' | 'system'>): boolean {
  return (n.type === 'DiscussionNote' || n.type === 'DiffNote') && n.system === 0;
}

export interface NotePresentCtx {
  base: string;
  users: Map<number, UserRefRow>;
  /** The iid of the merge request or issue the notes belong to (null for a commit's). */
  noteableIid: number | null;
}

/**
 * GITLAB-COMPAT: `attachment` is always null (no uploads), `imported` false and `imported_from`
 * 'none' (no importers), `commands_changes` {} (quick actions are not run: the body is kept as
 * written).
 */
export function presentNote(n: NoteRow, ctx: NotePresentCtx): Record<string, unknown> {
  const author = ctx.users.get(n.author_id);
  const out: Record<string, unknown> = {
    id: n.id,
    type: n.type,
    body: n.body,
    attachment: null,
    author: author ? presentUserBasic(author, { base: ctx.base }) : null,
    created_at: n.created_at,
    updated_at: n.updated_at,
    system: n.system === 1,
    noteable_id: n.noteable_id,
    noteable_type: n.noteable_type,
    project_id: n.project_id,
  };
  if (n.type === 'DiffNote') {
    out.commit_id = n.commit_id;
    out.position = n.position === null ? null : presentPosition(n.position);
  }
  const resolvable = isResolvable(n);
  out.resolvable = resolvable;
  if (resolvable) {
    out.resolved = n.resolved_at !== null;
    const by = n.resolved_by_id === null ? undefined : ctx.users.get(n.resolved_by_id);
    out.resolved_by = by ? presentUserBasic(by, { base: ctx.base }) : null;
    out.resolved_at = n.resolved_at;
  }
  out.confidential = n.internal === 1;
  out.internal = n.internal === 1;
  out.imported = false;
  out.imported_from = 'none';
  out.noteable_iid = ctx.noteableIid;
  out.commands_changes = {};
  return out;
}

/** A thread: its notes in the order they were written. A comment is a thread of one (`individual_note`). */
export function presentDiscussion(notes: NoteRow[], ctx: NotePresentCtx): Record<string, unknown> {
  return {
    id: notes[0]!.discussion_id,
    individual_note: notes[0]!.type === null,
    notes: notes.map((n) => presentNote(n, ctx)),
  };
}

/** The users a page of notes shows (authors and resolvers). */
export function noteUserIds(notes: NoteRow[]): number[] {
  const ids = new Set<number>();
  for (const n of notes) {
    ids.add(n.author_id);
    if (n.resolved_by_id !== null) ids.add(n.resolved_by_id);
  }
  return [...ids];
}
