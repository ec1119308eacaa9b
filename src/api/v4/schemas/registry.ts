// What every route answers on success (2xx): a JSON body and its schema, no body, or a body that
// is not JSON. Keyed by `METHOD path`, the path as the route was registered (through
// src/http/route.ts `route(app, method, path, …)` under the /api/v4 prefix, or directly on the app
// for the OAuth provider, pages, health checks and git over HTTP).
//
// These schemas are NOT attached to the Fastify routes: fast-json-stringify would then shape our
// output (dropping fields, coercing types). They are a registry the tests check responses against
// (test/fuzz/schema-oracle.ts) and documentation can cite. A new route needs an entry here:
// test/fuzz/schema-registry.test.ts fails for any route the app registers without one.
import type { TSchema } from '@sinclair/typebox';
import { Arr, Bool, Message, Num, Str, dict, ifHas, obj } from './common.js';
import { ProjectHook, RetryWebhookEvent, WebHookLog } from './hooks.js';
import { Group, GroupDetail, GroupLocation, CustomAttribute } from './groups.js';
import {
  AwardEmoji,
  CommitStatus,
  Deployment,
  Environment,
  EnvironmentBasic,
  Label,
  MergeRef,
  MergeRequest,
  MergeRequestApprovals,
  MergeRequestBasic,
  MergeRequestBlock,
  MergeRequestChanges,
  MergeRequestDiff,
  MergeRequestListEntry,
  MergeRequestReviewer,
  Milestone,
  Note,
  Discussion,
  Pipeline,
  PipelineBasic,
  RebaseAccepted,
  TimeStats,
} from './merge-requests.js';
import {
  AuditEvent,
  AuthorizationServerMetadata,
  DeviceAuthorization,
  EmptyObject,
  Liveness,
  OAuthToken,
  OAuthTokenInfo,
  OAuthUserInfo,
  Readiness,
  Version,
} from './misc.js';
import { Event } from './events.js';
import { Snippet } from './snippets.js';
import { WikiAttachment, WikiPage, WikiPageListEntry } from './wikis.js';
import { Todo } from './todos.js';
import { MarkdownUploadAdmin, ProjectUpload } from './uploads.js';
import { Badge, BasicBadgeDetails } from './badges.js';
import { AccessRequester } from './users.js';
import { ResourceLabelEvent, ResourceMilestoneEvent, ResourceStateEvent } from './resource-events.js';
import { Issue, IssueLink, IssuesStatistics, RelatedIssue } from './issues.js';
import { Namespace, NamespaceExists } from './namespaces.js';
import { CiVariable } from './variables.js';
import { Project, ProjectGroupLink, ProjectOrSimple, UserStarsProject } from './projects.js';
import { BlameRange, Blob, Branch, ProtectedBranch, ProtectedTag, Commit, CommitNote, CommitRef, Contributor, Tag, Release, ReleaseLink, CommitDetail, CommitListEntry, Compare, Diff, FileCommit, RepositoryFile, TreeItem } from './repository.js';
import { Application, ApplicationWithSecret, DeployToken, DeployTokenWithToken, ImpersonationToken, ImpersonationTokenWithToken, PersonalAccessToken, PersonalAccessTokenWithToken, ResourceAccessToken, ResourceAccessTokenWithToken } from './tokens.js';
import { DeployKey, DeployKeysProject, DeployKeyWithProjects, DeployKeyWithUser } from './deploy-keys.js';
import { AnyUser, CurrentUser, EnterpriseUser, InventorySshKey, Member, SshKey, SshKeyWithUser, UserBasic, UserListEntry, UserWithAdmin } from './users.js';

export type ResponseSpec =
  /** A JSON body that must match `schema`. */
  | { kind: 'json'; schema: TSchema }
  /** No body (204, or 200 with nothing). */
  | { kind: 'empty' }
  /** A body that is not JSON (a file, an image, a diff as text, an HTML page, git's protocol). */
  | { kind: 'raw'; what: string };

const json = (schema: TSchema): ResponseSpec => ({ kind: 'json', schema });
const list = (schema: TSchema): ResponseSpec => ({ kind: 'json', schema: Arr(schema) });
const empty: ResponseSpec = { kind: 'empty' };
const raw = (what: string): ResponseSpec => ({ kind: 'raw', what });

/** A cherry-pick or revert: the new commit, or `{dry_run: "success"}` for a dry run. */
const CommitOrDryRun = ifHas(['dry_run'], obj({ dry_run: Str() }), Commit);

/** GET /oauth/discovery/keys: the public keys ID tokens are signed with. */
const Jwks = obj({ keys: Arr(obj({ kty: Str(), kid: Str(), e: Str(), n: Str(), use: Str(), alg: Str() })) });

/** A search result: one of the scope's entities (each checked where its own route is). */
const SearchResult = obj({});

const API = '/api/v4';

