// GitLab's Entities::Member: the user (UserBasic fields) with the membership's level and dates.
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import { findUsersByIds, type UserRow } from '../../../db/repositories/users.js';
import type { MemberRow } from '../../../services/members.js';
import { presentUserBasic } from './user.js';

export function presentMember(m: MemberRow, user: UserRow, ctx: { base: string; createdBy?: UserRow | null; viewer?: UserRow | null }) {
  return {
    ...presentUserBasic(user, ctx),
    access_level: m.access_level,
    created_at: m.created_at,
    ...(ctx.createdBy ? { created_by: presentUserBasic(ctx.createdBy, ctx) } : {}),
    expires_at: m.expires_at,
    ...(ctx.viewer?.is_admin ? { email: user.email } : {}),
    membership_state: 'active',
  };
}

/** Presents memberships with their users and creators loaded in one query. */
export async function presentMembers(db: Kysely<DB>, rows: MemberRow[], ctx: { base: string; viewer?: UserRow | null }) {
  const users = await findUsersByIds(db, rows.flatMap((r) => (r.created_by_id !== null ? [r.user_id, r.created_by_id] : [r.user_id])));
  return rows.flatMap((m) => {
    const user = users.get(m.user_id);
    if (!user) return [];
    return [presentMember(m, user, { ...ctx, createdBy: m.created_by_id !== null ? users.get(m.created_by_id) ?? null : null })];
  });
}
