// Finding a project from `:id` and deciding what the caller may do with it. Every project route
// (projects, repository, merge requests, git over HTTP) goes through findProject, so the 404/403
// rules of visibility live in one place.
import { join } from 'node:path';
import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/types.js';
import { isPostgres, selectBatch } from '../../db/batch.js';
import { prepared, type BoundStatement } from '../../db/prepared.js';
import type { ProjectsTable } from '../../db/tables/projects.js';
import type { NamespacesTable } from '../../db/tables/core.js';
import type { UserRow } from '../../db/repositories/users.js';
import { ApiError, forbidden, notFound, unauthorized } from '../../http/errors.js';
import { resolveId } from '../../http/ids.js';
import type { Ctx } from '../../http/route.js';
import { AccessLevel, canReadProject, projectAccess } from '../access.js';

export type ProjectRow = Selectable<ProjectsTable>;
export type NamespaceRow = Selectable<NamespacesTable>;

export interface FoundProject {
  project: ProjectRow;
  namespace: NamespaceRow;
  /**
   * The caller's effective access level: membership (own, inherited, personal-namespace owner),
   * or Owner for administrators; 0 for anonymous callers and non-members.
   */
  access: number;
}

/** `group/sub/project`: the namespace's full path and the project's path. */
export function fullPath(project: Pick<ProjectRow, 'path'>, namespace: Pick<NamespaceRow, 'full_path'>): string {
  return `${namespace.full_path}/${project.path}`;
}

/** `Group / Sub / Project`: the namespace's full name and the project's name. */
export function fullName(project: Pick<ProjectRow, 'name'>, namespace: Pick<NamespaceRow, 'full_name'>): string {
  return `${namespace.full_name} / ${project.name}`;
}

/**
 * The bare repository of a project. Named by id, so renames and transfers never move directories.
 */
export function repoPathFor(app: AppContext, projectId: number): string {
  return join(app.reposDir, `${projectId}.git`);
}

/** Projects by id and their namespaces, as two queries (one round trip on PostgreSQL). */
export function projectQueries(db: Kysely<DB>, ids: number[]) {
  return {
    projects: db.selectFrom('projects').selectAll().where('id', 'in', ids),
    namespaces: db.selectFrom('namespaces').selectAll().where('id', 'in', db.selectFrom('projects').select('namespace_id').where('id', 'in', ids)),
  };
}

/** Pairs projects with their namespaces; a project whose namespace is missing is left out. */
export function joinProjects(projects: ProjectRow[], namespaces: NamespaceRow[]): Map<number, { project: ProjectRow; namespace: NamespaceRow }> {
  const out = new Map<number, { project: ProjectRow; namespace: NamespaceRow }>();
  const nsById = new Map(namespaces.map((n) => [n.id, n]));
  for (const p of projects) {
    const ns = nsById.get(p.namespace_id);
    if (ns) out.set(p.id, { project: p, namespace: ns });
  }
  return out;
}

export async function loadProjectById(db: Kysely<DB>, id: number): Promise<{ project: ProjectRow; namespace: NamespaceRow } | null> {
  if (isPostgres(db)) {
    const { projects, namespaces } = await selectBatch(db, projectQueries(db, [id]));
    return joinProjects(projects, namespaces).get(id) ?? null;
  }
  // SQLite: two point lookups, the second skipped when there is no project.
  const [project] = await projectById(db, id);
  if (!project) return null;
  const [namespace] = await namespaceById(db, project.namespace_id);
  if (!namespace) return null;
  return { project, namespace };
}

const projectById = prepared((db, id: number) => db.selectFrom('projects').selectAll().where('id', '=', id));
const namespaceById = prepared((db, id: number) => db.selectFrom('namespaces').selectAll().where('id', '=', id));

/** Effective access: administrators act as Owner everywhere (GitLab with admin mode on). */
export async function effectiveAccess(db: Kysely<DB>, user: UserRow | null, project: ProjectRow, namespace: NamespaceRow): Promise<number> {
  if (!user) return 0;
  if (user.is_admin) return AccessLevel.OWNER;
  return projectAccess(db, user, project, namespace);
}

async function canReadRedirected(c: Ctx, rawId: string): Promise<boolean> {
  const redirect = await c.app.db
    .selectFrom('redirect_routes')
    .select('source_id')
    .where('source_type', '=', 'Project')
    .where('path_lower', '=', rawId.toLowerCase())
    .executeTakeFirst();
  const found = redirect ? await loadProjectById(c.app.db, redirect.source_id) : null;
  if (!found) return false;
  const access = await effectiveAccess(c.app.db, c.user, found.project, found.namespace);
  return canReadProject(c.user, found.project, access);
}

/**
 * Resolves `:id` (numeric id or URL-encoded full path; old paths: GET → 301, other methods → 405)
 * and checks that the caller may see the project (404 `Project Not Found` otherwise, so existence is
 * never revealed), then that the caller has `minAccess` (401 for anonymous callers, else 403).
 */
export async function findProject(
  c: Ctx,
  rawId: string,
  opts: {
    minAccess?: number;
    /**
     * PostgreSQL: more reads that need only the project id, sent with the project's (one round trip
     * fewer); their rows come back under `also`, read before the access checks but never returned
     * when they fail.
     */
    alsoRead?: (projectId: number) => Record<string, SelectQueryBuilder<DB, any, any> | BoundStatement<unknown>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  } = {},
): Promise<FoundProject & { also?: Record<string, unknown[]> }> {
  let id: number | null;
  try {
    id = await resolveId(c, 'Project', rawId);
  } catch (err) {
    // An old path answers 301/405 only to callers who may read the project; the Location header
    // would otherwise reveal that a hidden project exists (GitLab checks read access first too).
    if (err instanceof ApiError && (err.status === 301 || err.status === 405)) {
      if (await canReadRedirected(c, rawId)) throw err;
      throw notFound('Project');
    }
    throw err;
  }
  if (id === null) throw notFound('Project');
  let found: { project: ProjectRow; namespace: NamespaceRow } | null;
  let also: Record<string, unknown[]> | undefined;
  const db = c.app.db;
  if (opts.alsoRead && isPostgres(db)) {
    const extra = opts.alsoRead(id);
    const wave: Record<string, SelectQueryBuilder<DB, any, any> | BoundStatement<unknown>> = projectQueries(db, [id]); // eslint-disable-line @typescript-eslint/no-explicit-any
    for (const k of Object.keys(extra)) wave[k] = extra[k];
    const rows = (await selectBatch(db, wave)) as Record<string, unknown[]>;
    found = joinProjects(rows.projects as ProjectRow[], rows.namespaces as NamespaceRow[]).get(id) ?? null;
    also = rows;
  } else {
    found = await loadProjectById(db, id);
  }
  if (!found) throw notFound('Project');
  const access = await effectiveAccess(c.app.db, c.user, found.project, found.namespace);
  if (!canReadProject(c.user, found.project, access)) throw notFound('Project');
  if (opts.minAccess !== undefined && access < opts.minAccess) {
    if (!c.user) throw unauthorized();
    throw forbidden();
  }
  return Object.assign({}, found, { access, also });
}