/** /api/v4 routes, paths without the prefix. */
const API_RESPONSES: Record<string, ResponseSpec> = {
  // users/routes.ts
  'GET /user': json(CurrentUser),
  'GET /users': list(UserListEntry),
  'GET /users/:id': json(AnyUser),
  'POST /users': json(UserWithAdmin),
  'PUT /users/:id': json(UserWithAdmin),
  'DELETE /users/:id': empty,
  'POST /users/:id/block': json(Bool()),
  'POST /users/:id/unblock': json(Bool()),

  // personal-access-tokens/routes.ts
  'POST /users/:user_id/personal_access_tokens': json(PersonalAccessTokenWithToken),
  'GET /users/:user_id/impersonation_tokens': list(ImpersonationToken),
  'POST /users/:user_id/impersonation_tokens': json(ImpersonationTokenWithToken),
  'GET /users/:user_id/impersonation_tokens/:impersonation_token_id': json(ImpersonationToken),
  'DELETE /users/:user_id/impersonation_tokens/:impersonation_token_id': empty,
  'POST /user/personal_access_tokens': json(PersonalAccessTokenWithToken),
  'GET /personal_access_tokens': list(PersonalAccessToken),
  'GET /personal_access_tokens/:id': json(PersonalAccessToken),
  'DELETE /personal_access_tokens/:id': empty,
  'POST /personal_access_tokens/:id/rotate': json(PersonalAccessTokenWithToken),

  // deploy-keys/routes.ts
  'GET /deploy_keys': list(DeployKeyWithProjects),
  'POST /deploy_keys': json(DeployKey),
  'GET /projects/:id/deploy_keys': list(DeployKeysProject),
  'GET /projects/:id/deploy_keys/:key_id': json(DeployKeysProject),
  'POST /projects/:id/deploy_keys': json(DeployKeysProject),
  'PUT /projects/:id/deploy_keys/:key_id': json(DeployKeysProject),
  'POST /projects/:id/deploy_keys/:key_id/enable': json(DeployKey),
  'DELETE /projects/:id/deploy_keys/:key_id': empty,
  'GET /users/:id/project_deploy_keys': list(DeployKey),

  // deploy-tokens/routes.ts
  'GET /deploy_tokens': list(DeployToken),
  'GET /projects/:id/deploy_tokens': list(DeployToken),
  'GET /projects/:id/deploy_tokens/:token_id': json(DeployToken),
  'POST /projects/:id/deploy_tokens': json(DeployTokenWithToken),
  'DELETE /projects/:id/deploy_tokens/:token_id': empty,
  'GET /groups/:id/deploy_tokens': list(DeployToken),
  'GET /groups/:id/deploy_tokens/:token_id': json(DeployToken),
  'POST /groups/:id/deploy_tokens': json(DeployTokenWithToken),
  'DELETE /groups/:id/deploy_tokens/:token_id': empty,

  // resource-events/routes.ts
  'GET /projects/:id/issues/:issue_iid/resource_label_events': list(ResourceLabelEvent),
  'GET /projects/:id/issues/:issue_iid/resource_label_events/:event_id': json(ResourceLabelEvent),
  'GET /projects/:id/merge_requests/:merge_request_iid/resource_label_events': list(ResourceLabelEvent),
  'GET /projects/:id/merge_requests/:merge_request_iid/resource_label_events/:event_id': json(ResourceLabelEvent),
  'GET /projects/:id/issues/:issue_iid/resource_state_events': list(ResourceStateEvent),
  'GET /projects/:id/issues/:issue_iid/resource_state_events/:event_id': json(ResourceStateEvent),
  'GET /projects/:id/merge_requests/:merge_request_iid/resource_state_events': list(ResourceStateEvent),
  'GET /projects/:id/merge_requests/:merge_request_iid/resource_state_events/:event_id': json(ResourceStateEvent),
  'GET /projects/:id/issues/:issue_iid/resource_milestone_events': list(ResourceMilestoneEvent),
  'GET /projects/:id/issues/:issue_iid/resource_milestone_events/:event_id': json(ResourceMilestoneEvent),
  'GET /projects/:id/merge_requests/:merge_request_iid/resource_milestone_events': list(ResourceMilestoneEvent),
  'GET /projects/:id/merge_requests/:merge_request_iid/resource_milestone_events/:event_id': json(ResourceMilestoneEvent),

  // snippets/routes.ts
  'GET /snippets': list(Snippet),
  'GET /snippets/public': list(Snippet),
  'GET /snippets/all': list(Snippet),
  'GET /snippets/:id': json(Snippet),
  'POST /snippets': json(Snippet),
  'PUT /snippets/:id': json(Snippet),
  'DELETE /snippets/:id': empty,
  'GET /snippets/:id/raw': raw('a file of the snippet'),
  'GET /snippets/:id/files/:ref/:file_path/raw': raw('a file of the snippet'),
  'GET /projects/:id/snippets': list(Snippet),
  'GET /projects/:id/snippets/:snippet_id': json(Snippet),
  'POST /projects/:id/snippets': json(Snippet),
  'PUT /projects/:id/snippets/:snippet_id': json(Snippet),
  'DELETE /projects/:id/snippets/:snippet_id': empty,
  'GET /projects/:id/snippets/:snippet_id/raw': raw('a file of the snippet'),
  'GET /projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw': raw('a file of the snippet'),

  // repository/blobs.ts
  'GET /projects/:id/languages': json(dict(Num())),

  // members/access-requests.ts
  ...Object.fromEntries(
    ['/projects/:id', '/groups/:id'].flatMap((prefix) => [
      [`GET ${prefix}/access_requests`, list(AccessRequester)],
      [`POST ${prefix}/access_requests`, json(AccessRequester)],
      [`PUT ${prefix}/access_requests/:user_id/approve`, json(Member)],
      [`DELETE ${prefix}/access_requests/:user_id`, empty],
    ]),
  ),

  // badges/routes.ts
  ...Object.fromEntries(
    ['/projects/:id', '/groups/:id'].flatMap((prefix) => [
      [`GET ${prefix}/badges`, list(Badge)],
      [`GET ${prefix}/badges/render`, json(BasicBadgeDetails)],
      [`GET ${prefix}/badges/:badge_id`, json(Badge)],
      [`POST ${prefix}/badges`, json(Badge)],
      [`PUT ${prefix}/badges/:badge_id`, json(Badge)],
      [`DELETE ${prefix}/badges/:badge_id`, empty],
    ]),
  ),

  // markdown/routes.ts
  'POST /markdown': json(obj({ html: Str() })),

  // uploads/routes.ts
  'POST /projects/:id/uploads': json(ProjectUpload),
  'GET /projects/:id/uploads': list(MarkdownUploadAdmin),
  'GET /projects/:id/uploads/:upload_id': raw('the uploaded file'),
  'GET /projects/:id/uploads/:secret/:filename': raw('the uploaded file'),
  'DELETE /projects/:id/uploads/:upload_id': empty,
  'DELETE /projects/:id/uploads/:secret/:filename': empty,

  // todos/routes.ts
  'GET /todos': list(Todo),
  'POST /todos/:id/mark_as_done': json(Todo),
  'POST /todos/mark_as_done': empty,
  'POST /projects/:id/issues/:issue_iid/todo': json(Todo),
  'POST /projects/:id/merge_requests/:merge_request_iid/todo': json(Todo),

  // wikis/routes.ts
  'GET /projects/:id/wikis': list(WikiPageListEntry),
  'GET /projects/:id/wikis/*': json(WikiPage),
  'POST /projects/:id/wikis': json(WikiPage),
  'PUT /projects/:id/wikis/*': json(WikiPage),
  'DELETE /projects/:id/wikis/*': empty,
  'POST /projects/:id/wikis/attachments': json(WikiAttachment),

  // events/routes.ts
  'GET /events': list(Event),
  'GET /users/:id/events': list(Event),
  'GET /projects/:id/events': list(Event),

  // environments/routes.ts
  'GET /projects/:id/environments': list(Environment),
  'POST /projects/:id/environments': json(Environment),
  'GET /projects/:id/environments/:environment_id': json(Environment),
  'PUT /projects/:id/environments/:environment_id': json(Environment),
  'DELETE /projects/:id/environments/:environment_id': empty,
  'POST /projects/:id/environments/:environment_id/stop': json(Environment),
  'POST /projects/:id/environments/stop_stale': json(Message),
  'DELETE /projects/:id/environments/review_apps': json(obj({ scheduled_entries: Arr(EnvironmentBasic), unprocessable_entries: Arr(EnvironmentBasic) })),

  // variables/routes.ts
  'GET /projects/:id/variables': list(CiVariable),
  'GET /projects/:id/variables/:key': json(CiVariable),
  'POST /projects/:id/variables': json(CiVariable),
  'PUT /projects/:id/variables/:key': json(CiVariable),
  'DELETE /projects/:id/variables/:key': empty,
  'GET /groups/:id/variables': list(CiVariable),
  'GET /groups/:id/variables/:key': json(CiVariable),
  'POST /groups/:id/variables': json(CiVariable),
  'PUT /groups/:id/variables/:key': json(CiVariable),
  'DELETE /groups/:id/variables/:key': empty,
  'GET /admin/ci/variables': list(CiVariable),
  'GET /admin/ci/variables/:key': json(CiVariable),
  'POST /admin/ci/variables': json(CiVariable),
  'PUT /admin/ci/variables/:key': json(CiVariable),
  'DELETE /admin/ci/variables/:key': empty,

  // keys/routes.ts
  'GET /user/keys': list(SshKey),
  'GET /user/keys/:key_id': json(SshKey),
  'POST /user/keys': json(SshKey),
  'DELETE /user/keys/:key_id': empty,
  'GET /users/:id/keys': list(SshKey),
  'GET /users/:id/keys/:key_id': json(SshKey),
  'POST /users/:id/keys': json(SshKey),
  'DELETE /users/:id/keys/:key_id': empty,
  'GET /keys': json(ifHas(['deploy_keys_projects'], DeployKeyWithUser, SshKeyWithUser)),
  'GET /keys/:id': json(SshKeyWithUser),

  // version/routes.ts
  'GET /version': json(Version),
  'GET /metadata': json(Version),

  // applications/routes.ts
  'POST /applications': json(ApplicationWithSecret),
  'GET /applications': list(Application),
  'DELETE /applications/:id': empty,
  'POST /applications/:id/renew-secret': json(ApplicationWithSecret),

  // audit-events/routes.ts
  'GET /audit_events': list(AuditEvent),
  'GET /audit_events/:id': json(AuditEvent),
  'GET /groups/:id/audit_events': list(AuditEvent),
  'GET /groups/:id/audit_events/:audit_event_id': json(AuditEvent),
  'GET /projects/:id/audit_events': list(AuditEvent),

  // access-tokens/routes.ts
  'POST /groups/:id/access_tokens': json(ResourceAccessTokenWithToken),
  'GET /groups/:id/access_tokens': list(ResourceAccessToken),
  'GET /groups/:id/access_tokens/:token_id': json(ResourceAccessToken),
  'DELETE /groups/:id/access_tokens/:token_id': empty,
  'POST /groups/:id/access_tokens/:token_id/rotate': json(ResourceAccessTokenWithToken),
  'POST /projects/:id/access_tokens': json(ResourceAccessTokenWithToken),
  'GET /projects/:id/access_tokens': list(ResourceAccessToken),
  'GET /projects/:id/access_tokens/:token_id': json(ResourceAccessToken),
  'DELETE /projects/:id/access_tokens/:token_id': empty,
  'POST /projects/:id/access_tokens/:token_id/rotate': json(ResourceAccessTokenWithToken),

  // groups/read.ts, write.ts, share.ts, projects.ts, extras.ts, enterprise.ts
  'GET /groups': list(Group),
  'GET /groups/:id': json(GroupDetail),
  'GET /groups/:id/subgroups': list(Group),
  'GET /groups/:id/descendant_groups': list(Group),
  'GET /groups/:id/transfer_locations': list(GroupLocation),
  'GET /groups/:id/groups/shared': list(Group),
  'POST /groups': json(GroupDetail),
  'PUT /groups/:id': json(GroupDetail),
  'DELETE /groups/:id': json(Message),
  'POST /groups/:id/archive': json(GroupDetail),
  'POST /groups/:id/unarchive': json(GroupDetail),
  'POST /groups/:id/transfer': json(GroupDetail),
  'POST /groups/:id/share': json(GroupDetail),
  'DELETE /groups/:id/share/:group_id': empty,
  'POST /groups/:id/projects/:project_id': json(Project),
  'GET /groups/:id/projects': list(ProjectOrSimple),
  'GET /groups/:id/projects/shared': list(ProjectOrSimple),
  'DELETE /groups/:id/shared_projects/:project_id': empty,
  'GET /groups/:id/avatar': raw('the avatar image'),
  'GET /groups/:id/custom_attributes': list(CustomAttribute),
  'GET /groups/:id/custom_attributes/:key': json(CustomAttribute),
  'PUT /groups/:id/custom_attributes/:key': json(CustomAttribute),
  'DELETE /groups/:id/custom_attributes/:key': empty,
  'POST /groups/:id/ldap_sync': empty,
  'GET /groups/:id/saml_users': list(EnterpriseUser),
  'GET /groups/:id/provisioned_users': list(EnterpriseUser),
  'GET /groups/:id/manage/personal_access_tokens': list(PersonalAccessToken),
  'GET /groups/:id/manage/resource_access_tokens': list(ResourceAccessToken),
  'GET /groups/:id/manage/ssh_keys': list(InventorySshKey),
  'DELETE /groups/:id/manage/personal_access_tokens/:token_id': empty,
  'DELETE /groups/:id/manage/resource_access_tokens/:token_id': empty,
  'DELETE /groups/:id/manage/ssh_keys/:key_id': empty,
  'POST /groups/:id/manage/personal_access_tokens/:token_id/rotate': json(PersonalAccessTokenWithToken),
  'POST /groups/:id/manage/resource_access_tokens/:token_id/rotate': json(ResourceAccessTokenWithToken),

  // members/routes.ts
  'GET /projects/:id/members': list(Member),
  'GET /projects/:id/members/all': list(Member),
  'GET /projects/:id/members/all/:user_id': json(Member),
  'GET /projects/:id/members/:user_id': json(Member),
  'POST /projects/:id/members': json(Member),
  'PUT /projects/:id/members/:user_id': json(Member),
  'DELETE /projects/:id/members/:user_id': empty,
  'GET /groups/:id/members': list(Member),
  'GET /groups/:id/members/all': list(Member),
  'GET /groups/:id/members/all/:user_id': json(Member),
  'GET /groups/:id/members/:user_id': json(Member),
  'POST /groups/:id/members': json(Member),
  'PUT /groups/:id/members/:user_id': json(Member),
  'DELETE /groups/:id/members/:user_id': empty,

  // namespaces/routes.ts
  'GET /namespaces': list(Namespace),
  'GET /namespaces/:id': json(Namespace),
  'GET /namespaces/:namespace/exists': json(NamespaceExists),

  // projects/*.ts
  'POST /projects': json(Project),
  'POST /projects/user/:user_id': json(Project),
  'GET /projects': list(ProjectOrSimple),
  'GET /projects/:id': json(Project),
  'PUT /projects/:id': json(Project),
  'DELETE /projects/:id': json(Message),
  'PUT /projects/:id/transfer': json(Project),
  'POST /projects/:id/transfer': json(Project),
  'POST /projects/:id/archive': json(Project),
  'POST /projects/:id/unarchive': json(Project),
  // projects/forks.ts
  'POST /projects/:id/fork': json(Project),
  'GET /projects/:id/forks': list(ProjectOrSimple),
  'POST /projects/:id/fork/:forked_from_id': json(Project),
  'DELETE /projects/:id/fork': empty,
  // projects/stars.ts
  'POST /projects/:id/star': json(Project),
  'POST /projects/:id/unstar': json(Project),
  'GET /projects/:id/starrers': list(UserStarsProject),
  'GET /users/:user_id/projects': list(ProjectOrSimple),
  'GET /users/:user_id/starred_projects': list(ProjectOrSimple),
  'POST /projects/:id/share': json(ProjectGroupLink),
  'DELETE /projects/:id/share/:group_id': empty,

  // repository/*.ts
  'GET /projects/:id/repository/branches': list(Branch),
  'POST /projects/:id/repository/branches': json(Branch),
  'GET /projects/:id/repository/branches/:branch': json(Branch),
  'HEAD /projects/:id/repository/branches/:branch': empty,
  'DELETE /projects/:id/repository/branches/:branch': empty,
  'PUT /projects/:id/repository/branches/:branch/protect': json(Branch),
  'PUT /projects/:id/repository/branches/:branch/unprotect': json(Branch),
  // releases/routes.ts
  'GET /projects/:id/releases': list(Release),
  'POST /projects/:id/releases': json(Release),
  'GET /projects/:id/releases/permalink/latest': raw('a redirect to the latest release (302)'),
  'GET /projects/:id/releases/permalink/latest/*': raw('a redirect under the latest release (302)'),
  'GET /projects/:id/releases/:tag_name': json(Release),
  'PUT /projects/:id/releases/:tag_name': json(Release),
  'DELETE /projects/:id/releases/:tag_name': json(Release),
  'GET /projects/:id/releases/:tag_name/downloads/*': raw('a redirect to the asset link (302)'),
  'GET /projects/:id/releases/:tag_name/assets/links': list(ReleaseLink),
  'POST /projects/:id/releases/:tag_name/assets/links': json(ReleaseLink),
  'GET /projects/:id/releases/:tag_name/assets/links/:link_id': json(ReleaseLink),
  'PUT /projects/:id/releases/:tag_name/assets/links/:link_id': json(ReleaseLink),
  'DELETE /projects/:id/releases/:tag_name/assets/links/:link_id': json(ReleaseLink),
  'GET /projects/:id/repository/archive': raw('the archive (application/octet-stream)'),
  'GET /projects/:id/repository/archive.:format': raw('the archive (application/octet-stream)'),
  'GET /projects/:id/repository/blobs/:sha': json(Blob),
  'GET /projects/:id/repository/blobs/:sha/raw': raw('the blob (text/plain or application/octet-stream)'),
  'GET /projects/:id/repository/merge_base': json(Commit),
  'GET /projects/:id/repository/commits/:sha/refs': list(CommitRef),
  'GET /projects/:id/repository/commits/:sha/merge_requests': list(MergeRequestBasic),
  'POST /projects/:id/repository/commits/:sha/cherry_pick': json(CommitOrDryRun),
  'POST /projects/:id/repository/commits/:sha/revert': json(CommitOrDryRun),
  'GET /projects/:id/repository/commits/:sha/comments': list(CommitNote),
  'POST /projects/:id/repository/commits/:sha/comments': json(CommitNote),
  'GET /projects/:id/repository/contributors': list(Contributor),
  // protected-refs/routes.ts
  'GET /projects/:id/hooks': list(ProjectHook),
  'POST /projects/:id/hooks': json(ProjectHook),
  'GET /projects/:id/hooks/:hook_id': json(ProjectHook),
  'PUT /projects/:id/hooks/:hook_id': json(ProjectHook),
  'DELETE /projects/:id/hooks/:hook_id': empty,
  'POST /projects/:id/hooks/:hook_id/test/:trigger': json(Message),
  'GET /projects/:id/hooks/:hook_id/events': list(WebHookLog),
  'POST /projects/:id/hooks/:hook_id/events/:hook_log_id/resend': json(RetryWebhookEvent),
  'PUT /projects/:id/hooks/:hook_id/url_variables/:key': empty,
  'DELETE /projects/:id/hooks/:hook_id/url_variables/:key': empty,
  'PUT /projects/:id/hooks/:hook_id/custom_headers/:key': empty,
  'DELETE /projects/:id/hooks/:hook_id/custom_headers/:key': empty,
  'GET /projects/:id/protected_branches': list(ProtectedBranch),
  'POST /projects/:id/protected_branches': json(ProtectedBranch),
  'GET /projects/:id/protected_branches/:name': json(ProtectedBranch),
  'PATCH /projects/:id/protected_branches/:name': json(ProtectedBranch),
  'DELETE /projects/:id/protected_branches/:name': empty,
  'GET /projects/:id/protected_tags': list(ProtectedTag),
  'POST /projects/:id/protected_tags': json(ProtectedTag),
  'GET /projects/:id/protected_tags/:name': json(ProtectedTag),
  'DELETE /projects/:id/protected_tags/:name': empty,
  'GET /projects/:id/repository/tags': list(Tag),
  'POST /projects/:id/repository/tags': json(Tag),
  'GET /projects/:id/repository/tags/:tag_name': json(Tag),
  'DELETE /projects/:id/repository/tags/:tag_name': empty,
  'DELETE /projects/:id/repository/merged_branches': json(Message),
  'GET /projects/:id/repository/commits': list(CommitListEntry),
  'POST /projects/:id/repository/commits': json(CommitDetail),
  'GET /projects/:id/repository/commits/:sha': json(CommitDetail),
  'GET /projects/:id/repository/commits/:sha/diff': list(Diff),
  'GET /projects/:id/repository/compare': json(Compare),
  'GET /projects/:id/repository/files/:file_path': json(RepositoryFile),
  'HEAD /projects/:id/repository/files/:file_path': empty,
  'POST /projects/:id/repository/files/:file_path': json(FileCommit),
  'PUT /projects/:id/repository/files/:file_path': json(FileCommit),
  'DELETE /projects/:id/repository/files/:file_path': empty,
  'GET /projects/:id/repository/files/:file_path/raw': raw('the file as stored'),
  'GET /projects/:id/repository/files/:file_path/blame': list(BlameRange),
  'GET /projects/:id/repository/tree': list(TreeItem),

  // statuses/routes.ts
  'POST /projects/:id/statuses/:sha': json(CommitStatus),
  'GET /projects/:id/repository/commits/:sha/statuses': list(CommitStatus),
  'GET /projects/:id/pipelines': list(PipelineBasic),
  'GET /projects/:id/pipelines/:pipeline_id': json(Pipeline),

  // deployments/routes.ts
  'GET /projects/:id/deployments': list(Deployment),
  'POST /projects/:id/deployments': json(Deployment),
  'GET /projects/:id/deployments/:deployment_id': json(Deployment),
  'PUT /projects/:id/deployments/:deployment_id': json(Deployment),
  'GET /projects/:id/deployments/:deployment_id/merge_requests': list(MergeRequestBasic),

  // labels/routes.ts
  'GET /projects/:id/labels': list(Label),
  'POST /projects/:id/labels': json(Label),
  'GET /projects/:id/labels/:label_id': json(Label),
  'PUT /projects/:id/labels/:label_id': json(Label),
  'DELETE /projects/:id/labels/:label_id': empty,
  'GET /groups/:id/labels': list(Label),
  'POST /groups/:id/labels': json(Label),
  'GET /groups/:id/labels/:label_id': json(Label),
  'PUT /groups/:id/labels/:label_id': json(Label),
  'DELETE /groups/:id/labels/:label_id': empty,

  // milestones/routes.ts
  'GET /projects/:id/milestones': list(Milestone),
  'POST /projects/:id/milestones': json(Milestone),
  'GET /projects/:id/milestones/:milestone_id': json(Milestone),
  'PUT /projects/:id/milestones/:milestone_id': json(Milestone),
  'DELETE /projects/:id/milestones/:milestone_id': empty,
  'GET /projects/:id/milestones/:milestone_id/merge_requests': list(MergeRequestBasic),
  'GET /groups/:id/milestones': list(Milestone),
  'POST /groups/:id/milestones': json(Milestone),
  'GET /groups/:id/milestones/:milestone_id': json(Milestone),
  'PUT /groups/:id/milestones/:milestone_id': json(Milestone),
  'DELETE /groups/:id/milestones/:milestone_id': empty,
  'GET /groups/:id/milestones/:milestone_id/merge_requests': list(MergeRequestBasic),
  'GET /projects/:id/milestones/:milestone_id/issues': list(Issue),
  'GET /groups/:id/milestones/:milestone_id/issues': list(Issue),

  // merge-requests/list-routes.ts, crud-routes.ts
  // search/routes.ts: lists of the scope's entity (Project, IssueBasic, MergeRequestBasic, Milestone, UserBasic, Note, CommitDetail, Blob)
  'GET /search': list(SearchResult),
  'GET /groups/:id/search': list(SearchResult),
  'GET /groups/:id/-/search': list(SearchResult),
  'GET /projects/:id/search': list(SearchResult),
  'GET /projects/:id/-/search': list(SearchResult),

  // issues/routes.ts, extra-routes.ts, link-routes.ts
  'GET /issues': list(Issue),
  'GET /issues_statistics': json(IssuesStatistics),
  'GET /issues/:id': json(Issue),
  'GET /groups/:id/issues': list(Issue),
  'GET /groups/:id/issues_statistics': json(IssuesStatistics),
  'GET /projects/:id/issues': list(Issue),
  'GET /projects/:id/issues_statistics': json(IssuesStatistics),
  'POST /projects/:id/issues': json(Issue),
  'GET /projects/:id/issues/:issue_iid': json(Issue),
  'PUT /projects/:id/issues/:issue_iid': json(Issue),
  'DELETE /projects/:id/issues/:issue_iid': empty,
  'GET /projects/:id/issues/:issue_iid/participants': list(UserBasic),
  'GET /projects/:id/issues/:issue_iid/closed_by': list(MergeRequestBasic),
  'GET /projects/:id/issues/:issue_iid/related_merge_requests': list(MergeRequestBasic),
  'POST /projects/:id/issues/:issue_iid/subscribe': json(Issue),
  'POST /projects/:id/issues/:issue_iid/unsubscribe': json(Issue),
  'POST /projects/:id/issues/:issue_iid/move': json(Issue),
  'POST /projects/:id/issues/:issue_iid/clone': json(Issue),
  'GET /projects/:id/merge_requests/:merge_request_iid/closes_issues': list(Issue),
  'GET /projects/:id/issues/:issue_iid/time_stats': json(TimeStats),
  'POST /projects/:id/issues/:issue_iid/time_estimate': json(TimeStats),
  'POST /projects/:id/issues/:issue_iid/reset_time_estimate': json(TimeStats),
  'POST /projects/:id/issues/:issue_iid/add_spent_time': json(TimeStats),
  'POST /projects/:id/issues/:issue_iid/reset_spent_time': json(TimeStats),
  'GET /projects/:id/issues/:issue_iid/award_emoji': list(AwardEmoji),
  'POST /projects/:id/issues/:issue_iid/award_emoji': json(AwardEmoji),
  'GET /projects/:id/issues/:issue_iid/award_emoji/:award_id': json(AwardEmoji),
  'DELETE /projects/:id/issues/:issue_iid/award_emoji/:award_id': empty,
  'GET /projects/:id/issues/:issue_iid/notes/:note_id/award_emoji': list(AwardEmoji),
  'POST /projects/:id/issues/:issue_iid/notes/:note_id/award_emoji': json(AwardEmoji),
  'GET /projects/:id/issues/:issue_iid/notes/:note_id/award_emoji/:award_id': json(AwardEmoji),
  'DELETE /projects/:id/issues/:issue_iid/notes/:note_id/award_emoji/:award_id': empty,
  'GET /projects/:id/issues/:issue_iid/notes': list(Note),
  'POST /projects/:id/issues/:issue_iid/notes': json(Note),
  'GET /projects/:id/issues/:issue_iid/notes/:note_id': json(Note),
  'PUT /projects/:id/issues/:issue_iid/notes/:note_id': json(Note),
  'DELETE /projects/:id/issues/:issue_iid/notes/:note_id': empty,
  'GET /projects/:id/issues/:issue_iid/discussions': list(Discussion),
  'POST /projects/:id/issues/:issue_iid/discussions': json(Discussion),
  'GET /projects/:id/issues/:issue_iid/discussions/:discussion_id': json(Discussion),
  'PUT /projects/:id/issues/:issue_iid/discussions/:discussion_id': json(Discussion),
  'GET /projects/:id/issues/:issue_iid/discussions/:discussion_id/notes': list(Note),
  'POST /projects/:id/issues/:issue_iid/discussions/:discussion_id/notes': json(Note),
  'GET /projects/:id/issues/:issue_iid/discussions/:discussion_id/notes/:note_id': json(Note),
  'PUT /projects/:id/issues/:issue_iid/discussions/:discussion_id/notes/:note_id': json(Note),
  'DELETE /projects/:id/issues/:issue_iid/discussions/:discussion_id/notes/:note_id': empty,
  'GET /projects/:id/issues/:issue_iid/links': list(RelatedIssue),
  'POST /projects/:id/issues/:issue_iid/links': json(IssueLink),
  'GET /projects/:id/issues/:issue_iid/links/:issue_link_id': json(IssueLink),
  'DELETE /projects/:id/issues/:issue_iid/links/:issue_link_id': json(IssueLink),

  'GET /merge_requests': list(MergeRequestListEntry),
  'GET /projects/:id/merge_requests': list(MergeRequestListEntry),
  'GET /groups/:id/merge_requests': list(MergeRequestListEntry),
  'POST /projects/:id/merge_requests': json(MergeRequest),
  'GET /projects/:id/merge_requests/:merge_request_iid': json(MergeRequest),
  'PUT /projects/:id/merge_requests/:merge_request_iid': json(MergeRequest),
  'DELETE /projects/:id/merge_requests/:merge_request_iid': empty,
  // merge-routes.ts
  'PUT /projects/:id/merge_requests/:merge_request_iid/merge': json(MergeRequest),
  'POST /projects/:id/merge_requests/:merge_request_iid/cancel_merge_when_pipeline_succeeds': json(MergeRequest),
  'PUT /projects/:id/merge_requests/:merge_request_iid/rebase': json(RebaseAccepted),
  'GET /projects/:id/merge_requests/:merge_request_iid/merge_ref': json(MergeRef),
  // diff-routes.ts
  'GET /projects/:id/merge_requests/:merge_request_iid/changes': json(MergeRequestChanges),
  'GET /projects/:id/merge_requests/:merge_request_iid/diffs': list(MergeRequestDiff),
  'GET /projects/:id/merge_requests/:merge_request_iid/raw_diffs': raw('the diff as text'),
  'GET /projects/:id/merge_requests/:merge_request_iid/commits': list(Commit),
  'GET /projects/:id/merge_requests/:merge_request_iid/participants': list(UserBasic),
  'GET /projects/:id/merge_requests/:merge_request_iid/reviewers': list(MergeRequestReviewer),
  // time-routes.ts
  'GET /projects/:id/merge_requests/:merge_request_iid/time_stats': json(TimeStats),
  'POST /projects/:id/merge_requests/:merge_request_iid/time_estimate': json(TimeStats),
  'POST /projects/:id/merge_requests/:merge_request_iid/reset_time_estimate': json(TimeStats),
  'POST /projects/:id/merge_requests/:merge_request_iid/add_spent_time': json(TimeStats),
  'POST /projects/:id/merge_requests/:merge_request_iid/reset_spent_time': json(TimeStats),
  // extra-routes.ts
  'GET /projects/:id/merge_requests/:merge_request_iid/approvals': json(MergeRequestApprovals),
  'POST /projects/:id/merge_requests/:merge_request_iid/approve': json(MergeRequestApprovals),
  'POST /projects/:id/merge_requests/:merge_request_iid/unapprove': json(MergeRequestApprovals),
  'GET /projects/:id/merge_requests/:merge_request_iid/award_emoji': list(AwardEmoji),
  'POST /projects/:id/merge_requests/:merge_request_iid/award_emoji': json(AwardEmoji),
  'DELETE /projects/:id/merge_requests/:merge_request_iid/award_emoji/:award_id': empty,
  'GET /projects/:id/merge_requests/:merge_request_iid/award_emoji/:award_id': json(AwardEmoji),
  'POST /projects/:id/merge_requests/:merge_request_iid/subscribe': json(MergeRequest),
  'POST /projects/:id/merge_requests/:merge_request_iid/unsubscribe': json(MergeRequest),
  'GET /projects/:id/merge_requests/:merge_request_iid/notes/:note_id/award_emoji': list(AwardEmoji),
  'POST /projects/:id/merge_requests/:merge_request_iid/notes/:note_id/award_emoji': json(AwardEmoji),
  'GET /projects/:id/merge_requests/:merge_request_iid/notes/:note_id/award_emoji/:award_id': json(AwardEmoji),
  'DELETE /projects/:id/merge_requests/:merge_request_iid/notes/:note_id/award_emoji/:award_id': empty,
  // note-routes.ts
  'GET /projects/:id/merge_requests/:merge_request_iid/notes': list(Note),
  'POST /projects/:id/merge_requests/:merge_request_iid/notes': json(Note),
  'GET /projects/:id/merge_requests/:merge_request_iid/notes/:note_id': json(Note),
  'PUT /projects/:id/merge_requests/:merge_request_iid/notes/:note_id': json(Note),
  'DELETE /projects/:id/merge_requests/:merge_request_iid/notes/:note_id': empty,
  'GET /projects/:id/merge_requests/:merge_request_iid/discussions': list(Discussion),
  'POST /projects/:id/merge_requests/:merge_request_iid/discussions': json(Discussion),
  'GET /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id': json(Discussion),
  'PUT /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id': json(Discussion),
  'GET /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id/notes': list(Note),
  'POST /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id/notes': json(Note),
  'GET /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id/notes/:note_id': json(Note),
  'PUT /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id/notes/:note_id': json(Note),
  'DELETE /projects/:id/merge_requests/:merge_request_iid/discussions/:discussion_id/notes/:note_id': empty,
  'GET /projects/:id/merge_requests/:merge_request_iid/blocks': list(MergeRequestBlock),
  'GET /projects/:id/merge_requests/:merge_request_iid/blockees': list(MergeRequestBlock),
  'POST /projects/:id/merge_requests/:merge_request_iid/blocks': json(MergeRequestBlock),
  'DELETE /projects/:id/merge_requests/:merge_request_iid/blocks/:block_id': empty,
  'GET /projects/:id/merge_requests/:merge_request_iid/pipelines': list(PipelineBasic),
  'POST /projects/:id/merge_requests/:merge_request_iid/pipelines': json(Pipeline),
};

