// Project presenters named after GitLab's entities: Project (with `permissions`, as
// ProjectWithAccess) and BasicProjectDetails (`simple=true`). Field order follows GitLab.
// Presenters never query; the batch variant loads everything a list needs in a fixed number of
// queries.
import { storageSizes } from '../../../services/repository/repository-size.js';
import type { ExpressionBuilder, Kysely, SelectQueryBuilder } from 'kysely';
import { isPostgres, selectBatch } from '../../../db/batch.js';
import { prepared, type BoundStatement } from '../../../db/prepared.js';
import type { DB } from '../../../db/types.js';
import { findUsersByIds, type UserRow } from '../../../db/repositories/users.js';
import { AccessLevel, ancestorIds, canReadProject } from '../../../services/access.js';
import { canAdminIssues, canReadIssues } from '../../../services/issues/access.js';
import { todayUtc } from '../../../services/personal-access-tokens.js';
import { fullName, fullPath, type NamespaceRow, type ProjectRow } from '../../../services/projects/lookup.js';
import { canReadRepository } from '../../../services/repository/project-repo.js';
import { loadSharedWithGroups, sharedGroupsOf, type ProjectSharedWithGroup, type SharedGroupRow } from '../../../services/projects/share.js';
import { presentUserBasic } from './user.js';

/** GitLab's instance default branch name, shown for repositories that have no branch yet. */
export const INSTANCE_DEFAULT_BRANCH = 'main';

export interface AccessEntry {
  access_level: number;
  notification_level: number;
}

export interface ProjectPermissions {
  project_access: AccessEntry | null;
  group_access: AccessEntry | null;
}

export interface ProjectPresentCtx {
  base: string;
  /** The caller's effective access (used for `permissions` when `permissions` is not given). */
  access?: number;
  user?: UserRow | null;
  /** Exact membership split as GitLab reports it; see loadPermissions. */
  permissions?: ProjectPermissions;
  /** The owner of a personal namespace, shown as `owner`. */
  owner?: UserRow | null;
  /** Whether the caller may read the code (default: canReadRepository from `access`). */
  readCode?: boolean;
  /** Groups the project is shared with that the caller can see (loadSharedWithGroups). */
  sharedWithGroups?: ProjectSharedWithGroup[];
  /** The project it was forked from, when the caller may see it (loadForkedFrom). */
  forkedFrom?: ReturnType<typeof presentProjectSimple>;
  /** `statistics=true`: ProjectStatistics for callers who may read them (Reporter and up, administrators). */
  statistics?: boolean;
}

function bool(v: number | null | undefined): boolean {
  return v === 1;
}

