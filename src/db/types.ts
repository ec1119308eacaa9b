// The database interface Kysely checks queries against. Each module adds its tables here.
import type {
  MembersTable,
  NamespacesTable,
  OauthAccessGrantsTable,
  OauthAccessTokensTable,
  OauthApplicationsTable,
  PersonalAccessTokensTable,
  RedirectRoutesTable,
  RoutesTable,
  UsersTable,
} from './tables/core.js';
import type { OauthDeviceGrantsTable, WebSessionsTable, WebThrottlesTable } from './tables/oauth.js';
import type {
  AuditEventsTable,
  GroupGroupLinksTable,
  GroupSettingsTable,
  NamespaceCustomAttributesTable,
  ResourceAccessBotsTable,
  ScimIdentitiesTable,
  SshKeysTable,
  UserGroupProvisionsTable,
  UserIdentitiesTable,
} from './tables/groups.js';
import type { ProjectsTable, UsersStarProjectsTable } from './tables/projects.js';
import type { ProjectGroupLinksTable } from './tables/project-group-links.js';
import type * as MR from './tables/merge-requests.js';
import type * as Releases from './tables/releases.js';
import type * as ProtectedRefs from './tables/protected-refs.js';
import type * as WebHooks from './tables/web-hooks.js';
import type { CiVariablesTable } from './tables/ci-variables.js';
import type { DeployTokensTable } from './tables/deploy-tokens.js';
import type { DeployKeysProjectsTable, DeployKeysTable } from './tables/deploy-keys.js';
import type { EventsTable } from './tables/events.js';
import type { SnippetsTable } from './tables/snippets.js';
import type { WikiPageMetaTable } from './tables/wikis.js';
import type { TodosTable } from './tables/todos.js';
import type { UploadsTable } from './tables/uploads.js';
import type { BadgesTable } from './tables/badges.js';
import type { AccessRequestsTable } from './tables/access-requests.js';
import type { ResourceEventsTable } from './tables/resource-events.js';
import type { EnvironmentsTable } from './tables/environments.js';
import type * as Issues from './tables/issues.js';

export interface DB {
  users: UsersTable;
  namespaces: NamespacesTable;
  routes: RoutesTable;
  redirect_routes: RedirectRoutesTable;
  members: MembersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  oauth_applications: OauthApplicationsTable;
  oauth_access_grants: OauthAccessGrantsTable;
  oauth_access_tokens: OauthAccessTokensTable;
  oauth_device_grants: OauthDeviceGrantsTable;
  web_sessions: WebSessionsTable;
  web_throttles: WebThrottlesTable;
  projects: ProjectsTable;
  group_settings: GroupSettingsTable;
  group_group_links: GroupGroupLinksTable;
  namespace_custom_attributes: NamespaceCustomAttributesTable;
  audit_events: AuditEventsTable;
  ssh_keys: SshKeysTable;
  resource_access_bots: ResourceAccessBotsTable;
  user_group_provisions: UserGroupProvisionsTable;
  user_identities: UserIdentitiesTable;
  scim_identities: ScimIdentitiesTable;
  merge_requests: MR.MergeRequestsTable;
  merge_request_assignees: MR.MergeRequestAssigneesTable;
  merge_request_reviewers: MR.MergeRequestReviewersTable;
  labels: MR.LabelsTable;
  merge_request_labels: MR.MergeRequestLabelsTable;
  milestones: MR.MilestonesTable;
  merge_request_approvals: MR.MergeRequestApprovalsTable;
  award_emoji: MR.AwardEmojiTable;
  notes: MR.NotesTable;
  subscriptions: MR.SubscriptionsTable;
  releases: Releases.ReleasesTable;
  release_links: Releases.ReleaseLinksTable;
  release_milestones: Releases.ReleaseMilestonesTable;
  protected_refs: ProtectedRefs.ProtectedRefsTable;
  protected_ref_access_levels: ProtectedRefs.ProtectedRefAccessLevelsTable;
  merge_request_blocks: MR.MergeRequestBlocksTable;
  ci_pipelines: MR.CiPipelinesTable;
  commit_statuses: MR.CommitStatusesTable;
  deployments: MR.DeploymentsTable;
  deployment_merge_requests: MR.DeploymentMergeRequestsTable;
  spam_logs: MR.SpamLogsTable;
  project_group_links: ProjectGroupLinksTable;
  web_hooks: WebHooks.WebHooksTable;
  web_hook_logs: WebHooks.WebHookLogsTable;
  users_star_projects: UsersStarProjectsTable;
  issues: Issues.IssuesTable;
  issue_assignees: Issues.IssueAssigneesTable;
  issue_labels: Issues.IssueLabelsTable;
  merge_requests_closing_issues: Issues.MergeRequestsClosingIssuesTable;
  issue_links: Issues.IssueLinksTable;
  ci_variables: CiVariablesTable;
  deploy_tokens: DeployTokensTable;
  deploy_keys: DeployKeysTable;
  deploy_keys_projects: DeployKeysProjectsTable;
  events: EventsTable;
  snippets: SnippetsTable;
  wiki_page_meta: WikiPageMetaTable;
  todos: TodosTable;
  uploads: UploadsTable;
  badges: BadgesTable;
  access_requests: AccessRequestsTable;
  resource_events: ResourceEventsTable;
  environments: EnvironmentsTable;
}
