// Groups (entities/group.ts): Group (lists) and GroupDetail (one group). The §4.4 settings take
// their types from the setting kinds of services/groups/settings.ts, so a stored value of the
// wrong type (an integer setting kept as a string) fails the check.
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { SETTINGS, type SettingSpec } from '../../../services/groups/settings.js';
import { Arr, Bool, Int, NInt, NStr, Str, Any, dict, nullable, obj, oneOfStrings, optional, Time, NDay } from './common.js';
import { ProjectOrSimple } from './projects.js';

function settingType(s: SettingSpec): TSchema {
  switch (s.kind) {
    case 'bool':
      return Bool();
    case 'nbool':
      return nullable(Bool());
    case 'int':
      return Int();
    case 'nint':
      return NInt();
    case 'string':
      return Str();
    case 'nstring':
      return NStr();
    case 'enum':
      return oneOfStrings(s.values ?? []);
    case 'strings':
      return Arr(Str());
    case 'ints':
      return Arr(Int());
    case 'hash':
      return Type.Object({}, { additionalProperties: true });
  }
}

function settings(keys: string[]): TProperties {
  const out: TProperties = {};
  for (const key of keys) {
    const spec = SETTINGS.find((s) => s.key === key);
    if (!spec) throw new Error(`group schema: unknown setting ${key}`);
    out[key] = settingType(spec);
  }
  return out;
}

/** The storage sizes of group and project statistics (storageSizes). */
export const storageSizeProps = {
  storage_size: Int(),
  repository_size: Int(),
  wiki_size: Int(),
  lfs_objects_size: Int(),
  job_artifacts_size: Int(),
  pipeline_artifacts_size: Int(),
  packages_size: Int(),
  snippets_size: Int(),
  uploads_size: Int(),
};

export const GroupStatistics = obj(storageSizeProps, { title: 'GroupStatistics' });

export const CustomAttribute = obj({ key: Str(), value: Str() }, { title: 'CustomAttribute' });

const groupProps = {
  id: Int(),
  web_url: Str(),
  name: Str(),
  path: Str(),
  description: Str(),
  visibility: Str(),
  ...settings([
    'share_with_group_lock',
    'require_two_factor_authentication',
    'two_factor_grace_period',
    'project_creation_level',
    'auto_devops_enabled',
    'subgroup_creation_level',
  ]),
  emails_disabled: Bool(),
  ...settings([
    'emails_enabled',
    'mentions_disabled',
    'lfs_enabled',
    'math_rendering_limits_enabled',
    'lock_math_rendering_limits_enabled',
    'default_branch',
    'default_branch_protection',
    'default_branch_protection_defaults',
  ]),
  avatar_url: NStr(),
  ...settings(['request_access_enabled']),
  full_name: Str(),
  full_path: Str(),
  created_at: Time(),
  parent_id: NInt(),
  organization_id: Int(),
  ...settings(['shared_runners_setting', 'max_artifacts_size']),
  archived: Bool(),
  ...optional({
    custom_attributes: Arr(CustomAttribute),
    statistics: GroupStatistics,
    root_storage_statistics: dict(Type.Union([Int(), Bool()])),
    // Premium and Ultimate.
    ldap_cn: NStr(),
    ldap_access: NInt(),
    marked_for_deletion_on: NDay(),
    repository_storage: Str(),
    ai_settings: dict(Any()),
    ...settings([
      'wiki_access_level',
      'file_template_project_id',
      'assistant_features_enabled',
      'lock_assistant_features_enabled',
      'assistant_availability',
      'experiment_features_enabled',
    ]),
  }),
};

/** Group: a list entry. */
export const Group = obj(groupProps, { title: 'Group' });

export const SharedWithGroup = obj(
  { group_id: Int(), group_name: Str(), group_full_path: Str(), group_access_level: Int(), expires_at: NDay() },
  { title: 'SharedWithGroup' },
);

/** GroupDetail: one group. */
export const GroupDetail = obj(
  {
    ...groupProps,
    shared_with_groups: Arr(SharedWithGroup),
    ip_restriction_ranges: NStr(),
    ...settings([
      'only_allow_merge_if_pipeline_succeeds',
      'allow_merge_on_skipped_pipeline',
      'only_allow_merge_if_all_discussions_are_resolved',
      'require_sha_for_merge',
      'lock_require_sha_for_merge',
      'allow_personal_snippets',
      'step_up_auth_required_oauth_provider',
    ]),
    ...optional({
      runners_token: Str(),
      projects: Arr(ProjectOrSimple),
      shared_projects: Arr(ProjectOrSimple),
      ...settings([
        'enabled_git_access_protocol',
        'prevent_sharing_groups_outside_hierarchy',
        'shared_runners_minutes_limit',
        'extra_shared_runners_minutes_limit',
        'prevent_forking_outside_group',
        'membership_lock',
        'allowed_email_domains_list',
        'built_in_project_templates_enabled',
        'lock_built_in_project_templates_enabled',
        'ai_audit_events_storage_enabled',
        'lock_ai_audit_events_storage_enabled',
        'unique_project_download_limit',
        'unique_project_download_limit_interval_in_seconds',
        'unique_project_download_limit_allowlist',
        'unique_project_download_limit_alertlist',
        'auto_ban_user_on_excessive_projects_download',
        'web_based_commit_signing_enabled',
      ]),
    }),
  },
  { title: 'GroupDetail' },
);

/** GET /groups/:id/transfer_locations entries. */
export const GroupLocation = obj(
  { id: Int(), web_url: Str(), name: Str(), avatar_url: NStr(), full_name: Str(), full_path: Str() },
  { title: 'GroupLocation' },
);
