// Group presenters: Group (lists) and GroupDetail (one group), field order as GitLab's
// entities/group.rb (reference §6.4): BasicGroupDetails, then the settings, then the EE fields
// that exist on this instance's plan and offering.
import { legacyLevelHash } from '../../../services/repository/protected-refs.js';
import type { Config } from '../../../config.js';
import { tokenDigest } from '../../../services/secrets.js';
import { presentAiSettings } from '../../../services/groups/ai-settings.js';
import { effectiveSettings } from '../../../services/groups/settings.js';
import type { GroupRow, GroupSettingsRow } from '../../../services/groups/lookup.js';
import { hosted, selfManaged, tierAvailable } from '../../../services/groups/tiers.js';

export interface GroupPresentCtx {
  base: string;
  config: Config;
  isAdmin: boolean;
  /** The caller's access on this group (Owner for admins). */
  access: number;
  customAttributes?: Array<{ key: string; value: string }>;
  statistics?: GroupStatistics;
  rootStorageStatistics?: Record<string, number | boolean> | null;
}

export interface GroupStatistics {
  storage_size: number;
  repository_size: number;
  wiki_size: number;
  lfs_objects_size: number;
  job_artifacts_size: number;
  pipeline_artifacts_size: number;
  packages_size: number;
  snippets_size: number;
  uploads_size: number;
}

export function groupWebUrl(base: string, g: Pick<GroupRow, 'full_path'>): string {
  return `${base}/groups/${g.full_path}`;
}

export function groupAvatarUrl(base: string, g: Pick<GroupRow, 'id' | 'avatar_path'>): string | null {
  return g.avatar_path ? `${base}/uploads/-/system/group/avatar/${g.id}/${encodeURIComponent(g.avatar_path)}` : null;
}

/** Runners token: derived from the instance secret, so nothing secret is stored in clear. */
export function runnersToken(config: Config, groupId: number): string {
  return 'GR1348941' + tokenDigest(config.secret, `group-runners-token:${groupId}`).slice(0, 20);
}

/**
 * A group that sets no branch protection shows the instance's (GitLab's Namespace falls back to
 * the application settings). The settings' defaults are the instance default of 2, so only another
 * LABWRIGHT_DEFAULT_BRANCH_PROTECTION needs a look at what the group stored.
 */
function branchProtectionFields(stored: string, s: Readonly<Record<string, unknown>>, config: Config) {
  let level = s.default_branch_protection;
  let hash = s.default_branch_protection_defaults;
  if (config.defaultBranchProtection !== 2) {
    let own: Record<string, unknown> = {};
    try {
      if (stored) own = JSON.parse(stored) as Record<string, unknown>;
    } catch {
      /* a damaged row reads as defaults, as effectiveSettings */
    }
    if (own.default_branch_protection === undefined) level = config.defaultBranchProtection;
    if (own.default_branch_protection_defaults === undefined) hash = legacyLevelHash(Number(level)) ?? hash;
  }
  return { default_branch_protection: level, default_branch_protection_defaults: hash };
}

/** Group: the list entry. */
export function presentGroup(g: GroupRow, st: GroupSettingsRow, ctx: GroupPresentCtx) {
  const s = effectiveSettings(st.settings);
  const premium = tierAvailable(ctx.config, 'PU');
  const out: Record<string, unknown> = {
    id: g.id,
    web_url: groupWebUrl(ctx.base, g),
    name: g.name,
    path: g.path,
    description: g.description,
    visibility: g.visibility,
    share_with_group_lock: s.share_with_group_lock,
    require_two_factor_authentication: s.require_two_factor_authentication,
    two_factor_grace_period: s.two_factor_grace_period,
    project_creation_level: s.project_creation_level,
    auto_devops_enabled: s.auto_devops_enabled,
    subgroup_creation_level: s.subgroup_creation_level,
    emails_disabled: !s.emails_enabled,
    emails_enabled: s.emails_enabled,
    mentions_disabled: s.mentions_disabled,
    lfs_enabled: s.lfs_enabled,
    math_rendering_limits_enabled: s.math_rendering_limits_enabled,
    lock_math_rendering_limits_enabled: s.lock_math_rendering_limits_enabled,
    default_branch: s.default_branch,
    ...branchProtectionFields(st.settings, s, ctx.config),
    avatar_url: groupAvatarUrl(ctx.base, g),
    request_access_enabled: s.request_access_enabled,
    full_name: g.full_name,
    full_path: g.full_path,
    created_at: g.created_at,
    parent_id: g.parent_id,
    organization_id: 1,
    shared_runners_setting: s.shared_runners_setting,
    max_artifacts_size: s.max_artifacts_size,
    archived: st.archived === 1,
  };
  if (ctx.customAttributes) out.custom_attributes = ctx.customAttributes;
  if (ctx.statistics) {
    out.statistics = ctx.statistics;
    if (g.parent_id === null && ctx.rootStorageStatistics) out.root_storage_statistics = ctx.rootStorageStatistics;
  }
  if (premium) {
    if (selfManaged(ctx.config)) {
      out.ldap_cn = null;
      out.ldap_access = null;
    }
    out.wiki_access_level = s.wiki_access_level;
    out.file_template_project_id = s.file_template_project_id;
    out.marked_for_deletion_on = st.marked_for_deletion_on;
  }
  if (ctx.isAdmin && premium) out.repository_storage = st.repository_storage;
  if (premium) {
    out.assistant_features_enabled = s.assistant_features_enabled;
    out.lock_assistant_features_enabled = s.lock_assistant_features_enabled;
    out.assistant_availability = s.assistant_availability;
    out.experiment_features_enabled = s.experiment_features_enabled;
    out.ai_settings = presentAiSettings(s.ai_settings as Record<string, unknown> | undefined, {
      hostedOffering: hosted(ctx.config),
      premium,
    });
  }
  return out;
}