/** Routes outside /api/v4, full paths. */
const OTHER_RESPONSES: Record<string, ResponseSpec> = {
  // app.ts
  'GET /-/health': raw('plain text'),
  'GET /-/liveness': json(Liveness),
  'GET /-/readiness': json(Readiness),
  'GET /-/labwright.css': raw('the stylesheet of the pages'),
  // groups/extras.ts (the avatar_url of a group)
  'GET /uploads/-/system/group/avatar/:id/:file': raw('the avatar image'),
  // uploads/routes.ts (the address of a project's Markdown upload)
  'GET /-/project/:id/uploads/:secret/:filename': raw('the uploaded file'),
  // http/web-addresses.ts: addresses under a project's full path, each depth of groups at one prefix
  'GET /-/git-http/*': raw("git's smart HTTP protocol"),
  'POST /-/git-http/*': raw("git's smart HTTP protocol"),
  'GET /-/web-archive/*': raw('the archive (application/octet-stream), or a redirect to sign in'),
  // oauth/*.ts
  'POST /oauth/token': json(OAuthToken),
  'GET /oauth/token/info': json(OAuthTokenInfo),
  'GET /oauth/userinfo': json(OAuthUserInfo),
  'POST /oauth/userinfo': json(OAuthUserInfo),
  'POST /oauth/revoke': json(EmptyObject),
  'POST /oauth/authorize_device': json(DeviceAuthorization),
  'OPTIONS /oauth/token': empty,
  'OPTIONS /oauth/revoke': empty,
  'OPTIONS /oauth/userinfo': empty,
  'GET /oauth/authorize': raw('the consent page (HTML)'),
  'POST /oauth/authorize': raw('the consent page again (HTML), or a redirect'),
  'GET /oauth/device': raw('the device page (HTML)'),
  'POST /oauth/device': raw('the device page (HTML)'),
  'POST /oauth/device/confirm': raw('the device page (HTML)'),
  'GET /.well-known/openid-configuration': json(AuthorizationServerMetadata),
  'GET /oauth/discovery/keys': json(Jwks),
  'GET /.well-known/oauth-authorization-server': json(AuthorizationServerMetadata),
  // web/*.ts
  'GET /users/sign_in': raw('the sign-in page (HTML)'),
  'POST /users/sign_in': raw('the sign-in page (HTML), or a redirect'),
  'POST /users/sign_out': raw('a redirect'),
  'GET /user_settings/applications': raw('the applications page (HTML)'),
  'POST /user_settings/applications': raw('the applications page (HTML)'),
  'POST /user_settings/applications/:id/renew_secret': raw('the applications page (HTML)'),
  'POST /user_settings/applications/:id/delete': raw('the applications page (HTML), or a redirect'),
};

