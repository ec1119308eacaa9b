// Releases of a project (GitLab's Releases::CreateService, UpdateService, DestroyService and
// Releases::Link validations). A release belongs to a tag by name; the tag lives in git.
import { emitEvent } from './events.js';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { DB } from '../db/types.js';
import type { ReleaseLinksTable, ReleasesTable } from '../db/tables/releases.js';
import { apiError } from '../http/errors.js';
import { onUniqueViolation } from './projects/unique.js';

export type ReleaseRow = Selectable<ReleasesTable>;

/** The source archive formats every release offers (GitLab's Releases::Source). */
export const SOURCE_FORMATS = ['zip', 'tar.gz', 'tar.bz2', 'tar'];

/** A release's source archives: named after the project's path and the tag, `/` made `-`. */
export function releaseSources(webUrl: string, projectPath: string, tag: string): Array<{ format: string; url: string }> {
  const prefix = `${projectPath}-${tag.replace(/\//g, '-')}`;
  return SOURCE_FORMATS.map((format) => ({ format, url: `${webUrl}/-/archive/${tag}/${prefix}.${format}` }));
}
export type ReleaseLinkRow = Selectable<ReleaseLinksTable>;

export const LINK_TYPES = ['other', 'runbook', 'image', 'package'] as const;

export interface LinkInput {
  name: string;
  url: string;
  filepath: string | null;
  link_type: string;
}

/** GitLab's Releases::Link::FILEPATH_REGEX and FILEPATH_MAX_LENGTH. */
const FILEPATH_RE = /^\/[^/](?!.*\/\/)[-.\w/]+[\da-zA-Z]+$/;
const FILEPATH_MAX = 128;

/** The checks of one Releases::Link against the other links of its release, as Rails' full messages. */
export function linkErrors(l: LinkInput, others: ReadonlyArray<Pick<LinkInput, 'name' | 'url' | 'filepath'>>): string[] {
  const errors: string[] = [];
  if (l.name.trim() === '') errors.push("Name can't be blank");
  else if (others.some((o) => o.name === l.name)) errors.push('Name has already been taken');
  if (l.url.trim() === '') errors.push("Url can't be blank");
  else {
    let u: URL | null = null;
    try {
      // Whitespace or control characters are never part of a link (they would reach a Location header).
      u = /[\s\x00-\x1f\x7f]/.test(l.url) ? null : new URL(l.url);
    } catch {
      u = null;
    }
    if (!u) errors.push('Url must be a valid URL');
    else if (!['http:', 'https:', 'ftp:'].includes(u.protocol)) errors.push('Url is blocked: Only allowed schemes are http, https, ftp');
    else if (others.some((o) => o.url === l.url)) errors.push('Url has already been taken');
  }
  if (l.filepath !== null) {
    if (!FILEPATH_RE.test(l.filepath)) errors.push('Filepath is in an invalid format');
    if (l.filepath.length > FILEPATH_MAX) errors.push(`Filepath is too long (maximum is ${FILEPATH_MAX} characters)`);
    if (others.some((o) => o.filepath === l.filepath)) errors.push('Filepath has already been taken');
  }
  if (!(LINK_TYPES as readonly string[]).includes(l.link_type)) errors.push('Link type is not included in the list');
  return errors;
}

/** The links of a new release, as its save! reports the first problem (`Validation failed: Links …`). */
export function checkNewLinks(links: LinkInput[]): void {
  for (const key of ['name', 'url', 'filepath'] as const) {
    const seen = new Set<string>();
    for (const l of links) {
      const v = l[key];
      if (v === null) continue;
      if (seen.has(v)) throw apiError(400, `Validation failed: Links have duplicate values (${v})`);
      seen.add(v);
    }
  }
  for (const l of links) {
    const [first] = linkErrors(l, []);
    if (first) throw apiError(400, `Validation failed: Links ${first[0]!.toLowerCase()}${first.slice(1)}`);
  }
}

export function findRelease(db: Pick<Kysely<DB>, 'selectFrom'>, projectId: number, tag: string): Promise<ReleaseRow | undefined> {
  return db.selectFrom('releases').selectAll().where('project_id', '=', projectId).where('tag', '=', tag).executeTakeFirst();
}

/** The releases of some tags of a project, by tag (for the tags API's `release`). */
export async function releasesOfTags(db: Kysely<DB>, projectId: number, tags: string[]): Promise<Map<string, ReleaseRow>> {
  if (tags.length === 0) return new Map();
  const out = new Map<string, ReleaseRow>();
  for (let i = 0; i < tags.length; i += 500) {
    const rows = await db.selectFrom('releases').selectAll().where('project_id', '=', projectId).where('tag', 'in', tags.slice(i, i + 500)).execute();
    for (const r of rows) out.set(r.tag, r);
  }
  return out;
}

export interface NewRelease {
  projectId: number;
  tag: string;
  sha: string | null;
  name: string | null;
  description: string | null;
  authorId: number;
  releasedAt: string | undefined;
  links: LinkInput[];
  milestoneIds: number[];
}

