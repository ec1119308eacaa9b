// GitLab's Entities::Member: the user (UserBasic fields) with the membership's level and dates.
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import { findUsersByIds, type UserRow } from '../../../db/repositories/users.js';
import type { MemberRow } from '../../../services/members.js';
import { presentUserBasic } from './user.js';

export function presentMember(m: MemberRow, user: UserRow, ctx: { base: string; createdBy?: UserRow | null; viewer?: UserRow | null }) {
  // Property stores, not `{ ...basic, more }` (object spread followed by members is slow on Node 20).
  const o = presentUserBasic(user, ctx) as ReturnType<typeof presentUserBasic> & Record<string, unknown>;
  o.access_level = m.access_level;
  o.created_at = m.created_at;
  if (ctx.createdBy) o.created_by = presentUserBasic(ctx.createdBy, ctx);
  o.expires_at = m.expires_at;
  if (ctx.viewer?.is_admin) o.email = user.email;
  o.membership_state = 'active';
  return o;
}

/** Presents memberships with their users and creators loaded in one query. */
export async function presentMembers(db: Kysely<DB>, rows: MemberRow[], ctx: { base: string; viewer?: UserRow | null }) {
  const users = await findUsersByIds(db, rows.flatMap((r) => (r.created_by_id !== null ? [r.user_id, r.created_by_id] : [r.user_id])));
  return rows.flatMap((m) => {
    const user = users.get(m.user_id);
    if (!user) return [];
    return [presentMember(m, user, Object.assign({}, ctx, { createdBy: m.created_by_id !== null ? users.get(m.created_by_id) ?? null : null }))];
  });
}