/** Every entry, keyed by `METHOD /full/path` as registered. */
export const RESPONSES: Readonly<Record<string, ResponseSpec>> = Object.freeze({
  ...Object.fromEntries(Object.entries(API_RESPONSES).map(([k, v]) => {
    const [method, path] = k.split(' ');
    return [`${method} ${API}${path}`, v];
  })),
  ...OTHER_RESPONSES,
});

/** `GET /a/:x/b` and `GET /a/:y/b` are the same route to Fastify. */
function shape(key: string): string {
  return key.replace(/:[A-Za-z0-9_]+/g, ':');
}

const BY_SHAPE = new Map(Object.entries(RESPONSES).map(([k, v]) => [shape(k), v]));

/**
 * The response of `method path` (path as Fastify knows it; parameter names may differ from the
 * entry's: `/users/:id/…` and `/users/:user_id/…` share one node), or undefined when the route
 * has no entry.
 */
export function responseFor(method: string, path: string): ResponseSpec | undefined {
  const key = `${method.toUpperCase()} ${path}`;
  const found = BY_SHAPE.get(shape(key));
  if (found) return found;
  return undefined;
}

/** The schema of a JSON answer, for documentation: undefined for routes without a JSON body. */
export function responseSchema(method: string, path: string): TSchema | undefined {
  const r = responseFor(method, path);
  return r?.kind === 'json' ? r.schema : undefined;
}

