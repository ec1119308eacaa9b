// Notes and discussions (threads) of merge requests and issues: GitLab's lib/api/notes.rb and
// lib/api/discussions.rb, with its NotePolicy. Both APIs need a signed-in caller, even on a public
// project (their `before { authenticate! }`). The same handlers serve both noteables: the path's
// `:merge_request_iid` or `:issue_iid` says which.
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../../http/route.js';
import { route } from '../../../http/route.js';
import { badRequest, forbidden, notFound, notGiven, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { findUserRefsByIds } from '../../../db/repositories/users.js';
import { AccessLevel } from '../../../services/access.js';
import { dbId } from '../../../services/merge-requests/rows.js';
import {
  createNote,
  deleteNote,
  MAX_NOTE_LENGTH,
  setResolved,
  threadNotes,
  updateNoteBody,
  type Noteable,
  type NoteRow,
} from '../../../services/merge-requests/notes.js';
import { isResolvable, noteUserIds, presentDiscussion, presentNote } from '../entities/note.js';
import { mrFromPath, type MrProject } from './context.js';
import { addAward, awardName, listAwards, removeAward, showAward } from './awards.js';
import { DIFF_LIMITS } from './diff-routes.js';
import { checkPosition, readPosition } from '../../../services/merge-requests/diff-position.js';
import { repoFor } from '../../../services/merge-requests/git-ops.js';
import { issueFromPath } from '../issues/context.js';

/** The noteable of the path and what its notes' rules read of it. */
interface NoteScope extends MrProject {
  on: Noteable & { iid: number; authorId: number; discussionLocked: number | null };
  /** Reads internal notes: Reporters and up on merge requests, Planners and up on issues. */
  internalLevel: number;
  /** Resolves threads besides the author: Developers on merge requests, Planners on issues. */
  resolveLevel: number;
}

/**
 * The merge request or issue of the path, for a caller who may read it: `404 Not found` when the
 * caller may see the project but not the noteable, as GitLab's finders of readable ones.
 */
async function noteable(c: Ctx): Promise<NoteScope> {
  if (c.params.raw.issue_iid !== undefined) {
    const s = await issueFromPath(c);
    const on = { type: 'Issue' as const, id: s.issue.id, iid: s.issue.iid, authorId: s.issue.author_id, discussionLocked: s.issue.discussion_locked };
    return { info: s.info, access: s.access, on, internalLevel: AccessLevel.PLANNER, resolveLevel: AccessLevel.PLANNER };
  }
  const p = await mrFromPath(c, { hidden: true });
  const on = { type: 'MergeRequest' as const, id: p.mr.id, iid: p.mr.iid, authorId: p.mr.author_id, discussionLocked: p.mr.discussion_locked };
  return { info: p.info, access: p.access, on, internalLevel: AccessLevel.REPORTER, resolveLevel: AccessLevel.DEVELOPER };
}

/** The noteable for a signed-in caller. */
async function scope(c: Ctx): Promise<NoteScope> {
  c.requireUser();
  return noteable(c);
}

function isAdmin(c: Ctx): boolean {
  return !!c.user?.is_admin;
}

/** Internal notes (GitLab's read_internal_note). */
function readsInternal(c: Ctx, s: NoteScope): boolean {
  return isAdmin(c) || s.access >= s.internalLevel;
}

/**
 * What every note write needs besides its own rule: a project that is not archived, and on a
 * merge request or issue whose discussion is locked, a project member (GitLab's `locked & ~is_project_member`).
 */
function mayWrite(c: Ctx, s: NoteScope): boolean {
  // An archived project is read-only for everyone, administrators included (a prevent rule).
  if (s.info.project.archived) return false;
  if (isAdmin(c)) return true;
  if (s.on.discussionLocked === 1 && s.access < AccessLevel.GUEST) return false;
  return true;
}

/** admin_note: the note's author, a Maintainer, or an administrator; never a system note. */
function mayAdmin(c: Ctx, s: NoteScope, note: NoteRow): boolean {
  if (note.system === 1 || !mayWrite(c, s)) return false;
  return isAdmin(c) || note.author_id === c.user!.id || s.access >= AccessLevel.MAINTAINER;
}

/** Discussion#can_resolve?: the noteable's author, or Developers (merge requests) / Planners (issues) and up (resolve_note). */
function mayResolveThread(c: Ctx, s: NoteScope): boolean {
  if (!mayWrite(c, s)) return false;
  return isAdmin(c) || s.on.authorId === c.user!.id || s.access >= s.resolveLevel;
}

/** Note-level resolve_note: also the note's own author. */
function mayResolveNote(c: Ctx, s: NoteScope, note: NoteRow): boolean {
  return mayResolveThread(c, s) || (mayWrite(c, s) && note.author_id === c.user!.id);
}

function notesOf(c: Ctx, s: NoteScope) {
  let q = c.app.db.selectFrom('notes').selectAll().where('noteable_id', '=', s.on.id).where('noteable_type', '=', s.on.type);
  if (!readsInternal(c, s)) q = q.where('internal', '=', 0);
  return q;
}

async function present(c: Ctx, s: NoteScope, notes: NoteRow[]) {
  const users = await findUserRefsByIds(c.app.db, noteUserIds(notes));
  const ctx = { base: c.base, users, noteableIid: s.on.iid };
  return { one: (n: NoteRow) => presentNote(n, ctx), thread: (t: NoteRow[]) => presentDiscussion(t, ctx) };
}

/** `:note_id` of the path: an integer (400 otherwise, as Grape's type check). */
function noteIdParam(c: Ctx): number {
  const raw = String(c.params.raw.note_id ?? '');
  if (!/^\d+$/.test(raw)) throw paramError('note_id is invalid');
  return raw.length > 10 ? -1 : dbId(Number(raw));
}

/** A note of the noteable the caller may read: `404 Not found` for none, `404 Note Not Found` for an internal one. */
async function findNote(c: Ctx, s: NoteScope): Promise<NoteRow> {
  const id = noteIdParam(c);
  const note = id < 0 ? undefined : await c.app.db.selectFrom('notes').selectAll().where('id', '=', id).where('noteable_id', '=', s.on.id).where('noteable_type', '=', s.on.type).executeTakeFirst();
  if (!note) throw notFound();
  if (note.internal === 1 && !readsInternal(c, s)) throw notFound('Note');
  return note;
}

/** The readable notes of a thread, oldest first; 404 `resource` when there are none. */
async function findThread(c: Ctx, s: NoteScope, resource = 'Discussion'): Promise<NoteRow[]> {
  const id = String(c.params.raw.discussion_id ?? '');
  const notes = (await threadNotes(c.app.db, s.on, id)).filter((n) => n.internal === 0 || readsInternal(c, s));
  if (notes.length === 0) throw notFound(resource);
  return notes;
}

const BLANK = `Note {:note=>["can't be blank"]}`;

/** A note's length as GitLab validates it (Note: present, at most 1,000,000 characters). */
function checkBody(body: string): string {
  if (body.trim() === '') throw badRequest(BLANK);
  if (body.length > MAX_NOTE_LENGTH) throw badRequest(`Note {:note=>["is too long (maximum is ${MAX_NOTE_LENGTH} characters)"]}`);
  return body;
}

/** The required `body` of a new note (null is blank, as Grape lets it through to the validation). */
function newBody(c: Ctx): string {
  if (!c.params.has('body')) throw notGiven('body');
  if (c.params.raw.body === null) throw badRequest(BLANK);
  return checkBody(c.params.string('body')!);
}

/** The optional new `body` of an edit (allow_blank: false). */
function editedBody(c: Ctx): string | undefined {
  if (c.params.has('body') && c.params.raw.body === null) throw paramError('body is empty');
  const body = c.params.string('body', { allowBlank: false });
  return body === undefined ? undefined : checkBody(body);
}

/**
 * `created_at` of a new note: only an Owner or an administrator may date one (GitLab's
 * set_note_created_at); from anyone else it is ignored, unread. A date that cannot be used is 400.
 */
function noteCreatedAt(c: Ctx, s: NoteScope): string | undefined {
  if (!isAdmin(c) && s.access < AccessLevel.OWNER) return undefined;
  const at = c.params.datetime('created_at');
  if (at !== undefined && Date.parse(at) < 0) throw paramError('created_at is invalid');
  return at;
}

/** The parameters of a new comment (body, internal, created_at), checked before anything is written. */
function newNoteParams(c: Ctx, s: NoteScope) {
  const body = newBody(c);
  // `confidential` is the deprecated name of `internal`; only Reporters and up may set either.
  const internal = (c.params.bool('internal') || c.params.bool('confidential')) === true && readsInternal(c, s);
  c.params.string('merge_request_diff_head_sha'); // accepted: it only matters to a /merge quick action, which Labwright does not run
  return { body, internal, createdAt: noteCreatedAt(c, s) };
}

async function listNotes(c: Ctx) {
  const s = await scope(c);
  const orderBy = c.params.enum('order_by', ['created_at', 'updated_at'] as const) ?? 'created_at';
  const sort = c.params.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
  const filter = c.params.enum('activity_filter', ['all_notes', 'only_comments', 'only_activity'] as const) ?? 'all_notes';
  let q = notesOf(c, s);
  if (filter === 'only_comments') q = q.where('system', '=', 0);
  else if (filter === 'only_activity') q = q.where('system', '=', 1);
  const rows = await paginateOffset(c, q.orderBy(orderBy, sort).orderBy('id', sort));
  const p = await present(c, s, rows);
  return rows.map(p.one);
}

async function showNote(c: Ctx) {
  const s = await scope(c);
  const note = await findNote(c, s);
  return (await present(c, s, [note])).one(note);
}

async function createComment(c: Ctx) {
  const s = await scope(c);
  const params = newNoteParams(c, s);
  if (!mayWrite(c, s)) throw forbidden();
  const note = await createNote(c.app, { projectId: s.info.project.id, noteable: s.on, authorId: c.user!.id, type: null, ...params });
  return (await present(c, s, [note!])).one(note!);
}

/** PUT of a note's body (both APIs); no body changes nothing. */
async function editNote(c: Ctx, s: NoteScope, note: NoteRow, opts: { confidential?: boolean } = {}) {
  const body = editedBody(c);
  // The notes API still declares `confidential`: it may not change (GitLab's UpdateService).
  const confidential = opts.confidential ? c.params.bool('confidential') : undefined;
  if (!mayAdmin(c, s, note)) throw forbidden();
  if (confidential !== undefined && confidential !== (note.internal === 1)) throw badRequest('Note {:confidential=>["can not be changed for existing notes"]}');
  let fresh: NoteRow | null = note;
  if (body !== undefined && body !== note.body) fresh = await updateNoteBody(c.app, note, body, c.user!.id);
  if (!fresh) throw notFound();
  return (await present(c, s, [fresh])).one(fresh);
}

async function updateComment(c: Ctx) {
  const s = await scope(c);
  return editNote(c, s, await findNote(c, s), { confidential: true });
}

async function removeNote(c: Ctx) {
  const s = await scope(c);
  const note = await findNote(c, s);
  if (!mayAdmin(c, s, note)) throw forbidden();
  await deleteNote(c.app, note);
  return undefined;
}

async function listDiscussions(c: Ctx) {
  const s = await scope(c);
  // Threads in the order they were started (GitLab's discussion_ids_relation), a page of ids first.
  const ids = notesOf(c, s)
    .clearSelect()
    .select((eb) => ['discussion_id', eb.fn.min('created_at').as('first_at'), eb.fn.min('id').as('first_id')])
    .groupBy('discussion_id')
    .orderBy((eb) => eb.fn.min('created_at'))
    .orderBy((eb) => eb.fn.min('id'));
  const page = await paginateOffset(c, ids);
  if (page.length === 0) return [];
  const notes = await notesOf(c, s).where('discussion_id', 'in', page.map((r) => r.discussion_id)).orderBy('created_at').orderBy('id').execute();
  const byThread = new Map<string, NoteRow[]>(page.map((r) => [r.discussion_id, []]));
  for (const n of notes) byThread.get(n.discussion_id)?.push(n);
  const p = await present(c, s, notes);
  return [...byThread.values()].filter((t) => t.length > 0).map(p.thread);
}

async function showDiscussion(c: Ctx) {
  const s = await scope(c);
  const thread = await findThread(c, s);
  return (await present(c, s, thread)).thread(thread);
}

async function createDiscussion(c: Ctx) {
  const s = await scope(c);
  // The discussions API takes no `internal`: a thread is never internal.
  const params = { body: newBody(c), internal: false, createdAt: noteCreatedAt(c, s) };
  // Threads on the diff are for merge requests only (an issue's `position` is ignored).
  const position = s.on.type === 'MergeRequest' && c.params.has('position') ? readPosition(c.params.raw.position) : null;
  const commitId = c.params.string('commit_id') ?? null;
  if (!mayWrite(c, s)) throw forbidden();
  let diff: { position: string; lineCode: string | null; commitId: string | null } | undefined;
  if (position) {
    const checked = await checkPosition(repoFor(c.app, s.info.project.id), position, DIFF_LIMITS);
    diff = { position: JSON.stringify(checked.position), lineCode: checked.lineCode, commitId: commitId && /^[0-9a-f]{7,64}$/i.test(commitId) ? commitId : null };
  }
  const note = await createNote(c.app, { projectId: s.info.project.id, noteable: s.on, authorId: c.user!.id, type: position ? 'DiffNote' : 'DiscussionNote', diff, ...params });
  return (await present(c, s, [note!])).thread([note!]);
}

async function listThreadNotes(c: Ctx) {
  const s = await scope(c);
  const thread = await findThread(c, s, 'Notes');
  const p = await present(c, s, thread);
  return thread.map(p.one);
}

async function reply(c: Ctx) {
  const s = await scope(c);
  await findThread(c, s);
  const body = newBody(c);
  const createdAt = noteCreatedAt(c, s);
  if (!mayWrite(c, s)) throw forbidden();
  const note = await createNote(c.app, {
    projectId: s.info.project.id,
    noteable: s.on,
    authorId: c.user!.id,
    type: 'DiscussionNote',
    body,
    internal: false,
    createdAt,
    inReplyTo: String(c.params.raw.discussion_id),
  });
  if (!note) throw notFound('Discussion');
  return (await present(c, s, [note])).one(note);
}

async function updateThreadNote(c: Ctx) {
  const s = await scope(c);
  const given = ['body', 'resolved'].filter((k) => c.params.has(k));
  if (given.length === 0) throw paramError('body, resolved are missing, exactly one parameter must be provided');
  if (given.length > 1) throw paramError('body, resolved are mutually exclusive');
  const resolved = c.params.bool('resolved');
  const note = await findNote(c, s);
  if (resolved === undefined) return editNote(c, s, note);
  if (!mayResolveNote(c, s, note)) throw forbidden();
  if (!isResolvable(note)) throw badRequest('Note is not resolvable');
  const [fresh] = await setResolved(c.app, s.on, { noteId: note.id }, resolved, c.user!.id);
  if (!fresh) throw notFound();
  return (await present(c, s, [fresh])).one(fresh);
}

async function resolveThread(c: Ctx) {
  const s = await scope(c);
  if (!c.params.has('resolved')) throw notGiven('resolved');
  const resolved = c.params.bool('resolved')!;
  const thread = await findThread(c, s);
  // A comment cannot be resolved: GitLab answers 403 (can_resolve? is false).
  if (!thread.some(isResolvable) || !mayResolveThread(c, s)) throw forbidden();
  const fresh = await setResolved(c.app, s.on, { discussionId: thread[0]!.discussion_id }, resolved, c.user!.id);
  if (fresh.length === 0) throw notFound('Discussion');
  return (await present(c, s, fresh)).thread(fresh);
}

/**
 * A note of the path's merge request as an awardable. Reading needs no sign-in (GitLab's award
 * emoji API has none); an internal note below Reporter, or a write where the caller could not
 * write to the thread, is GitLab's `404 Award Emoji Not Found`.
 */
async function awardableNote(c: Ctx, opts: { write?: boolean } = {}) {
  if (opts.write) c.requireUser();
  const s = await noteable(c);
  const id = noteIdParam(c);
  const note = id < 0 ? undefined : await c.app.db.selectFrom('notes').selectAll().where('id', '=', id).where('noteable_id', '=', s.on.id).where('noteable_type', '=', s.on.type).executeTakeFirst();
  if (!note) throw notFound();
  if ((note.internal === 1 && !readsInternal(c, s)) || (opts.write && !mayWrite(c, s))) throw notFound('Award Emoji');
  return { type: 'Note' as const, id: note.id, projectId: note.project_id };
}

export function registerMergeRequestNoteRoutes(app: FastifyInstance): void {
  for (const mr of ['/projects/:id/merge_requests/:merge_request_iid', '/projects/:id/issues/:issue_iid']) registerNoteRoutesAt(app, mr);
}

function registerNoteRoutesAt(app: FastifyInstance, mr: string): void {
  route(app, 'GET', `${mr}/notes`, listNotes, { cache: true });
  route(app, 'POST', `${mr}/notes`, createComment);
  route(app, 'GET', `${mr}/notes/:note_id`, showNote, { cache: true });
  route(app, 'PUT', `${mr}/notes/:note_id`, updateComment);
  route(app, 'DELETE', `${mr}/notes/:note_id`, removeNote);
  route(app, 'GET', `${mr}/discussions`, listDiscussions, { cache: true });
  route(app, 'POST', `${mr}/discussions`, createDiscussion);
  route(app, 'GET', `${mr}/discussions/:discussion_id`, showDiscussion, { cache: true });
  route(app, 'PUT', `${mr}/discussions/:discussion_id`, resolveThread);
  route(app, 'GET', `${mr}/discussions/:discussion_id/notes`, listThreadNotes, { cache: true });
  route(app, 'POST', `${mr}/discussions/:discussion_id/notes`, reply);
  route(app, 'GET', `${mr}/discussions/:discussion_id/notes/:note_id`, showNote, { cache: true });
  route(app, 'PUT', `${mr}/discussions/:discussion_id/notes/:note_id`, updateThreadNote);
  route(app, 'DELETE', `${mr}/discussions/:discussion_id/notes/:note_id`, removeNote);
  // Award emoji on a note (lib/api/award_emoji.rb)
  const awards = `${mr}/notes/:note_id/award_emoji`;
  route(app, 'GET', awards, async (c) => listAwards(c, await awardableNote(c)));
  route(app, 'GET', `${awards}/:award_id`, async (c) => showAward(c, await awardableNote(c)));
  route(app, 'POST', awards, async (c) => {
    const user = c.requireUser();
    const on = await awardableNote(c, { write: true });
    return addAward(c, user, on, awardName(c));
  });
  route(app, 'DELETE', `${awards}/:award_id`, async (c) => {
    const user = c.requireUser();
    await removeAward(c, user, await awardableNote(c, { write: true }));
    return undefined;
  });
}