export interface SharedWithGroup {
  group_id: number;
  group_name: string;
  group_full_path: string;
  group_access_level: number;
  expires_at: string | null;
}

export interface GroupDetailExtras {
  sharedWithGroups: SharedWithGroup[];
  /** Already presented project entries (at most 100 each), or undefined with with_projects=false. */
  projects?: unknown[];
  sharedProjects?: unknown[];
}

/** GroupDetail: one group, with sharing, owner-only fields and the EE settings. */
export function presentGroupDetail(g: GroupRow, st: GroupSettingsRow, ctx: GroupPresentCtx, extras: GroupDetailExtras) {
  const s = effectiveSettings(st.settings);
  const premium = tierAvailable(ctx.config, 'PU');
  const ultimate = tierAvailable(ctx.config, 'U');
  const owner = ctx.isAdmin || ctx.access >= 50;
  const out = presentGroup(g, st, ctx);
  out.shared_with_groups = extras.sharedWithGroups;
  if (owner) {
    out.runners_token = runnersToken(ctx.config, g.id);
    out.enabled_git_access_protocol = s.enabled_git_access_protocol;
  }
  if (g.parent_id === null) out.prevent_sharing_groups_outside_hierarchy = s.prevent_sharing_groups_outside_hierarchy;
  if (extras.projects) out.projects = extras.projects;
  if (extras.sharedProjects) out.shared_projects = extras.sharedProjects;
  out.ip_restriction_ranges = premium ? s.ip_restriction_ranges : null;
  out.only_allow_merge_if_pipeline_succeeds = s.only_allow_merge_if_pipeline_succeeds;
  out.allow_merge_on_skipped_pipeline = s.allow_merge_on_skipped_pipeline;
  out.only_allow_merge_if_all_discussions_are_resolved = s.only_allow_merge_if_all_discussions_are_resolved;
  out.require_sha_for_merge = s.require_sha_for_merge;
  out.lock_require_sha_for_merge = s.lock_require_sha_for_merge;
  out.allow_personal_snippets = s.allow_personal_snippets;
  if (premium) {
    out.shared_runners_minutes_limit = s.shared_runners_minutes_limit;
    out.extra_shared_runners_minutes_limit = s.extra_shared_runners_minutes_limit;
    out.prevent_forking_outside_group = s.prevent_forking_outside_group;
    out.membership_lock = s.membership_lock;
    out.allowed_email_domains_list = s.allowed_email_domains_list;
    out.built_in_project_templates_enabled = s.built_in_project_templates_enabled;
    out.lock_built_in_project_templates_enabled = s.lock_built_in_project_templates_enabled;
    out.ai_audit_events_storage_enabled = s.ai_audit_events_storage_enabled;
    out.lock_ai_audit_events_storage_enabled = s.lock_ai_audit_events_storage_enabled;
  }
  if (ultimate && owner && g.parent_id === null) {
    out.unique_project_download_limit = s.unique_project_download_limit;
    out.unique_project_download_limit_interval_in_seconds = s.unique_project_download_limit_interval_in_seconds;
    out.unique_project_download_limit_allowlist = s.unique_project_download_limit_allowlist;
    out.unique_project_download_limit_alertlist = s.unique_project_download_limit_alertlist;
    out.auto_ban_user_on_excessive_projects_download = s.auto_ban_user_on_excessive_projects_download;
  }
  if (hosted(ctx.config) && g.parent_id === null) out.web_based_commit_signing_enabled = s.web_based_commit_signing_enabled;
  out.step_up_auth_required_oauth_provider = s.step_up_auth_required_oauth_provider;
  return out;
}

/** `{id, web_url, name, avatar_url, full_name, full_path}` for transfer_locations. */
export function presentGroupLocation(g: GroupRow, base: string) {
  return {
    id: g.id,
    web_url: groupWebUrl(base, g),
    name: g.name,
    avatar_url: groupAvatarUrl(base, g),
    full_name: g.full_name,
    full_path: g.full_path,
  };
}

