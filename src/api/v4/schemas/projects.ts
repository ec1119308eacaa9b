// Projects (entities/project.ts): BasicProjectDetails (simple=true, anonymous lists) and
// ProjectWithAccess, the NamespaceBasic they embed, and project sharing links.
import { Arr, Bool, Int, NInt, NStr, Str, ifHas, nullable, obj, optional, Time, NDay } from './common.js';
import { UserBasic } from './users.js';
import { storageSizeProps } from './groups.js';

/** NamespaceBasic's fields; the namespaces API's entity starts with them too. */
export const namespaceBasicProps = {
  id: Int(),
  name: Str(),
  path: Str(),
  kind: Str(),
  full_path: Str(),
  parent_id: NInt(),
  avatar_url: NStr(),
  web_url: Str(),
};

export const NamespaceBasic = obj(namespaceBasicProps, { title: 'NamespaceBasic' });

const simpleProps = {
  id: Int(),
  description: NStr(),
  name: Str(),
  name_with_namespace: Str(),
  path: Str(),
  path_with_namespace: Str(),
  created_at: Time(),
  tag_list: Arr(Str()),
  topics: Arr(Str()),
  ssh_url_to_repo: Str(),
  http_url_to_repo: Str(),
  web_url: Str(),
  avatar_url: NStr(),
  star_count: Int(),
  last_activity_at: Time(),
  visibility: Str(),
  namespace: NamespaceBasic,
  // Only for callers who may read the code.
  ...optional({ default_branch: Str(), readme_url: NStr(), forks_count: Int() }),
};

/** BasicProjectDetails. */
export const ProjectSimple = obj(simpleProps, { title: 'ProjectSimple' });

const AccessEntry = obj({ access_level: Int(), notification_level: Int() });

export const ProjectSharedWithGroup = obj(
  { group_id: Int(), group_name: Str(), group_full_path: Str(), group_access_level: Int(), expires_at: NDay() },
  { title: 'ProjectSharedWithGroup' },
);

const accessLevels = [
  'issues_access_level',
  'repository_access_level',
  'merge_requests_access_level',
  'forking_access_level',
  'wiki_access_level',
  'builds_access_level',
  'snippets_access_level',
  'pages_access_level',
  'analytics_access_level',
  'container_registry_access_level',
  'security_and_compliance_access_level',
  'releases_access_level',
  'environments_access_level',
  'feature_flags_access_level',
  'infrastructure_access_level',
  'monitor_access_level',
  'model_experiments_access_level',
  'model_registry_access_level',
] as const;

/** Entities::ProjectWithAccess. */
export const Project = obj(
  {
    ...simpleProps,
    ...optional({ forked_from_project: ProjectSimple }),
    container_registry_image_prefix: Str(),
    _links: obj({
      self: Str(),
      issues: Str(),
      merge_requests: Str(),
      repo_branches: Str(),
      labels: Str(),
      events: Str(),
      members: Str(),
      cluster_agents: Str(),
    }),
    packages_enabled: Bool(),
    empty_repo: Bool(),
    archived: Bool(),
    ...optional({ owner: UserBasic }),
    resolve_outdated_diff_discussions: Bool(),
    repository_object_format: Str(),
    issues_enabled: Bool(),
    merge_requests_enabled: Bool(),
    wiki_enabled: Bool(),
    jobs_enabled: Bool(),
    snippets_enabled: Bool(),
    container_registry_enabled: Bool(),
    service_desk_enabled: Bool(),
    service_desk_address: NStr(),
    can_create_merge_request_in: Bool(),
    ...Object.fromEntries(accessLevels.map((k) => [k, Str()])),
    emails_disabled: Bool(),
    emails_enabled: Bool(),
    shared_runners_enabled: Bool(),
    lfs_enabled: Bool(),
    creator_id: NInt(),
    ...optional({ mr_default_target_self: Bool() }),
    import_url: NStr(),
    import_type: NStr(),
    import_status: Str(),
    import_error: NStr(),
    // When the caller may read the project's issues.
    ...optional({ open_issues_count: Int() }),
    description_html: Str(),
    updated_at: Time(),
    ci_config_path: NStr(),
    public_jobs: Bool(),
    shared_with_groups: Arr(ProjectSharedWithGroup),
    only_allow_merge_if_pipeline_succeeds: Bool(),
    allow_merge_on_skipped_pipeline: Bool(),
    request_access_enabled: Bool(),
    only_allow_merge_if_all_discussions_are_resolved: Bool(),
    remove_source_branch_after_merge: Bool(),
    printing_merge_request_link_enabled: Bool(),
    merge_method: Str(),
    squash_option: Str(),
    enforce_auth_checks_on_uploads: Bool(),
    suggestion_commit_message: NStr(),
    merge_commit_template: NStr(),
    squash_commit_template: NStr(),
    issue_branch_template: NStr(),
    ...optional({
      statistics: obj({ commit_count: Int(), ...storageSizeProps, container_registry_size: Int() }),
    }),
    warn_about_potentially_unwanted_characters: Bool(),
    autoclose_referenced_issues: Bool(),
    permissions: obj({ project_access: nullable(AccessEntry), group_access: nullable(AccessEntry) }),
  },
  { title: 'Project' },
);

/** A list entry that is the full project, or BasicProjectDetails for simple=true and anonymous callers. */
export const ProjectOrSimple = ifHas(['permissions'], Project, ProjectSimple);

/** POST /projects/:id/share */
export const ProjectGroupLink = obj(
  { id: Int(), project_id: Int(), group_id: Int(), group_access: Int(), expires_at: NDay() },
  { title: 'ProjectGroupLink' },
);

/** UserStarsProject: a starrer of a project. */
export const UserStarsProject = obj({ starred_since: Time(), user: UserBasic }, { title: 'UserStarsProject' });
