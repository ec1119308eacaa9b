// The namespaces API (spec document 3 §4.1): every endpoint needs authentication (401 otherwise).
import type { FastifyInstance } from 'fastify';
import { findUserRefsByIds } from '../../../db/repositories/users.js';
import { EpochCache } from '../../../db/epoch-cache.js';
import { containsCi } from '../../../db/sql-helpers.js';
import { notFound } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel, namespaceAccess } from '../../../services/access.js';
import { canReadGroup, coveringPrefixes, grantedLevel, underGrants, userGrants, type Grant } from '../../../services/groups/visibility.js';
import { namespaceByRef } from '../../../services/projects/namespaces.js';
import type { NamespaceRow } from '../../../services/projects/lookup.js';
import { pathFromName } from '../../../services/paths.js';
import { presentNamespace } from '../entities/namespace.js';

interface NamespaceCounts {
  projects: number;
  rootRepositorySize: number;
  membersWithDescendants: number;
  billableMembers: number;
}

/**
 * Each namespace's figures, reused for up to a second while nothing has changed the database
 * (EpochCache, as list totals are). GitLab itself serves these from statistics that a
 * background worker refreshes; here a busy `GET /namespaces` computes them about once a second
 * instead of on every request.
 */
const namespaceCounts = new EpochCache<NamespaceCounts>(1000, 5000);

/**
 * The counts of a page of namespaces: those not cached are computed together, from one read of their
 * subtrees (one LIKE per outermost namespace), then their projects grouped by namespace and their
 * group memberships, two queries per 500 subtree namespaces; each namespace's figures are summed
 * over its own subtree.
 */
async function countsFor(c: Ctx, rows: NamespaceRow[]): Promise<Map<number, NamespaceCounts>> {
  const out = new Map<number, NamespaceCounts>();
  const database = c.app.database;
  const missing: NamespaceRow[] = [];
  for (const ns of rows) {
    const hit = namespaceCounts.get(database, String(ns.id));
    if (hit) out.set(ns.id, hit);
    else missing.push(ns);
  }
  if (missing.length === 0) return out;
  const mark = EpochCache.mark(database);
  for (const [id, counts] of await computeCounts(c, missing)) {
    namespaceCounts.set(database, String(id), counts, mark);
    out.set(id, counts);
  }
  return out;
}

async function computeCounts(c: Ctx, rows: NamespaceRow[]): Promise<Map<number, NamespaceCounts>> {
  const out = new Map<number, NamespaceCounts>();
  const db = c.app.db;
  const prefixes = coveringPrefixes(rows.map((r) => ({ traversal: r.traversal, level: 0 })));
  const subtree = await db
    .selectFrom('namespaces')
    .select(['id', 'traversal', 'kind'])
    .where((eb) => eb.or(prefixes.map((t) => eb('traversal', 'like', `${t}%`))))
    .execute();
  // By id, in chunks (bounded parameter lists): an OR of LIKEs in a join made SQLite scan projects.
  const projects: Array<{ namespace_id: number; n: number; size: number | null }> = [];
  const members: Array<{ source_id: number; user_id: number }> = [];
  const groupIds = new Set(rows.some((r) => r.kind === 'group') ? subtree.filter((n) => n.kind === 'group').map((n) => n.id) : []);
  for (let i = 0; i < subtree.length; i += 500) {
    const chunk = subtree.slice(i, i + 500).map((n) => n.id);
    const groupChunk = chunk.filter((id) => groupIds.has(id));
    const [p, m] = await Promise.all([
      db
        .selectFrom('projects')
        .select((eb) => ['namespace_id', eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('repository_size').as('size')])
        .where('namespace_id', 'in', chunk)
        .groupBy('namespace_id')
        .execute(),
      groupChunk.length
        ? db.selectFrom('members').select(['source_id', 'user_id']).distinct().where('source_type', '=', 'Namespace').where('source_id', 'in', groupChunk).execute()
        : Promise.resolve([] as Array<{ source_id: number; user_id: number }>),
    ]);
    projects.push(...p);
    members.push(...m);
  }
  const traversalOf = new Map(subtree.map((n) => [n.id, n.traversal]));
  const projectsIn = new Map(projects.map((p) => [p.namespace_id, Number(p.n)]));
  for (const ns of rows) {
    let size = 0;
    for (const p of projects) if (traversalOf.get(p.namespace_id)?.startsWith(ns.traversal)) size += Number(p.size ?? 0);
    let membersCount = 0;
    if (ns.kind === 'group') {
      const users = new Set<number>();
      for (const m of members) if (traversalOf.get(m.source_id)?.startsWith(ns.traversal)) users.add(m.user_id);
      membersCount = users.size;
    }
    out.set(ns.id, {
      projects: projectsIn.get(ns.id) ?? 0,
      rootRepositorySize: size,
      membersWithDescendants: membersCount,
      billableMembers: ns.kind === 'group' ? membersCount : 1,
    });
  }
  return out;
}

