// User presenters named after GitLab's entities: UserBasic, User, UserPublic (current user),
// UserWithAdmin. Field order follows GitLab.
import type { UserRefRow, UserRow } from '../../../db/repositories/users.js';
import { noteTimeFlip } from '../../../http/kept-response.js';

export interface PresentCtx {
  base: string;
}

function isLocked(u: Pick<UserRow, 'locked_until'>): boolean {
  if (u.locked_until === null) return false;
  const until = Date.parse(u.locked_until);
  if (until <= Date.now()) return false;
  // Kept responses showing it locked must end when it no longer is.
  noteTimeFlip(until);
  return true;
}

export function avatarUrl(base: string, u: Pick<UserRow, 'id' | 'avatar_path'>): string | null {
  return u.avatar_path ? `${base}/uploads/-/system/user/avatar/${u.id}/${u.avatar_path}` : null;
}

export function userState(u: Pick<UserRow, 'state'>): string {
  return u.state;
}

/** UserBasic: what lists and embedded users show. */
export function presentUserBasic(u: UserRefRow, ctx: PresentCtx) {
  return {
    id: u.id,
    username: u.username,
    public_email: u.public_email,
    name: u.name,
    state: userState(u),
    locked: isLocked(u),
    avatar_url: avatarUrl(ctx.base, u),
    web_url: `${ctx.base}/${u.username}`,
  };
}

/**
 * The users of `ids` that exist, presented (assignees, reviewers): a plain loop into a fresh array.
 * Not `ids.map(…).filter(Boolean)`: the arrays `map` makes are of another elements kind when empty
 * (a new merge request has no assignees) than with users in them, and each kind seen anew at the
 * `.filter` call threw the calling presenter's optimised code away; presentMergeRequestBasic was
 * compiled again (over 200 ms of a background thread each time) while creations came.
 */
export function presentUserRefs(ids: readonly number[] | undefined, users: ReadonlyMap<number, UserRefRow>, base: string): Array<ReturnType<typeof presentUserBasic>> {
  const out: Array<ReturnType<typeof presentUserBasic>> = [];
  if (ids) {
    const ctx = { base };
    for (let i = 0; i < ids.length; i++) {
      const u = users.get(ids[i]!);
      if (u) out.push(presentUserBasic(u, ctx));
    }
  }
  return out;
}

// Each level extends the one below by plain property stores, in GitLab's field order. Not object
// spread: on Node 20, `{ ...a, more }` takes tens of microseconds per object (V8 builds a new
// hidden class each time), which made presenting a user slower than the database lookups.
type Fields = Record<string, unknown>;

/** User: a profile as another user sees it. */
export function presentUser(u: UserRow, ctx: PresentCtx) {
  const o = presentUserBasic(u, ctx) as ReturnType<typeof presentUserBasic> & Fields;
  o.created_at = u.created_at;
  o.bio = u.bio;
  o.location = u.location;
  o.linkedin = '';
  o.twitter = '';
  o.discord = '';
  o.website_url = u.website_url;
  o.github = '';
  o.organization = u.organization;
  o.job_title = u.job_title;
  o.pronouns = u.pronouns;
  o.bot = u.user_type !== 'human';
  o.work_information = u.organization && u.job_title ? `${u.job_title} at ${u.organization}` : u.organization || u.job_title || null;
  o.followers = 0;
  o.following = 0;
  o.is_followed = false;
  o.local_time = null;
  return o;
}

/** UserPublic: the current user's own view (GET /user). */
export function presentUserPublic(u: UserRow, ctx: PresentCtx) {
  const o = presentUser(u, ctx);
  o.last_sign_in_at = u.last_sign_in_at;
  o.confirmed_at = u.confirmed_at;
  o.last_activity_on = u.last_activity_on;
  o.email = u.email;
  o.theme_id = 1;
  o.color_scheme_id = 1;
  o.projects_limit = u.projects_limit;
  o.current_sign_in_at = u.current_sign_in_at;
  o.identities = [];
  o.can_create_group = u.can_create_group === 1;
  o.can_create_project = u.projects_limit > 0;
  o.two_factor_enabled = false;
  o.external = u.external === 1;
  o.private_profile = u.private_profile === 1;
  o.commit_email = u.email;
  o.preferred_language = 'en';
  return o;
}

/** UserWithAdmin: what administrators see. */
export function presentUserWithAdmin(u: UserRow, ctx: PresentCtx & { namespaceId?: number | null }) {
  const o = presentUserPublic(u, ctx);
  o.is_admin = u.is_admin === 1;
  o.note = null;
  o.namespace_id = ctx.namespaceId ?? null;
  o.created_by = null;
  o.email_reset_offered_at = null;
  return o;
}
