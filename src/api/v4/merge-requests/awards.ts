// Award emoji on a merge request or an issue, or on one of their notes (GitLab's lib/api/award_emoji.rb).
import type { Ctx } from '../../../http/route.js';
import { notFound, notGiven, paramError, unauthorized, validationError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { findUserRefsByIds, type UserRefRow, type UserRow } from '../../../db/repositories/users.js';
import { nowIso } from '../../../db/database.js';
import { pathId } from '../../../services/merge-requests/rows.js';
import { emitEvent } from '../../../services/events.js';
import { presentUserBasic } from '../entities/user.js';

export type Awardable = { type: 'MergeRequest' | 'Issue' | 'Note'; id: number; projectId: number };

interface AwardRow {
  id: number;
  name: string;
  user_id: number;
  created_at: string;
  updated_at: string;
  awardable_id: number;
  awardable_type: string;
}

function presentAward(a: AwardRow, users: Map<number, UserRefRow>, base: string) {
  const u = users.get(a.user_id);
  return {
    id: a.id,
    name: a.name,
    user: u ? presentUserBasic(u, { base }) : null,
    created_at: a.created_at,
    updated_at: a.updated_at,
    awardable_id: a.awardable_id,
    awardable_type: a.awardable_type,
    url: null,
  };
}

function awardsOf(c: Ctx, on: Awardable) {
  return c.app.db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', on.type).where('awardable_id', '=', on.id);
}

export async function listAwards(c: Ctx, on: Awardable) {
  const rows = await paginateOffset(c, awardsOf(c, on).orderBy('id'));
  const users = await findUserRefsByIds(c.app.db, rows.map((r) => r.user_id));
  return rows.map((r) => presentAward(r, users, c.base));
}

async function findAward(c: Ctx, on: Awardable): Promise<AwardRow> {
  const id = pathId(c.params.raw.award_id);
  const row = id < 0 ? undefined : await awardsOf(c, on).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Award Emoji');
  return row;
}

export async function showAward(c: Ctx, on: Awardable) {
  const row = await findAward(c, on);
  return presentAward(row, await findUserRefsByIds(c.app.db, [row.user_id]), c.base);
}

/** The `name` of a new award, checked before anything is written. */
export function awardName(c: Ctx): string {
  if (!c.params.has('name')) throw notGiven('name');
  const name = c.params.string('name', { allowBlank: false })!;
  if (!/^[a-z0-9_+-]{1,64}$/.test(name)) throw validationError({ name: ['is not a valid emoji name'] });
  return name;
}

/** Awards `name` once per user (a repeat, also a racing one, is GitLab's 400 `has already been taken`). */
export async function addAward(c: Ctx, user: UserRow, on: Awardable, name: string) {
  const now = nowIso();
  const row = { awardable_type: on.type, awardable_id: on.id, user_id: user.id, name, created_at: now, updated_at: now };
  const ins = await c.app.db.insertInto('award_emoji').values(row).onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
  if (!ins) throw validationError({ name: ['has already been taken'] });
  const award = Object.assign({}, row, { id: Number(ins.id) });
  await emitEvent(c.app, { kind: 'emoji', projectId: on.projectId, award, userId: user.id, action: 'award' });
  return presentAward(award, new Map([[user.id, user]]), c.base);
}

/** Only the user who gave an award (or an administrator) takes it back; anyone else is GitLab's 401. */
export async function removeAward(c: Ctx, user: UserRow, on: Awardable): Promise<void> {
  const row = await findAward(c, on);
  if (row.user_id !== user.id && !user.is_admin) throw unauthorized();
  await c.app.db.deleteFrom('award_emoji').where('id', '=', row.id).execute();
  await emitEvent(c.app, { kind: 'emoji', projectId: on.projectId, award: row, userId: user.id, action: 'revoke' });
}