async function setMilestones(trx: Transaction<DB>, releaseId: number, milestoneIds: number[]): Promise<void> {
  await trx.deleteFrom('release_milestones').where('release_id', '=', releaseId).execute();
  for (const id of [...new Set(milestoneIds)]) await trx.insertInto('release_milestones').values({ release_id: releaseId, milestone_id: id }).execute();
}

/** Creates a release; 409 `Release already exists` when the tag has one (also when one is made meanwhile). */
export async function createRelease(app: AppContext, r: NewRelease): Promise<ReleaseRow> {
  checkNewLinks(r.links);
  const release = await insertRelease(app, r);
  await emitEvent(app, { kind: 'release', projectId: r.projectId, release, action: 'create' });
  return release;
}

function insertRelease(app: AppContext, r: NewRelease): Promise<ReleaseRow> {
  // A release made meanwhile by another request (PostgreSQL's snapshot does not see it) trips the unique index.
  return onUniqueViolation(() => app.database.transaction(async (trx) => {
    if (await findRelease(trx, r.projectId, r.tag)) throw apiError(409, 'Release already exists');
    const now = nowIso();
    const row = {
      project_id: r.projectId,
      tag: r.tag,
      name: r.name,
      description: r.description,
      author_id: r.authorId,
      sha: r.sha,
      released_at: r.releasedAt ?? now,
      created_at: now,
      updated_at: now,
    };
    const { id } = await trx.insertInto('releases').values(row).returning('id').executeTakeFirstOrThrow();
    for (const l of r.links) await trx.insertInto('release_links').values({ release_id: Number(id), ...l, created_at: now, updated_at: now }).execute();
    await setMilestones(trx, Number(id), r.milestoneIds);
    return Object.assign(row, { id: Number(id) });
  }), () => apiError(409, 'Release already exists'));
}

export interface ReleaseChanges {
  name?: string | null;
  description?: string | null;
  releasedAt?: string;
  milestoneIds?: number[];
}

export async function updateRelease(app: AppContext, release: ReleaseRow, ch: ReleaseChanges): Promise<ReleaseRow> {
  const fresh = await app.database.transaction(async (trx) => {
    const set: Partial<ReleaseRow> = { updated_at: nowIso() };
    if (ch.name !== undefined) set.name = ch.name;
    if (ch.description !== undefined) set.description = ch.description;
    if (ch.releasedAt !== undefined) set.released_at = ch.releasedAt;
    const res = await trx.updateTable('releases').set(set).where('id', '=', release.id).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) throw apiError(404, 'Release does not exist');
    if (ch.milestoneIds !== undefined) await setMilestones(trx, release.id, ch.milestoneIds);
    return (await trx.selectFrom('releases').selectAll().where('id', '=', release.id).executeTakeFirstOrThrow());
  });
  await emitEvent(app, { kind: 'release', projectId: fresh.project_id, release: fresh, action: 'update' });
  return fresh;
}

async function deleteRows(trx: Transaction<DB>, releaseIds: number[]): Promise<void> {
  if (releaseIds.length === 0) return;
  await trx.deleteFrom('release_links').where('release_id', 'in', releaseIds).execute();
  await trx.deleteFrom('release_milestones').where('release_id', 'in', releaseIds).execute();
  await trx.deleteFrom('releases').where('id', 'in', releaseIds).execute();
}

export async function deleteRelease(app: AppContext, release: ReleaseRow): Promise<void> {
  // The payload is built now, while the release's links are still there to show.
  await emitEvent(app, { kind: 'release', projectId: release.project_id, release, action: 'delete' });
  await app.database.transaction((trx) => deleteRows(trx, [release.id]));
}

/** A deleted project's releases go with it (a projectDeletionHooks entry, registered by the releases routes). */
export async function deleteProjectReleases(trx: Transaction<DB>, projectId: number): Promise<void> {
  const rows = await trx.selectFrom('releases').select('id').where('project_id', '=', projectId).execute();
  await deleteRows(trx, rows.map((r) => r.id));
}

/** Deleting a tag deletes its release (GitLab's Tags::DestroyService). */
export async function deleteReleaseOfTag(app: AppContext, projectId: number, tag: string): Promise<void> {
  await app.database.transaction(async (trx) => {
    const rows = await trx.selectFrom('releases').select('id').where('project_id', '=', projectId).where('tag', '=', tag).execute();
    await deleteRows(trx, rows.map((r) => r.id));
  });
}

export async function linksOf(db: Kysely<DB>, releaseIds: number[]): Promise<Map<number, ReleaseLinkRow[]>> {
  const out = new Map<number, ReleaseLinkRow[]>(releaseIds.map((id) => [id, []]));
  if (releaseIds.length === 0) return out;
  const rows = await db.selectFrom('release_links').selectAll().where('release_id', 'in', releaseIds).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  for (const r of rows) out.get(r.release_id)?.push(r);
  return out;
}
