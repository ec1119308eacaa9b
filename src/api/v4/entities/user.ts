// User presenters named after GitLab's entities: UserBasic, User, UserPublic (current user),
// UserWithAdmin. Field order follows GitLab.
import type { UserRow } from '../../../db/repositories/users.js';

export interface PresentCtx {
  base: string;
}

function isLocked(u: UserRow): boolean {
  return u.locked_until !== null && Date.parse(u.locked_until) > Date.now();
}

export function avatarUrl(base: string, u: UserRow): string | null {
  return u.avatar_path ? `${base}/uploads/-/system/user/avatar/${u.id}/${u.avatar_path}` : null;
}

export function userState(u: UserRow): string {
  return u.state;
}

/** UserBasic: what lists and embedded users show. */
export function presentUserBasic(u: UserRow, ctx: PresentCtx) {
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

/** User: a profile as another user sees it. */
export function presentUser(u: UserRow, ctx: PresentCtx) {
  return {
    ...presentUserBasic(u, ctx),
    created_at: u.created_at,
    bio: u.bio,
    location: u.location,
    linkedin: '',
    twitter: '',
    discord: '',
    website_url: u.website_url,
    github: '',
    organization: u.organization,
    job_title: u.job_title,
    pronouns: u.pronouns,
    bot: u.user_type !== 'human',
    work_information: u.organization && u.job_title ? `${u.job_title} at ${u.organization}` : u.organization || u.job_title || null,
    followers: 0,
    following: 0,
    is_followed: false,
    local_time: null,
  };
}

/** UserPublic: the current user's own view (GET /user). */
export function presentUserPublic(u: UserRow, ctx: PresentCtx) {
  return {
    ...presentUser(u, ctx),
    last_sign_in_at: u.last_sign_in_at,
    confirmed_at: u.confirmed_at,
    last_activity_on: u.last_activity_on,
    email: u.email,
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: u.projects_limit,
    current_sign_in_at: u.current_sign_in_at,
    identities: [] as unknown[],
    can_create_group: u.can_create_group === 1,
    can_create_project: u.projects_limit > 0,
    two_factor_enabled: false,
    external: u.external === 1,
    private_profile: u.private_profile === 1,
    commit_email: u.email,
    preferred_language: 'en',
  };
}

/** UserWithAdmin: what administrators see. */
export function presentUserWithAdmin(u: UserRow, ctx: PresentCtx & { namespaceId?: number | null }) {
  return {
    ...presentUserPublic(u, ctx),
    is_admin: u.is_admin === 1,
    note: null,
    namespace_id: ctx.namespaceId ?? null,
    created_by: null,
    email_reset_offered_at: null,
  };
}
