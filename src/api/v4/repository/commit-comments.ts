// Comments on commits (GitLab's GET/POST /projects/:id/repository/commits/:sha/comments and
// Entities::CommitNote). They are notes of noteable type 'Commit', found by project and commit; one
// on a line of the commit's diff (path, line, line_type) is GitLab's LegacyDiffNote.
import { emitEvent } from '../../../services/events.js';
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, notGiven, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { nowIso } from '../../../db/database.js';
import { findUserRefsByIds, type UserRefRow } from '../../../db/repositories/users.js';
import { indexHunks } from '../../../services/merge-requests/diff-position.js';
import { MAX_NOTE_LENGTH, newDiscussionId, type NoteRow } from '../../../services/merge-requests/notes.js';
import { readableRepo } from '../../../services/repository/project-repo.js';
import { commitDiff } from '../../../services/repository/queries.js';
import { presentUserBasic } from '../entities/user.js';
import { findCommit } from './commits.js';
import { pathParam } from './common.js';

interface LinePosition {
  path: string;
  line: number;
  line_type: 'new' | 'old';
}

function presentCommitNote(n: NoteRow, users: Map<number, UserRefRow>, base: string) {
  const at = n.position ? (JSON.parse(n.position) as LinePosition) : null;
  const author = users.get(n.author_id);
  return {
    note: n.body,
    path: at?.path ?? null,
    line: at?.line ?? null,
    line_type: at?.line_type ?? null,
    author: author ? presentUserBasic(author, { base }) : null,
    created_at: n.created_at,
  };
}

// GET /projects/:id/repository/commits/:sha/comments
async function listComments(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const commit = await findCommit(pr, pathParam(c, 'sha'));
  const q = c.app.db.selectFrom('notes').selectAll().where('project_id', '=', pr.project.id).where('commit_id', '=', commit.id).where('noteable_type', '=', 'Commit').orderBy('created_at').orderBy('id');
  const rows = await paginateOffset(c, q);
  const users = await findUserRefsByIds(c.app.db, [...new Set(rows.map((r) => r.author_id))]);
  return rows.map((r) => presentCommitNote(r, users, c.base));
}

// POST /projects/:id/repository/commits/:sha/comments
async function createComment(c: Ctx) {
  if (!c.params.has('note')) throw notGiven('note');
  const body = c.params.raw.note === null ? '' : c.params.string('note')!;
  const path = c.params.string('path');
  const line = c.params.int('line', { min: 0 });
  const lineType = c.params.enum('line_type', ['new', 'old'] as const) ?? 'new';
  const user = c.requireUser();
  const pr = await readableRepo(c, pathParam(c, 'id'));
  if (pr.project.archived) throw forbidden();
  const commit = await findCommit(pr, pathParam(c, 'sha'));
  if (body.trim() === '') throw apiError(400, `Failed to save note {:note=>["can't be blank"]}`);
  if (body.length > MAX_NOTE_LENGTH) throw apiError(400, `Failed to save note {:note=>["is too long (maximum is ${MAX_NOTE_LENGTH} characters)"]}`);
  // A path and line the commit's diff shows make a comment on that line; anything else a plain comment, as GitLab.
  let position: LinePosition | null = null;
  if (path && line !== undefined) {
    const diffs = await commitDiff(pr.repo, commit.id, commit.parent_ids[0]);
    const file = diffs.find((d) => d.new_path === path);
    if (file) {
      const hunks = indexHunks(file.diff);
      if (lineType === 'new' ? hunks.added.has(line) : hunks.removed.has(line)) position = { path, line, line_type: lineType };
    }
  }
  const now = nowIso();
  const row = {
    project_id: pr.project.id,
    noteable_type: 'Commit',
    noteable_id: 0,
    author_id: user.id,
    body,
    discussion_id: newDiscussionId(),
    type: position ? 'LegacyDiffNote' : null,
    system: 0,
    internal: 0,
    position: position ? JSON.stringify(position) : null,
    line_code: null,
    commit_id: commit.id,
    resolved_at: null,
    resolved_by_id: null,
    updated_by_id: null,
    created_at: now,
    updated_at: now,
  };
  const { id } = await c.app.db.insertInto('notes').values(row).returning('id').executeTakeFirstOrThrow();
  const note = Object.assign(row, { id: Number(id) });
  await emitEvent(c.app, { kind: 'note', projectId: pr.project.id, note, userId: user.id, action: 'create' });
  return presentCommitNote(note, new Map([[user.id, user]]), c.base);
}

export function registerCommitCommentRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/commits/:sha/comments', listComments);
  route(app, 'POST', '/projects/:id/repository/commits/:sha/comments', createComment);
}
