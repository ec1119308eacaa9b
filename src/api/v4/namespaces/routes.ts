// The namespaces API (spec document 3 §4.1): every endpoint needs authentication (401 otherwise).
import type { FastifyInstance } from 'fastify';
import { findUsersByIds } from '../../../db/repositories/users.js';
import { containsCi } from '../../../db/sql-helpers.js';
import { notFound } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel, namespaceAccess } from '../../../services/access.js';
import { canReadGroup, underGrants, userGrants } from '../../../services/groups/visibility.js';
import { namespaceByRef } from '../../../services/projects/namespaces.js';
import type { NamespaceRow } from '../../../services/projects/lookup.js';
import { pathFromName } from '../../../services/paths.js';
import { presentNamespace } from '../entities/namespace.js';

async function counts(c: Ctx, ns: NamespaceRow) {
  const db = c.app.db;
  const projects = await db.selectFrom('projects').select((eb) => eb.fn.countAll<number>().as('n')).where('namespace_id', '=', ns.id).executeTakeFirst();
  const size = await db
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select((eb) => eb.fn.sum<number>('projects.repository_size').as('n'))
    .where('namespaces.traversal', 'like', `${ns.traversal}%`)
    .executeTakeFirst();
  let members = 0;
  if (ns.kind === 'group') {
    const m = await db
      .selectFrom('members')
      .innerJoin('namespaces', 'namespaces.id', 'members.source_id')
      .select((eb) => eb.fn.count<number>('members.user_id').distinct().as('n'))
      .where('members.source_type', '=', 'Namespace')
      .where('namespaces.traversal', 'like', `${ns.traversal}%`)
      .executeTakeFirst();
    members = Number(m?.n ?? 0);
  }
  return {
    projects: Number(projects?.n ?? 0),
    rootRepositorySize: Number(size?.n ?? 0),
    membersWithDescendants: members,
    billableMembers: ns.kind === 'group' ? members : 1,
  };
}

async function present(c: Ctx, rows: NamespaceRow[]) {
  const user = c.requireUser();
  const owners = await findUsersByIds(c.app.db, rows.filter((r) => r.kind === 'user').map((r) => r.owner_id!));
  const out = [];
  for (const ns of rows) {
    const isOwner = ns.kind === 'user' ? ns.owner_id === user.id : (await namespaceAccess(c.app.db, user, ns)) >= AccessLevel.OWNER;
    out.push(
      presentNamespace(ns, {
        base: c.base,
        config: c.app.config,
        isAdmin: user.is_admin === 1,
        isOwner,
        owner: ns.owner_id !== null ? owners.get(ns.owner_id) : null,
        counts: await counts(c, ns),
      }),
    );
  }
  return out;
}

// GET /namespaces
async function listNamespaces(c: Ctx) {
  const user = c.requireUser();
  const search = c.params.string('search');
  const ownedOnly = c.params.bool('owned_only') ?? false;
  const topLevelOnly = c.params.bool('top_level_only') ?? false;
  const fullPathSearch = c.params.bool('full_path_search') ?? false;
  let q = c.app.db.selectFrom('namespaces').selectAll('namespaces').where('namespaces.kind', 'in', ['user', 'group']);
  if (!user.is_admin) {
    const grants = await userGrants(c.app.db, user.id);
    q = q.where((eb) =>
      eb.or([
        eb.and([eb('namespaces.kind', '=', 'user'), eb('namespaces.owner_id', '=', user.id)]),
        eb.and([eb('namespaces.kind', '=', 'group'), underGrants(eb, grants, ownedOnly ? AccessLevel.OWNER : AccessLevel.MINIMAL_ACCESS)]),
      ]),
    );
  } else if (ownedOnly) {
    const grants = await userGrants(c.app.db, user.id);
    q = q.where((eb) =>
      eb.or([
        eb.and([eb('namespaces.kind', '=', 'user'), eb('namespaces.owner_id', '=', user.id)]),
        eb.and([eb('namespaces.kind', '=', 'group'), underGrants(eb, grants, AccessLevel.OWNER)]),
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
  return present(c, rows);
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
  route(app, 'GET', '/namespaces', listNamespaces);
  route(app, 'GET', '/namespaces/:id', showNamespace);
  route(app, 'GET', '/namespaces/:namespace/exists', namespaceExists);
}
