// Releases of a project (GitLab's Releases::CreateService, UpdateService, DestroyService and
// Releases::Link validations). A release belongs to a tag by name; the tag lives in git.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { DB } from '../db/types.js';
import type { ReleaseLinksTable, ReleasesTable } from '../db/tables/releases.js';
import { apiError } from '../http/errors.js';

export type ReleaseRow = Selectable<ReleasesTable>;
export type ReleaseLinkRow = Selectable<ReleaseLinksTable>;

export const LINK_TYPES = ['other', 'runbook', 'image', 'package'] as const;

export interface LinkInput {
  name: string;
  url: string;
  filepath: string | null;
  link_type: string;
}

/** GitLab's Releases::Link::FILEPATH_REGEX: a path from the root, no `//`, ending in a letter or digit. */
const FILEPATH_RE = /^\/[^/](?!.*\/\/)[-.\w/]*[\da-zA-Z]$/;

/** The checks of Releases::Link (and the release's duplicate check); the first failure as GitLab words it. */
export function checkLinks(links: LinkInput[], existing: ReleaseLinkRow[] = [], self: number | null = null): void {
  const fail = (m: string) => apiError(400, `Validation failed: ${m}`);
  for (const l of links) {
    if (l.name.trim() === '') throw fail("Links name can't be blank");
    if (l.url.trim() === '') throw fail("Links url can't be blank");
    let u: URL | null = null;
    try {
      u = new URL(l.url);
    } catch {
      u = null;
    }
    if (!u || !['http:', 'https:', 'ftp:'].includes(u.protocol)) throw fail('Links url is blocked: Only allowed schemes are http, https, ftp');
    if (l.filepath !== null && !FILEPATH_RE.test(l.filepath)) throw fail('Links filepath is in an invalid format');
    if (!(LINK_TYPES as readonly string[]).includes(l.link_type)) throw fail('Links link type is not included in the list');
  }
  const others = existing.filter((e) => e.id !== self);
  const all = [...others, ...links];
  for (const key of ['name', 'url', 'filepath'] as const) {
    const seen = new Set<string>();
    for (const l of all) {
      const v = l[key];
      if (v === null) continue;
      if (seen.has(v)) throw fail(`Links have duplicate values (${v})`);
      seen.add(v);
    }
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
  checkLinks(r.links);
  return app.database.transaction(async (trx) => {
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
  });
}

export interface ReleaseChanges {
  name?: string | null;
  description?: string | null;
  releasedAt?: string;
  milestoneIds?: number[];
}

export async function updateRelease(app: AppContext, release: ReleaseRow, ch: ReleaseChanges): Promise<ReleaseRow> {
  return app.database.transaction(async (trx) => {
    const set: Partial<ReleaseRow> = { updated_at: nowIso() };
    if (ch.name !== undefined) set.name = ch.name;
    if (ch.description !== undefined) set.description = ch.description;
    if (ch.releasedAt !== undefined) set.released_at = ch.releasedAt;
    const res = await trx.updateTable('releases').set(set).where('id', '=', release.id).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) throw apiError(404, 'Release does not exist');
    if (ch.milestoneIds !== undefined) await setMilestones(trx, release.id, ch.milestoneIds);
    return (await trx.selectFrom('releases').selectAll().where('id', '=', release.id).executeTakeFirstOrThrow());
  });
}

async function deleteRows(trx: Transaction<DB>, releaseIds: number[]): Promise<void> {
  if (releaseIds.length === 0) return;
  await trx.deleteFrom('release_links').where('release_id', 'in', releaseIds).execute();
  await trx.deleteFrom('release_milestones').where('release_id', 'in', releaseIds).execute();
  await trx.deleteFrom('releases').where('id', 'in', releaseIds).execute();
}

export async function deleteRelease(app: AppContext, release: ReleaseRow): Promise<void> {
  await app.database.transaction((trx) => deleteRows(trx, [release.id]));
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
