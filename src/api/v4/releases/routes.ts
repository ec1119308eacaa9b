// Releases of a project (GitLab's lib/api/releases.rb and lib/api/release/links.rb): list, show,
// create (from an existing tag, or tagging `ref`), update, delete, the latest release's permalink,
// direct asset downloads, and the asset links of a release.
import type { FastifyInstance } from 'fastify';
import { apiError, ApiError, forbidden, notFound, notGiven, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import type { Commit } from '../../../git/index.js';
import { findUserRefsByIds } from '../../../db/repositories/users.js';
import { AccessLevel } from '../../../services/access.js';
import { findProject, fullPath, type FoundProject } from '../../../services/projects/lookup.js';
import { canReadRepository, openRepository, type ProjectRepo } from '../../../services/repository/project-repo.js';
import {
  checkNewLinks,
  createRelease,
  deleteProjectReleases,
  deleteRelease,
  findRelease,
  LINK_TYPES,
  linkErrors,
  linksOf,
  updateRelease,
  type LinkInput,
  type ReleaseLinkRow,
  type ReleaseRow,
} from '../../../services/releases.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { isUniqueViolation } from '../../../services/projects/unique.js';
import { MAX_DB_INT } from '../../../http/params.js';
import { nowIso } from '../../../db/database.js';
import type { ParamHash, ParamValue } from '../../../http/params.js';
import { presentLink, presentRelease, type ReleasePresentCtx } from '../entities/release.js';
import { presentMilestone } from '../entities/merge-request.js';
import { findTag, makeTag } from '../repository/tags.js';
import { pathParam } from '../repository/common.js';

interface ReleaseScope {
  found: FoundProject;
  canDownload: boolean;
  webUrl: string;
}

async function scope(c: Ctx): Promise<ReleaseScope> {
  const found = await findProject(c, pathParam(c, 'id'));
  return {
    found,
    canDownload: canReadRepository(found.project, c.user, found.access),
    webUrl: `${c.base}/${fullPath(found.project, found.namespace)}`,
  };
}

/** create_release / update_release / destroy_release: Developers and up, never on an archived project. */
function requireWriter(c: Ctx, s: ReleaseScope): void {
  if (!c.user) c.requireUser();
  if (s.found.access < AccessLevel.DEVELOPER && !c.user!.is_admin) throw forbidden();
  if (s.found.project.archived) throw forbidden();
}

function mayUpdate(c: Ctx, s: ReleaseScope): boolean {
  return !!c.user && (!!c.user.is_admin || s.found.access >= AccessLevel.DEVELOPER) && !s.found.project.archived;
}

/** GitLab's `not_found!` without a resource (ActiveRecord's own lookups say `404 Not found`). */
const releaseNotFound = () => apiError(404, '404 Not Found');

async function present(c: Ctx, s: ReleaseScope, releases: ReleaseRow[], includeHtml = false): Promise<Array<Record<string, unknown>>> {
  const ids = releases.map((r) => r.id);
  const users = await findUserRefsByIds(c.app.db, releases.flatMap((r) => (r.author_id === null ? [] : [r.author_id])));
  const links = await linksOf(c.app.db, ids);
  const commits = new Map<string, Commit>();
  const shas = [...new Set(releases.flatMap((r) => (r.sha ? [r.sha] : [])))];
  if (s.canDownload && shas.length) {
    const repo = await openRepository(c.app, s.found.project.id);
    const got = await repo.getCommits(shas).catch(async () => (await Promise.all(shas.map((sha) => repo.getCommit(sha).catch(() => null)))).filter((x): x is Commit => x !== null));
    for (const commit of got) commits.set(commit.id, commit);
    // A commit git could not read now shows as null: such an answer is not kept.
    if (got.length < shas.length) c.noStore();
  }
  const milestones = new Map<number, Array<Record<string, unknown>>>();
  if (ids.length) {
    const rows = await c.app.db
      .selectFrom('release_milestones')
      .innerJoin('milestones', 'milestones.id', 'release_milestones.milestone_id')
      .selectAll('milestones')
      .select('release_milestones.release_id')
      .where('release_milestones.release_id', 'in', ids)
      .execute();
    // GitLab's order_by_dates_and_title: due date, start date (dates missing last), title.
    const date = (d: string | null) => d ?? '\uffff';
    rows.sort((a, b) => date(a.due_date).localeCompare(date(b.due_date)) || date(a.start_date).localeCompare(date(b.start_date)) || (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
    const projects = new Map([[s.found.project.id, { project: s.found.project, namespace: s.found.namespace }]]);
    // issue_stats: the milestones' issues and closed issues, counted in one statement.
    const milestoneIds = [...new Set(rows.map((m) => m.id))];
    const counts = milestoneIds.length
      ? await c.app.db
          .selectFrom('issues')
          .select((eb) => ['milestone_id', 'state', eb.fn.countAll<number>().as('n')])
          .where('milestone_id', 'in', milestoneIds)
          .groupBy(['milestone_id', 'state'])
          .execute()
      : [];
    const stats = new Map<number, { total: number; closed: number }>();
    for (const r of counts) {
      const st = stats.get(r.milestone_id!) ?? { total: 0, closed: 0 };
      st.total += Number(r.n);
      if (r.state === 'closed') st.closed += Number(r.n);
      stats.set(r.milestone_id!, st);
    }
    for (const m of rows) {
      const list = milestones.get(m.release_id) ?? [];
      list.push(Object.assign(presentMilestone(m, c.base, projects), { issue_stats: stats.get(m.id) ?? { total: 0, closed: 0 } }));
      milestones.set(m.release_id, list);
    }
  }
  const ctx: ReleasePresentCtx = {
    base: c.base,
    webUrl: s.webUrl,
    fullPath: fullPath(s.found.project, s.found.namespace),
    projectPath: s.found.project.path,
    canDownload: s.canDownload,
    canUpdate: mayUpdate(c, s),
    includeHtml,
    users,
    commits,
    links,
    milestones,
  };
  return releases.map((r) => presentRelease(r, ctx));
}

/** `milestones` (titles) or `milestone_ids` of the project; GitLab's 400s for unknown ones. */
async function milestoneParam(c: Ctx, s: ReleaseScope): Promise<number[] | undefined> {
  if (c.params.has('milestones') && c.params.has('milestone_ids')) throw paramError('Cannot specify milestones and milestone_ids at the same time');
  const titles = c.params.stringArray('milestones', { comma: true });
  const ids = c.params.intArray('milestone_ids', { comma: true });
  if (titles === undefined && ids === undefined) return undefined;
  const q = c.app.db.selectFrom('milestones').select(['id', 'title']).where('project_id', '=', s.found.project.id);
  if (titles !== undefined) {
    if (titles.length === 0) return [];
    const rows = await q.where('title', 'in', titles).execute();
    const missing = titles.filter((t) => !rows.some((r) => r.title === t));
    if (missing.length) throw apiError(400, `Milestone(s) not found: ${missing.join(', ')}`);
    return rows.map((r) => r.id);
  }
  if (ids!.length === 0) return [];
  const rows = await q.where('id', 'in', ids!).execute();
  const missing = ids!.filter((id) => !rows.some((r) => r.id === id));
  if (missing.length) throw apiError(400, `Milestone id(s) not found: ${missing.join(', ')}`);
  return rows.map((r) => r.id);
}

/** A parameter's name in Grape's errors: `key`, or `where[key]` inside a hash. */
function named(where: string, key: string): string {
  return where ? `${where}[${key}]` : key;
}

function linkString(h: ParamHash, key: string, where: string): string | null {
  const v = h[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' && typeof v !== 'number') throw paramError(`${named(where, key)} is invalid`);
  return String(v);
}

/** One asset link's parameters (name, url, direct_asset_path or the old filepath, link_type). */
function readLink(h: ParamValue, where: string, opts: { partial?: boolean } = {}): Partial<LinkInput> {
  if (h === null || typeof h !== 'object' || Array.isArray(h)) throw paramError(`${where} is invalid`);
  const out: Partial<LinkInput> = {};
  for (const key of ['name', 'url'] as const) {
    const v = linkString(h, key, where);
    if (v === null && !opts.partial) throw notGiven(`${named(where, key)}`);
    if (v !== null) out[key] = v;
  }
  const path = linkString(h, 'direct_asset_path', where) ?? linkString(h, 'filepath', where);
  if (path !== null) out.filepath = path === '' ? null : path;
  const type = linkString(h, 'link_type', where);
  if (type !== null) {
    if (!(LINK_TYPES as readonly string[]).includes(type)) throw paramError(`${named(where, 'link_type')} does not have a valid value`);
    out.link_type = type;
  }
  return out;
}

function assetLinks(c: Ctx): LinkInput[] {
  const assets = c.params.hash('assets');
  if (!assets || assets.links === undefined || assets.links === null) return [];
  const links = assets.links;
  const list = Array.isArray(links) ? links : typeof links === 'object' ? Object.values(links) : null;
  if (!list) throw paramError('assets[links] is invalid');
  return list.map((l) => {
    const one = readLink(l, 'assets[links]');
    return { name: one.name!, url: one.url!, filepath: one.filepath ?? null, link_type: one.link_type ?? 'other' };
  });
}

function tagNameParam(c: Ctx): string {
  return pathParam(c, 'tag_name');
}

// GET /projects/:id/releases
async function listReleases(c: Ctx) {
  const s = await scope(c);
  const orderBy = c.params.enum('order_by', ['released_at', 'created_at'] as const) ?? 'released_at';
  const sort = c.params.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
  const includeHtml = c.params.bool('include_html_description') ?? false;
  const before = c.params.datetime('updated_before');
  const after = c.params.datetime('updated_after');
  let q = c.app.db.selectFrom('releases').selectAll().where('project_id', '=', s.found.project.id);
  if (before) q = q.where('updated_at', '<', before);
  if (after) q = q.where('updated_at', '>', after);
  const rows = await paginateOffset(c, q.orderBy(orderBy, sort).orderBy('id', sort));
  return present(c, s, rows, includeHtml);
}

/** The release of the path's tag for a caller who may read the code (403 otherwise, as authorize_read_code!). */
async function releaseOfPath(c: Ctx, s: ReleaseScope): Promise<ReleaseRow> {
  if (!s.canDownload) throw forbidden();
  const release = await findRelease(c.app.db, s.found.project.id, tagNameParam(c));
  if (!release) throw releaseNotFound();
  return release;
}

// GET /projects/:id/releases/:tag_name
async function showRelease(c: Ctx) {
  const s = await scope(c);
  const release = await releaseOfPath(c, s);
  return (await present(c, s, [release], c.params.bool('include_html_description') ?? false))[0];
}

// GET /projects/:id/releases/permalink/latest[/*]
async function latestRelease(c: Ctx) {
  const s = await scope(c);
  // The suffix as sent (the router's decoding differs by character), each segment decoded once:
  // GitLab's file_path check, no traversal and nothing that is not a plain path segment.
  const rawPath = c.req.url.split('?')[0]!;
  const at = rawPath.indexOf('/permalink/latest');
  const suffix = at === -1 ? '' : rawPath.slice(at + '/permalink/latest'.length).replace(/^\//, '').replace(/\/$/, '');
  const bad = () => paramError('suffix_path should be a valid file path');
  const segments = suffix === '' ? [] : suffix.split('/').map((x) => {
    try {
      return decodeURIComponent(x);
    } catch {
      throw bad();
    }
  });
  if (segments.some((x) => x === '' || x === '.' || x === '..' || x.includes('/') || /[\x00-\x1f\x7f]/.test(x))) throw bad();
  if (!s.canDownload) throw forbidden();
  const latest = await c.app.db.selectFrom('releases').select('tag').where('project_id', '=', s.found.project.id).orderBy('released_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  if (!latest) throw releaseNotFound();
  // The query as sent, but for order_by (kept for later orders of the permalink, as GitLab).
  const rawUrl = c.req.url;
  const q = rawUrl.indexOf('?');
  const qs = q === -1 ? '' : rawUrl.slice(q + 1).split('&').filter((pair) => pair !== '' && decodeURIComponent(pair.split('=')[0]!.replace(/\+/g, ' ')) !== 'order_by').join('&');
  const path = segments.map((x) => `/${encodeURIComponent(x)}`).join('');
  // A path on this server (GitLab's expose_path), not an absolute URL made from the Host header.
  const location = `/api/v4/projects/${s.found.project.id}/releases/${encodeURIComponent(latest.tag)}${path}${qs ? `?${qs}` : ''}`;
  c.noStore();
  c.status(302);
  c.header('Location', location);
  return undefined;
}

// GET /projects/:id/releases/:tag_name/downloads/*
async function downloadAsset(c: Ctx) {
  const s = await scope(c);
  const release = await releaseOfPath(c, s);
  const path = `/${String(c.params.raw['*'] ?? '')}`;
  const link = await c.app.db.selectFrom('release_links').selectAll().where('release_id', '=', release.id).where('filepath', '=', path).executeTakeFirst();
  if (!link) throw notFound();
  c.status(302);
  c.header('Location', link.url);
  return undefined;
}

// POST /projects/:id/releases
async function createReleaseRoute(c: Ctx) {
  const s = await scope(c);
  if (!c.params.has('tag_name')) throw notGiven('tag_name');
  const tagName = c.params.string('tag_name')!;
  const name = c.params.string('name') ?? null;
  const description = c.params.string('description') ?? null;
  const ref = c.params.string('ref');
  const tagMessage = c.params.string('tag_message');
  const releasedAt = c.params.datetime('released_at');
  const links = assetLinks(c);
  requireWriter(c, s);
  if (!s.canDownload) throw forbidden();
  if (await findRelease(c.app.db, s.found.project.id, tagName)) throw apiError(409, 'Release already exists');
  const milestoneIds = (await milestoneParam(c, s)) ?? [];
  checkNewLinks(links);
  const repo = await openRepository(c.app, s.found.project.id);
  const pr: ProjectRepo = Object.assign({}, s.found, { repo, webUrl: s.webUrl });
  let tag = tagName === '' ? null : await findTag(pr, tagName);
  if (!tag) {
    if (!ref) throw apiError(422, 'Ref is not specified');
    // Tags::CreateService's own status: a tag made meanwhile is 409 here (the tags API says 400).
    tag = await makeTag(c, pr, c.user!, tagName, ref, tagMessage).catch((err: unknown) => {
      const message = err instanceof ApiError ? (err.body as { message?: unknown } | null)?.message : undefined;
      if (err instanceof ApiError && err.status === 400 && typeof message === 'string' && message.endsWith(' already exists')) throw apiError(409, message);
      throw err;
    });
  }
  const release = await createRelease(c.app, {
    projectId: s.found.project.id,
    tag: tag.tag.name,
    sha: tag.commit?.id ?? tag.tag.target ?? null,
    name,
    description,
    authorId: c.user!.id,
    releasedAt,
    links,
    milestoneIds,
  });
  c.status(201);
  return (await present(c, s, [release]))[0];
}

// PUT /projects/:id/releases/:tag_name
async function updateReleaseRoute(c: Ctx) {
  const s = await scope(c);
  const name = c.params.has('name') ? (c.params.string('name') ?? null) : undefined;
  const description = c.params.has('description') ? (c.params.string('description') ?? null) : undefined;
  const releasedAt = c.params.datetime('released_at');
  requireWriter(c, s);
  if (!s.canDownload) throw forbidden();
  const tagName = tagNameParam(c);
  // GitLab authorizes update_release on the release it found: none is 403.
  const release = await findRelease(c.app.db, s.found.project.id, tagName);
  if (!release) throw forbidden();
  const repo = await openRepository(c.app, s.found.project.id);
  if (!(await repo.findTag(tagName))) throw apiError(404, 'Tag does not exist');
  const milestoneIds = await milestoneParam(c, s);
  if (name === undefined && description === undefined && releasedAt === undefined && milestoneIds === undefined) throw apiError(400, 'params is empty');
  const fresh = await updateRelease(c.app, release, { name, description, releasedAt, milestoneIds });
  return (await present(c, s, [fresh]))[0];
}

// DELETE /projects/:id/releases/:tag_name: answers the deleted release (200), as GitLab.
async function deleteReleaseRoute(c: Ctx) {
  const s = await scope(c);
  requireWriter(c, s);
  if (!s.canDownload) throw forbidden();
  // destroy_release on the release found: none is 403. A release whose tag was deleted with git
  // can still be deleted (GitLab's DestroyService no longer asks for the tag).
  const release = await findRelease(c.app.db, s.found.project.id, tagNameParam(c));
  if (!release) throw forbidden();
  const out = (await present(c, s, [release]))[0];
  await deleteRelease(c.app, release);
  c.status(200);
  return out;
}

// ---- asset links (lib/api/release/links.rb) --------------------------------------------------

/** The release of the path for anyone who reads releases (`404 Not found`); writes need update_release after it. */
async function linkScope(c: Ctx, write: boolean) {
  const s = await scope(c);
  const release = await findRelease(c.app.db, s.found.project.id, tagNameParam(c));
  if (!release) throw notFound();
  if (write) requireWriter(c, s);
  return { s, release };
}

async function findLink(c: Ctx, releaseId: number): Promise<ReleaseLinkRow> {
  const raw = String(c.params.raw.link_id ?? '');
  if (!/^\d+$/.test(raw)) throw paramError('link_id is invalid');
  const id = raw.length > 10 || Number(raw) > MAX_DB_INT ? -1 : Number(raw);
  const link = id < 0 ? undefined : await c.app.db.selectFrom('release_links').selectAll().where('id', '=', id).where('release_id', '=', releaseId).executeTakeFirst();
  if (!link) throw notFound();
  return link;
}

/** Releases::Links services' 400: the link's full messages, as an array. */
function linkInvalid(errors: string[]) {
  return apiError(400, errors);
}

/** Writes one link; a racing duplicate (the unique indexes) is reported as the checks would have. */
async function writeLink(c: Ctx, releaseId: number, link: LinkInput, self: number | null, write: () => Promise<unknown>): Promise<void> {
  const others = () => c.app.db.selectFrom('release_links').selectAll().where('release_id', '=', releaseId).execute().then((rows) => rows.filter((r) => r.id !== self));
  const errors = linkErrors(link, await others());
  if (errors.length) throw linkInvalid(errors);
  try {
    await write();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const again = linkErrors(link, await others());
    throw linkInvalid(again.length ? again : ['Name has already been taken']);
  }
}

async function listLinks(c: Ctx) {
  const { s, release } = await linkScope(c, false);
  const q = c.app.db.selectFrom('release_links').selectAll().where('release_id', '=', release.id).orderBy('created_at', 'desc').orderBy('id', 'desc');
  const rows = await paginateOffset(c, q);
  return rows.map((l) => presentLink(l, release, s));
}

async function showLink(c: Ctx) {
  const { s, release } = await linkScope(c, false);
  return presentLink(await findLink(c, release.id), release, s);
}

async function createLink(c: Ctx) {
  const one = readLink(c.params.raw, '');
  const { s, release } = await linkScope(c, true);
  const link: LinkInput = { name: one.name!, url: one.url!, filepath: one.filepath ?? null, link_type: one.link_type ?? 'other' };
  const now = nowIso();
  const row = { release_id: release.id, ...link, created_at: now, updated_at: now };
  let id = 0;
  await writeLink(c, release.id, link, null, async () => {
    id = Number((await c.app.db.insertInto('release_links').values(row).returning('id').executeTakeFirstOrThrow()).id);
  });
  return presentLink(Object.assign(row, { id }), release, s);
}

async function updateLink(c: Ctx) {
  const one = readLink(c.params.raw, '', { partial: true });
  if (one.name === undefined && one.url === undefined) throw paramError('name, url are missing, at least one parameter must be provided');
  const { s, release } = await linkScope(c, true);
  const link = await findLink(c, release.id);
  const next: LinkInput = { name: one.name ?? link.name, url: one.url ?? link.url, filepath: one.filepath === undefined ? link.filepath : one.filepath, link_type: one.link_type ?? link.link_type };
  await writeLink(c, release.id, next, link.id, () => c.app.db.updateTable('release_links').set({ ...next, updated_at: nowIso() }).where('id', '=', link.id).execute());
  return presentLink(await findLink(c, release.id), release, s);
}

async function deleteLink(c: Ctx) {
  const { s, release } = await linkScope(c, true);
  const link = await findLink(c, release.id);
  await c.app.db.deleteFrom('release_links').where('id', '=', link.id).execute();
  c.status(200);
  return presentLink(link, release, s);
}

let hooked = false;

export function registerReleaseRoutes(app: FastifyInstance): void {
  if (!hooked) {
    hooked = true;
    projectDeletionHooks.push(async function deleteReleases(_app, trx, projectId) {
      await deleteProjectReleases(trx, projectId);
    });
  }
  const base = '/projects/:id/releases';
  route(app, 'GET', base, listReleases, { cache: true });
  route(app, 'POST', base, createReleaseRoute);
  route(app, 'GET', `${base}/permalink/latest`, latestRelease);
  route(app, 'GET', `${base}/permalink/latest/*`, latestRelease);
  route(app, 'GET', `${base}/:tag_name`, showRelease, { cache: true });
  route(app, 'PUT', `${base}/:tag_name`, updateReleaseRoute);
  route(app, 'DELETE', `${base}/:tag_name`, deleteReleaseRoute);
  route(app, 'GET', `${base}/:tag_name/downloads/*`, downloadAsset);
  route(app, 'GET', `${base}/:tag_name/assets/links`, listLinks, { cache: true });
  route(app, 'POST', `${base}/:tag_name/assets/links`, createLink);
  route(app, 'GET', `${base}/:tag_name/assets/links/:link_id`, showLink, { cache: true });
  route(app, 'PUT', `${base}/:tag_name/assets/links/:link_id`, updateLink);
  route(app, 'DELETE', `${base}/:tag_name/assets/links/:link_id`, deleteLink);
}