function topics(row: ProjectRow): string[] {
  try {
    const v = JSON.parse(row.topics);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

// The base URL is the same on nearly every request: parse it once, not once per project presented.
let hostOf = { base: '', host: 'localhost' };

export function host(base: string): string {
  if (base === hostOf.base) return hostOf.host;
  let h = 'localhost';
  try {
    h = new URL(base).hostname;
  } catch {
    /* keep localhost */
  }
  hostOf = { base, host: h };
  return h;
}

export function namespaceWebUrl(base: string, ns: NamespaceRow): string {
  return ns.kind === 'group' ? `${base}/groups/${ns.full_path}` : `${base}/${ns.full_path}`;
}

/** NamespaceBasic as embedded in a project. */
export function presentProjectNamespace(ns: NamespaceRow, base: string, owner?: UserRow | null) {
  let avatar: string | null = null;
  if (ns.kind === 'user' && owner?.avatar_path) avatar = `${base}/uploads/-/system/user/avatar/${owner.id}/${owner.avatar_path}`;
  else if (ns.kind === 'group' && ns.avatar_path) avatar = `${base}/uploads/-/system/group/avatar/${ns.id}/${ns.avatar_path}`;
  return {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: ns.kind,
    full_path: ns.full_path,
    parent_id: ns.parent_id,
    avatar_url: avatar,
    web_url: namespaceWebUrl(base, ns),
  };
}

function projectAvatar(base: string, row: ProjectRow): string | null {
  return row.avatar_path ? `${base}/uploads/-/system/project/avatar/${row.id}/${row.avatar_path}` : null;
}

/** BasicProjectDetails: what `simple=true` lists and anonymous lists show. */
export function presentProjectSimple(row: ProjectRow, ns: NamespaceRow, ctx: { base: string; owner?: UserRow | null; readCode?: boolean }) {
  return simpleFields(row, ns, ctx, ctx.readCode !== false, true);
}

/** The BasicProjectDetails fields; the full entity moves `visibility` further down. */
function simpleFields(row: ProjectRow, ns: NamespaceRow, ctx: { base: string; owner?: UserRow | null }, code: boolean, withVisibility: boolean) {
  const path = fullPath(row, ns);
  const web = `${ctx.base}/${path}`;
  const branch = row.default_branch ?? INSTANCE_DEFAULT_BRANCH;
  // As GitLab: default_branch, readme_url and forks_count only for callers who may read the code.
  return {
    id: row.id,
    description: row.description,
    name: row.name,
    name_with_namespace: fullName(row, ns),
    path: row.path,
    path_with_namespace: path,
    created_at: row.created_at,
    ...(code ? { default_branch: branch } : {}),
    tag_list: topics(row),
    topics: topics(row),
    ssh_url_to_repo: `git@${host(ctx.base)}:${path}.git`,
    http_url_to_repo: `${web}.git`,
    web_url: web,
    // GITLAB-COMPAT: GitLab points at the README it finds in the tree; we point at README.md on
    // the default branch whenever the repository has a branch, without reading git.
    ...(code ? { readme_url: row.default_branch ? `${web}/-/blob/${row.default_branch}/README.md` : null, forks_count: row.forks_count } : {}),
    avatar_url: projectAvatar(ctx.base, row),
    star_count: row.star_count,
    last_activity_at: row.last_activity_at,
    ...(withVisibility ? { visibility: row.visibility } : {}),
    namespace: presentProjectNamespace(ns, ctx.base, ctx.owner),
  };
}

/** GitLab's `forked?`: a member of a fork network other than its root (also once its upstream is gone). */
export function isFork(row: Pick<ProjectRow, 'id' | 'fork_network_root_id'>): boolean {
  return row.fork_network_root_id !== null && row.fork_network_root_id !== row.id;
}

/**
 * The projects the given ones were forked from, as BasicProjectDetails, for those the caller may
 * read (GitLab's forked_from_project). Nothing is read when none of them is a fork.
 */
export async function loadForkedFrom(db: Kysely<DB>, user: UserRow | null | undefined, rows: ProjectRow[], base: string): Promise<Map<number, ReturnType<typeof presentProjectSimple>>> {
  const out = new Map<number, ReturnType<typeof presentProjectSimple>>();
  const ids = [...new Set(rows.flatMap((r) => (r.forked_from_project_id !== null ? [r.forked_from_project_id] : [])))];
  if (ids.length === 0) return out;
  const parents = await db.selectFrom('projects').selectAll().where('id', 'in', ids).execute();
  const namespaces = await loadNamespaces(db, parents);
  const owners = await loadOwners(db, namespaces.values());
  const items = parents.flatMap((project) => {
    const namespace = namespaces.get(project.namespace_id);
    return namespace ? [{ project, namespace }] : [];
  });
  const perms = await loadPermissions(db, user, items);
  const shown = new Map<number, ReturnType<typeof presentProjectSimple>>();
  for (const { project, namespace } of items) {
    const level = effectiveFrom(perms.get(project.id)!, user);
    if (!canReadProject(user ?? null, project, level)) continue;
    shown.set(project.id, presentProjectSimple(project, namespace, { base, owner: namespace.owner_id !== null ? owners.get(namespace.owner_id) ?? null : null, readCode: canReadRepository(project, user ?? null, level) }));
  }
  for (const r of rows) {
    const parent = r.forked_from_project_id !== null ? shown.get(r.forked_from_project_id) : undefined;
    if (parent) out.set(r.id, parent);
  }
  return out;
}

function permissionsFrom(ctx: ProjectPresentCtx, ns: NamespaceRow): ProjectPermissions {
  if (ctx.permissions) return ctx.permissions;
  const level = ctx.access ?? 0;
  if (level <= 0 || ctx.user?.is_admin) return { project_access: null, group_access: null };
  const entry = { access_level: level, notification_level: 3 };
  return ns.kind === 'group' ? { project_access: null, group_access: entry } : { project_access: entry, group_access: null };
}

function featureEnabled(level: string): boolean {
  return level !== 'disabled';
}

/**
 * Entities::ProjectWithAccess: the full project with the caller's `permissions`. Built by plain
 * property stores on the basic fields (not `{ ...basic, more }`, which is slow on Node 20).
 */
export function presentProject(row: ProjectRow, ns: NamespaceRow, ctx: ProjectPresentCtx) {
  const code = (ctx.readCode ?? canReadRepository(row, ctx.user ?? null, ctx.access ?? 0)) !== false;
  const o = simpleFields(row, ns, ctx, code, false) as ReturnType<typeof simpleFields> & Record<string, unknown>;
  const api = `${ctx.base}/api/v4/projects/${row.id}`;
  if (ctx.forkedFrom) o.forked_from_project = ctx.forkedFrom;
  o.container_registry_image_prefix = `${host(ctx.base)}/${o.path_with_namespace}`;
  o._links = {
    self: api,
    issues: `${api}/issues`,
    merge_requests: `${api}/merge_requests`,
    repo_branches: `${api}/repository/branches`,
    labels: `${api}/labels`,
    events: `${api}/events`,
    members: `${api}/members`,
    cluster_agents: `${api}/cluster_agents`,
  };
  o.packages_enabled = false;
  o.empty_repo = row.default_branch === null;
  o.archived = bool(row.archived);
  o.visibility = row.visibility;
  if (ns.kind === 'user' && ctx.owner) o.owner = presentUserBasic(ctx.owner, ctx);
  o.resolve_outdated_diff_discussions = bool(row.resolve_outdated_diff_discussions);
  o.repository_object_format = 'sha1';
  o.issues_enabled = featureEnabled(row.issues_access_level);
  o.merge_requests_enabled = featureEnabled(row.merge_requests_access_level);
  o.wiki_enabled = featureEnabled(row.wiki_access_level);
  o.jobs_enabled = featureEnabled(row.builds_access_level);
  o.snippets_enabled = featureEnabled(row.snippets_access_level);
  o.container_registry_enabled = false;
  o.service_desk_enabled = false;
  o.service_desk_address = null;
  o.can_create_merge_request_in = (ctx.access ?? 0) >= AccessLevel.DEVELOPER;
  o.issues_access_level = row.issues_access_level;
  o.repository_access_level = row.repository_access_level;
  o.merge_requests_access_level = row.merge_requests_access_level;
  o.forking_access_level = row.forking_access_level;
  o.wiki_access_level = row.wiki_access_level;
  o.builds_access_level = row.builds_access_level;
  o.snippets_access_level = row.snippets_access_level;
  o.pages_access_level = row.pages_access_level;
  o.analytics_access_level = 'enabled';
  o.container_registry_access_level = 'disabled';
  o.security_and_compliance_access_level = 'private';
  o.releases_access_level = 'enabled';
  o.environments_access_level = 'enabled';
  o.feature_flags_access_level = 'enabled';
  o.infrastructure_access_level = 'enabled';
  o.monitor_access_level = 'enabled';
  o.model_experiments_access_level = 'enabled';
  o.model_registry_access_level = 'enabled';
  o.emails_disabled = false;
  o.emails_enabled = true;
  o.shared_runners_enabled = false;
  o.lfs_enabled = bool(row.lfs_enabled);
  o.creator_id = row.creator_id;
  if (isFork(row)) o.mr_default_target_self = bool(row.mr_default_target_self);
  o.import_url = null;
  o.import_type = null;
  o.import_status = isFork(row) ? 'finished' : 'none';
  o.import_error = null;
  // GitLab shows it only to callers who may read the project's issues; confidential issues count
  // for those who may read them (Planners and up), as its OpenIssuesCountService.
  const access = ctx.access ?? 0;
  if (canReadIssues(ctx.user ?? null, { project: row, namespace: ns }, access)) {
    o.open_issues_count = canAdminIssues(ctx.user ?? null, access) ? row.open_issues_count : Math.max(0, row.open_issues_count - row.open_confidential_issues_count);
  }
  o.description_html = row.description ? escapeHtml(row.description) : '';
  o.updated_at = row.updated_at;
  o.ci_config_path = row.ci_config_path;
  o.public_jobs = true;
  o.shared_with_groups = ctx.sharedWithGroups ?? [];
  o.only_allow_merge_if_pipeline_succeeds = bool(row.only_allow_merge_if_pipeline_succeeds);
  o.allow_merge_on_skipped_pipeline = bool(row.allow_merge_on_skipped_pipeline);
  o.request_access_enabled = bool(row.request_access_enabled);
  o.only_allow_merge_if_all_discussions_are_resolved = bool(row.only_allow_merge_if_all_discussions_are_resolved);
  o.remove_source_branch_after_merge = bool(row.remove_source_branch_after_merge);
  o.printing_merge_request_link_enabled = bool(row.printing_merge_request_link_enabled);
  o.merge_method = row.merge_method;
  o.squash_option = row.squash_option;
  o.enforce_auth_checks_on_uploads = true;
  o.suggestion_commit_message = row.suggestion_commit_message;
  o.merge_commit_template = row.merge_commit_template;
  o.squash_commit_template = row.squash_commit_template;
  o.issue_branch_template = null;
  if (ctx.statistics && (ctx.user?.is_admin || (ctx.access ?? 0) >= AccessLevel.REPORTER)) o.statistics = projectStatistics(row);
  o.warn_about_potentially_unwanted_characters = true;
  o.autoclose_referenced_issues = true;
  o.permissions = permissionsFrom(ctx, ns);
  return o;
}

/** GitLab's ProjectStatistics: the default branch's commits, the storage sizes, no registry. */
function projectStatistics(row: ProjectRow) {
  return Object.assign({ commit_count: row.commit_count }, storageSizes({ repository: row.repository_size, wiki: row.wiki_size, snippets: row.snippets_size, uploads: row.uploads_size }), { container_registry_size: 0 });
}

function escapeHtml(s: string): string {
  return `<p>${s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')}</p>`;
}

const unexpired = (eb: ExpressionBuilder<DB, 'members'>, day: string) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', day)]);

const projectMemberships = prepared((db, userId: number, projectIds: readonly number[], day: string) =>
  db
    .selectFrom('members')
    .select(['source_type', 'source_id', 'access_level'])
    .where('source_type', '=', 'Project')
    .where('source_id', 'in', projectIds)
    .where('user_id', '=', userId)
    .where((eb) => unexpired(eb, day)),
);

const projectAndGroupMemberships = prepared((db, userId: number, projectIds: readonly number[], nsIds: readonly number[], day: string) =>
  db
    .selectFrom('members')
    .select(['source_type', 'source_id', 'access_level'])
    .where((eb) =>
      eb.or([
        eb.and([eb('source_type', '=', 'Project'), eb('source_id', 'in', projectIds), eb('user_id', '=', userId)]),
        eb.and([eb('source_type', '=', 'Namespace'), eb('source_id', 'in', nsIds), eb('user_id', '=', userId)]),
      ]),
    )
    .where((eb) => unexpired(eb, day)),
);

/**
 * The caller's memberships as GitLab splits them: `project_access` from a project membership (or
 * owning the personal namespace), `group_access` from the namespace and its ancestors. One query
 * for up to 500 projects (and 500 ancestor groups), two per 500 beyond.
 */
type MembershipRow = Awaited<ReturnType<typeof projectMemberships>>[number];

/** The groups whose memberships give access to these projects: their namespaces and ancestors. */
function groupSourceIds(items: Array<{ namespace: NamespaceRow }>): number[] {
  return [...new Set(items.flatMap((i) => (i.namespace.kind === 'group' ? ancestorIds(i.namespace) : [])))];
}

/** loadPermissions' one statement for up to 500 projects and 500 groups (run alone or in a batch). */
function membershipStatement(userId: number, projectIds: number[], nsIds: number[]) {
  return nsIds.length ? projectAndGroupMemberships.with(userId, projectIds, nsIds, todayUtc()) : projectMemberships.with(userId, projectIds, todayUtc());
}

/** `fetched`: the rows of `membershipStatement` for these items (at most 500 projects), when read already. */
export async function loadPermissions(
  db: Kysely<DB>,
  user: UserRow | null | undefined,
  items: Array<{ project: ProjectRow; namespace: NamespaceRow }>,
  fetched?: MembershipRow[],
): Promise<Map<number, ProjectPermissions>> {
  const out = new Map<number, ProjectPermissions>();
  for (const { project } of items) out.set(project.id, { project_access: null, group_access: null });
  if (!user || items.length === 0) return out;
  const projectIds = items.map((i) => i.project.id);
  const nsIds = groupSourceIds(items);
  const own = new Map<number, number>();
  const groupLevels = new Map<number, number>();
  const combined = projectIds.length <= 500 && nsIds.length <= 500;
  if (combined) {
    // The usual case (one page, or one project): both kinds of membership in one query. With
    // user_id inside each branch, each source is one probe of the (source_type, source_id,
    // user_id) index; with user_id outside, SQLite walked all of the caller's memberships
    // (thousands for a busy administrator) while the sources are at most a page and its ancestors.
    const rows = fetched ?? (await membershipStatement(user.id, projectIds, nsIds).run(db));
    for (const r of rows) (r.source_type === 'Project' ? own : groupLevels).set(r.source_id, r.access_level);
  }
  for (let i = 0; !combined && i < projectIds.length; i += 500) {
    const rows = await db
      .selectFrom('members')
      .select(['source_id', 'access_level'])
      .where('source_type', '=', 'Project')
      .where('source_id', 'in', projectIds.slice(i, i + 500))
      .where('user_id', '=', user.id)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', todayUtc())]))
      .execute();
    for (const r of rows) own.set(r.source_id, r.access_level);
  }
  for (let i = 0; !combined && i < nsIds.length; i += 500) {
    const rows = await db
      .selectFrom('members')
      .select(['source_id', 'access_level'])
      .where('source_type', '=', 'Namespace')
      .where('source_id', 'in', nsIds.slice(i, i + 500))
      .where('user_id', '=', user.id)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', todayUtc())]))
      .execute();
    for (const r of rows) groupLevels.set(r.source_id, r.access_level);
  }
  for (const { project, namespace } of items) {
    let projectLevel = own.get(project.id) ?? 0;
    if (namespace.kind === 'user' && namespace.owner_id === user.id) projectLevel = Math.max(projectLevel, AccessLevel.OWNER);
    let groupLevel = 0;
    if (namespace.kind === 'group') for (const id of ancestorIds(namespace)) groupLevel = Math.max(groupLevel, groupLevels.get(id) ?? 0);
    out.set(project.id, {
      project_access: projectLevel > 0 ? { access_level: projectLevel, notification_level: 3 } : null,
      group_access: groupLevel > 0 ? { access_level: groupLevel, notification_level: 3 } : null,
    });
  }
  return out;
}

/**
 * read_code for a project in a list, from the memberships loadPermissions saw. Sharing links are not
 * among them, and a signed-in caller sees a private project without a membership only through one,
 * so such a project counts as readable. GITLAB-COMPAT: a Guest-level share still shows
 * default_branch in lists; GET /projects/:id uses the exact level.
 */
function listReadCode(project: ProjectRow, user: UserRow | null | undefined, level: number): boolean {
  const assumed = level === 0 && user && project.visibility === 'private' ? AccessLevel.REPORTER : level;
  return canReadRepository(project, user ?? null, assumed);
}

function effectiveFrom(p: ProjectPermissions, user: UserRow | null | undefined): number {
  if (user?.is_admin) return AccessLevel.OWNER;
  return Math.max(p.project_access?.access_level ?? 0, p.group_access?.access_level ?? 0);
}

/** Loads namespaces (one query) for project rows; rows whose namespace vanished are dropped. */
export async function loadNamespaces(db: Kysely<DB>, rows: ProjectRow[]): Promise<Map<number, NamespaceRow>> {
  const ids = [...new Set(rows.map((r) => r.namespace_id))];
  const map = new Map<number, NamespaceRow>();
  for (let i = 0; i < ids.length; i += 500) {
    const found = await db.selectFrom('namespaces').selectAll().where('id', 'in', ids.slice(i, i + 500)).execute();
    for (const n of found) map.set(n.id, n);
  }
  return map;
}

/** Owners of personal namespaces, for `owner` and the namespace avatar (one query). */
async function loadOwners(db: Kysely<DB>, namespaces: Iterable<NamespaceRow>): Promise<Map<number, UserRow>> {
  const ids: number[] = [];
  for (const ns of namespaces) if (ns.kind === 'user' && ns.owner_id !== null) ids.push(ns.owner_id);
  return findUsersByIds(db, ids);
}

/** Presents a single project with its owner and exact permissions (three small queries; one statement on PostgreSQL). */
export async function presentProjectFor(
  db: Kysely<DB>,
  row: ProjectRow,
  ns: NamespaceRow,
  ctx: { base: string; user?: UserRow | null; access?: number; statistics?: boolean },
) {
  const items = [{ project: row, namespace: ns }];
  let perms: Map<number, ProjectPermissions>;
  let owners: Map<number, UserRow>;
  let shared: Map<number, ProjectSharedWithGroup[]>;
  if (isPostgres(db) && ctx.user) {
    // One round trip for the caller's memberships, the sharing links and the owner.
    const wave: Record<string, SelectQueryBuilder<DB, any, any> | BoundStatement<unknown>> = { // eslint-disable-line @typescript-eslint/no-explicit-any
      members: membershipStatement(ctx.user.id, [row.id], groupSourceIds(items)),
      shared: sharedGroupsOf.with([row.id]),
    };
    if (ns.kind === 'user' && ns.owner_id !== null) wave.owners = db.selectFrom('users').selectAll().where('id', '=', ns.owner_id);
    const rows = (await selectBatch(db, wave)) as Record<string, unknown[]>;
    perms = await loadPermissions(db, ctx.user, items, rows.members as MembershipRow[]);
    owners = new Map(((rows.owners ?? []) as UserRow[]).map((u) => [u.id, u]));
    shared = await loadSharedWithGroups(db, ctx.user, [row.id], rows.shared as SharedGroupRow[]);
  } else {
    perms = await loadPermissions(db, ctx.user, items);
    owners = await loadOwners(db, [ns]);
    shared = await loadSharedWithGroups(db, ctx.user, [row.id]);
  }
  const permissions = perms.get(row.id)!;
  const forkedFrom = (await loadForkedFrom(db, ctx.user, [row], ctx.base)).get(row.id);
  return presentProject(row, ns, Object.assign({}, ctx, {
    forkedFrom,
    permissions,
    access: ctx.access ?? effectiveFrom(permissions, ctx.user),
    owner: ns.owner_id !== null ? owners.get(ns.owner_id) ?? null : null,
    sharedWithGroups: shared.get(row.id),
  }));
}

/**
 * Presents a list of projects: namespaces, owners and permissions are loaded in a fixed number of
 * queries whatever the length of the list. `simple` gives BasicProjectDetails.
 */
export async function presentProjects(
  db: Kysely<DB>,
  rows: ProjectRow[],
  ctx: { base: string; user?: UserRow | null; simple?: boolean; statistics?: boolean },
) {
  const namespaces = await loadNamespaces(db, rows);
  const owners = await loadOwners(db, namespaces.values());
  const items = rows.flatMap((project) => {
    const namespace = namespaces.get(project.namespace_id);
    return namespace ? [{ project, namespace }] : [];
  });
  const perms = await loadPermissions(db, ctx.user, items);
  if (ctx.simple) {
    return items.map(({ project, namespace }) =>
      presentProjectSimple(project, namespace, {
        base: ctx.base,
        owner: namespace.owner_id !== null ? owners.get(namespace.owner_id) : null,
        readCode: listReadCode(project, ctx.user, effectiveFrom(perms.get(project.id)!, ctx.user)),
      }),
    );
  }
  const shared = await loadSharedWithGroups(db, ctx.user, items.map((i) => i.project.id));
  const forkedFrom = await loadForkedFrom(db, ctx.user, rows, ctx.base);
  return items.map(({ project, namespace }) => {
    const permissions = perms.get(project.id)!;
    return presentProject(project, namespace, {
      forkedFrom: forkedFrom.get(project.id),
      statistics: ctx.statistics,
      base: ctx.base,
      user: ctx.user,
      permissions,
      access: effectiveFrom(permissions, ctx.user),
      readCode: listReadCode(project, ctx.user, effectiveFrom(permissions, ctx.user)),
      owner: namespace.owner_id !== null ? owners.get(namespace.owner_id) ?? null : null,
      sharedWithGroups: shared.get(project.id),
    });
  });
}
