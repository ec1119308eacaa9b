// Project and group badges (GitLab's lib/api/badges.rb): a project lists its own badges and those
// of its groups (ancestors included), oldest first; only its own are read one by one, changed or
// deleted through it. Reading needs to see the project or group; writing Maintainer (project) or
// Owner (group).
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { nowIso } from '../../../db/database.js';
import type { DB } from '../../../db/types.js';
import { forbidden, notFound, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import { AccessLevel, ancestorIds } from '../../../services/access.js';
import { placeholderValues, registerBadgeHooks, renderUrl, validateBadge, type BadgeProject, type BadgeRow } from '../../../services/badges.js';
import { findGroup, type LoadedGroup } from '../../../services/groups/lookup.js';
import { visibleCondition } from '../../../services/projects/list.js';
import { findProject, type FoundProject } from '../../../services/projects/lookup.js';
import { integerPathParam, pathParam } from '../repository/common.js';

type Source = { kind: 'project'; found: FoundProject } | { kind: 'group'; loaded: LoadedGroup };

async function projectSource(c: Ctx): Promise<Source> {
  return { kind: 'project', found: await findProject(c, pathParam(c, 'id')) };
}

async function groupSource(c: Ctx): Promise<Source> {
  return { kind: 'group', loaded: await findGroup(c, c.params.raw.id) };
}

/** admin_project (Maintainers) or admin_group (Owners); administrators too. */
function assertAdmin(c: Ctx, s: Source): void {
  c.requireUser();
  if (c.user!.is_admin) return;
  const ok = s.kind === 'project' ? s.found.access >= AccessLevel.MAINTAINER : s.loaded.access >= AccessLevel.OWNER;
  if (!ok) throw forbidden();
}

/** The project whose values fill the placeholders: the project itself, or a group's oldest project the caller sees (none: left as written). */
async function renderingProject(c: Ctx, s: Source): Promise<BadgeProject | null> {
  if (s.kind === 'project') return s.found;
  const visible = await visibleCondition(c.app.db, c.user);
  let q = c.app.db.selectFrom('projects').innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id').selectAll('projects').where('projects.namespace_id', '=', s.loaded.group.id);
  if (visible) q = q.where(visible);
  const project = await q.orderBy('projects.created_at', 'asc').orderBy('projects.id', 'asc').limit(1).executeTakeFirst();
  if (!project) return null;
  const namespace = await c.app.db.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  return { project, namespace } as BadgeProject;
}

/** Entities::Badge: BasicBadgeDetails (name, the URLs and their rendering), then id and kind. */
async function present(c: Ctx, s: Source, rows: BadgeRow[]): Promise<Record<string, unknown>[]> {
  if (!rows.length) return [];
  const values = await placeholderValues(c.app, await renderingProject(c, s), c.base);
  return rows.map((b) => ({
    name: b.name,
    link_url: b.link_url,
    image_url: b.image_url,
    rendered_link_url: renderUrl(b.link_url, values),
    rendered_image_url: renderUrl(b.image_url, values),
    id: b.id,
    kind: b.type === 'ProjectBadge' ? 'project' : 'group',
  }));
}

/** A source's own badges (for reading one, changing and deleting). */
function ownBadges(db: Kysely<DB>, s: Source) {
  const q = db.selectFrom('badges').selectAll();
  return s.kind === 'project' ? q.where('type', '=', 'ProjectBadge').where('project_id', '=', s.found.project.id) : q.where('type', '=', 'GroupBadge').where('group_id', '=', s.loaded.group.id);
}

async function ownBadge(c: Ctx, s: Source): Promise<BadgeRow> {
  const id = integerPathParam(c, 'badge_id');
  const row = await ownBadges(c.app.db, s).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

function registerFor(app: FastifyInstance, prefix: '/projects/:id' | '/groups/:id', load: (c: Ctx) => Promise<Source>): void {
  // GET …/badges (name: exact)
  route(app, 'GET', `${prefix}/badges`, async function listBadges(c) {
    const s = await load(c);
    const name = c.params.string('name');
    let q = c.app.db.selectFrom('badges').selectAll();
    if (s.kind === 'project') {
      const ns = s.found.namespace;
      const groups = ns.kind === 'group' ? ancestorIds(ns) : [];
      q = q.where((eb) =>
        eb.or([
          eb.and([eb('type', '=', 'ProjectBadge'), eb('project_id', '=', s.found.project.id)]),
          ...(groups.length ? [eb.and([eb('type', '=', 'GroupBadge'), eb('group_id', 'in', groups)])] : []),
        ]),
      );
    } else {
      q = q.where('type', '=', 'GroupBadge').where('group_id', '=', s.loaded.group.id);
    }
    if (name !== undefined) q = q.where('name', '=', name);
    const rows = await paginateOffset(c, q.orderBy('created_at', 'asc').orderBy('id', 'asc'));
    return present(c, s, rows);
  });

  // GET …/badges/render (link_url, image_url): a preview
  route(app, 'GET', `${prefix}/badges/render`, async function renderBadge(c) {
    c.requireUser();
    const s = await load(c);
    c.params.requireAll(['link_url', 'image_url']);
    assertAdmin(c, s);
    const link = c.params.string('link_url')!.trim();
    const image = c.params.string('image_url')!.trim();
    validateBadge({ link_url: link, image_url: image });
    const values = await placeholderValues(c.app, await renderingProject(c, s), c.base);
    return { name: null, link_url: link, image_url: image, rendered_link_url: renderUrl(link, values), rendered_image_url: renderUrl(image, values) };
  });

  // GET …/badges/:badge_id
  route(app, 'GET', `${prefix}/badges/:badge_id`, async function getBadge(c) {
    const s = await load(c);
    return (await present(c, s, [await ownBadge(c, s)]))[0];
  });

  // POST …/badges
  route(app, 'POST', `${prefix}/badges`, async function createBadge(c) {
    // GitLab's authenticate_non_get!: 401 before anything else.
    c.requireUser();
    const s = await load(c);
    c.params.requireAll(['link_url', 'image_url']);
    assertAdmin(c, s);
    const attrs = { link_url: c.params.string('link_url')!.trim(), image_url: c.params.string('image_url')!.trim(), name: c.params.string('name') ?? null };
    validateBadge(attrs);
    const now = nowIso();
    const row = await c.app.db
      .insertInto('badges')
      .values({ type: s.kind === 'project' ? 'ProjectBadge' : 'GroupBadge', project_id: s.kind === 'project' ? s.found.project.id : null, group_id: s.kind === 'group' ? s.loaded.group.id : null, ...attrs, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    return (await present(c, s, [row]))[0];
  });

  // PUT …/badges/:badge_id (the attributes given)
  route(app, 'PUT', `${prefix}/badges/:badge_id`, async function updateBadge(c) {
    // GitLab's authenticate_non_get!: 401 before anything else.
    c.requireUser();
    const s = await load(c);
    assertAdmin(c, s);
    const badge = await ownBadge(c, s);
    const set: Partial<BadgeRow> = {};
    for (const key of ['link_url', 'image_url'] as const) if (c.params.has(key)) set[key] = (c.params.string(key) ?? '').trim();
    if (c.params.has('name')) set.name = c.params.nullableString('name') ?? null;
    validateBadge(set as { link_url?: string; image_url?: string; name?: string | null });
    if (!Object.keys(set).length) return (await present(c, s, [badge]))[0];
    const row = await c.app.db.updateTable('badges').set({ ...set, updated_at: nowIso() }).where('id', '=', badge.id).returningAll().executeTakeFirst();
    if (!row) throw notFound();
    return (await present(c, s, [row]))[0];
  });

  // DELETE …/badges/:badge_id
  route(app, 'DELETE', `${prefix}/badges/:badge_id`, async function deleteBadge(c) {
    // GitLab's authenticate_non_get!: 401 before anything else.
    c.requireUser();
    const s = await load(c);
    assertAdmin(c, s);
    const badge = await ownBadge(c, s);
    refuseIfModifiedSince(c, badge.updated_at);
    await c.app.db.deleteFrom('badges').where('id', '=', badge.id).execute();
    return undefined;
  });
}

export function registerBadgeRoutes(app: FastifyInstance): void {
  registerBadgeHooks();
  registerFor(app, '/projects/:id', projectSource);
  registerFor(app, '/groups/:id', groupSource);
}