/** Entities::Namespace for the caller (to-dos of groups show their group so). */
export function presentNamespacesFor(c: Ctx, rows: NamespaceRow[]): Promise<Record<string, unknown>[]> {
  return present(c, rows);
}

async function present(c: Ctx, rows: NamespaceRow[], known?: Grant[]) {
  const user = c.requireUser();
  const owners = await findUserRefsByIds(c.app.db, rows.filter((r) => r.kind === 'user').map((r) => r.owner_id!));
  const counts = await countsFor(c, rows);
  // The caller's level on every group of the page from one load of its grants (direct and shared
  // memberships), not an access check per namespace. Ownership only decides what an administrator
  // sees anyway, so theirs are not loaded.
  const isAdmin = user.is_admin === 1;
  const grants = known ?? (!isAdmin && rows.some((r) => r.kind === 'group') ? await userGrants(c.app.db, user.id) : []);
  return rows.map((ns) =>
    presentNamespace(ns, {
      base: c.base,
      config: c.app.config,
      isAdmin,
      isOwner: ns.kind === 'user' ? ns.owner_id === user.id : !isAdmin && grantedLevel(grants, ns.traversal) >= AccessLevel.OWNER,
      owner: ns.owner_id !== null ? owners.get(ns.owner_id) : null,
      counts: counts.get(ns.id)!,
    }),
  );
}

// GET /namespaces
async function listNamespaces(c: Ctx) {
  const user = c.requireUser();
  const search = c.params.string('search');
  const ownedOnly = c.params.bool('owned_only') ?? false;
  const topLevelOnly = c.params.bool('top_level_only') ?? false;
  const fullPathSearch = c.params.bool('full_path_search') ?? false;
  let q = c.app.db.selectFrom('namespaces').selectAll('namespaces').where('namespaces.kind', 'in', ['user', 'group']);
  // Administrators see every namespace unless they ask for their own.
  let grants: Grant[] | undefined;
  if (!user.is_admin || ownedOnly) {
    const granted = await userGrants(c.app.db, user.id);
    grants = granted;
    const min = ownedOnly ? AccessLevel.OWNER : AccessLevel.MINIMAL_ACCESS;
    q = q.where((eb) =>
      eb.or([
        eb.and([eb('namespaces.kind', '=', 'user'), eb('namespaces.owner_id', '=', user.id)]),
        eb.and([eb('namespaces.kind', '=', 'group'), underGrants(eb, granted, min)]),
      ]),
    );
  }
  if (topLevelOnly) q = q.where('namespaces.parent_id', 'is', null);
  if (search) {
    q = fullPathSearch
      ? q.where(containsCi('namespaces.full_path', search))
      : q.where((eb) => eb.or([containsCi('namespaces.name', search), containsCi('namespaces.path', search)]));
  }
  q = q.orderBy('namespaces.id');
  const rows = await paginateOffset(c, q);
  return present(c, rows, grants);
}

/** Read rule of read_namespace_via_membership: admins, the personal namespace's user, group members. */
async function canReadViaMembership(c: Ctx, ns: NamespaceRow): Promise<boolean> {
  const user = c.requireUser();
  if (user.is_admin) return true;
  if (ns.kind === 'user') return ns.owner_id === user.id;
  return (await namespaceAccess(c.app.db, user, ns)) > 0;
}

// GET /namespaces/:id
async function showNamespace(c: Ctx) {
  c.requireUser();
  const ns = await namespaceByRef(c.app.db, String(c.params.raw.id ?? ''));
  if (!ns || !(await canReadViaMembership(c, ns))) throw notFound('Namespace');
  return (await present(c, [ns]))[0];
}

// GET /namespaces/:namespace/exists
async function namespaceExists(c: Ctx) {
  const user = c.requireUser();
  const path = String(c.params.raw.namespace ?? '');
  const parentId = c.params.int('parent_id');
  let prefix = '';
  if (parentId !== undefined) {
    const parent = await c.app.db.selectFrom('namespaces').selectAll().where('id', '=', parentId).executeTakeFirst();
    // GITLAB-COMPAT: a parent the caller cannot see answers as an empty one, so the check never
    // reveals the subgroups of a private group.
    if (!parent || (parent.kind === 'group' && !(await canReadGroup(c.app.db, user, parent)))) return { exists: false, suggests: [] };
    prefix = `${parent.full_path}/`;
  }
  const taken = async (p: string) =>
    (await c.app.db.selectFrom('routes').select('id').where('path_lower', '=', (prefix + p).toLowerCase()).executeTakeFirst()) !== undefined;
  if (!(await taken(path))) return { exists: false, suggests: [] };
  const base = pathFromName(path);
  for (let i = 1; i < 1000; i++) {
    const candidate = `${base}${i}`;
    if (!(await taken(candidate))) return { exists: true, suggests: [candidate] };
  }
  return { exists: true, suggests: [] };
}

export function registerNamespaceRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/namespaces', listNamespaces, { cache: true });
  route(app, 'GET', '/namespaces/:id', showNamespace);
  route(app, 'GET', '/namespaces/:namespace/exists', namespaceExists);
}
