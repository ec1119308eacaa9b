// Loading what group presenters need (settings, custom attributes, statistics, sharing, projects)
// in a fixed number of queries per list.
import { storageSizes } from '../../../services/repository/repository-size.js';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import type { Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import type { GroupRow, GroupSettingsRow } from '../../../services/groups/lookup.js';
import { settingsOfListed, type ListedGroupRow } from '../../../services/groups/list.js';
import { sharedWithGroups } from '../../../services/groups/sharing.js';
import { grantedLevel, type Grant } from '../../../services/groups/visibility.js';
import { presentProjects } from '../entities/project.js';
import { presentGroup, presentGroupDetail, type GroupStatistics } from '../entities/group.js';
import { visibleProjectsQuery } from './projects-query.js';

export async function customAttributesFor(db: Kysely<DB>, ids: number[]): Promise<Map<number, Array<{ key: string; value: string }>>> {
  const map = new Map<number, Array<{ key: string; value: string }>>();
  for (const id of ids) map.set(id, []);
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('namespace_custom_attributes')
      .select(['namespace_id', 'key', 'value'])
      .where('namespace_id', 'in', ids.slice(i, i + 500))
      .orderBy('key')
      .execute();
    for (const r of rows) map.get(r.namespace_id)!.push({ key: r.key, value: r.value });
  }
  return map;
}

/** Storage statistics from the real repository sizes of the projects in the group and below. */
export async function statisticsFor(db: Kysely<DB>, g: GroupRow): Promise<GroupStatistics> {
  const row = await db
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select((eb) => [eb.fn.sum<number>('projects.repository_size').as('size'), eb.fn.sum<number>('projects.wiki_size').as('wiki'), eb.fn.sum<number>('projects.snippets_size').as('snippets'), eb.fn.sum<number>('projects.uploads_size').as('uploads')])
    .where('namespaces.traversal', 'like', `${g.traversal}%`)
    .executeTakeFirst();
  return storageSizes({ repository: Number(row?.size ?? 0), wiki: Number(row?.wiki ?? 0), snippets: Number(row?.snippets ?? 0), uploads: Number(row?.uploads ?? 0) });
}

export function rootStorageStatistics(s: GroupStatistics) {
  return {
    build_artifacts_size: 0,
    container_registry_size: 0,
    container_registry_size_is_estimated: false,
    dependency_proxy_size: 0,
    lfs_objects_size: s.lfs_objects_size,
    packages_size: s.packages_size,
    pipeline_artifacts_size: s.pipeline_artifacts_size,
    repository_size: s.repository_size,
    snippets_size: s.snippets_size,
    storage_size: s.storage_size,
    uploads_size: s.uploads_size,
    wiki_size: s.wiki_size,
  };
}

/** Presents a page of groups for a list endpoint. */
export async function presentGroupList(
  c: Ctx,
  rows: ListedGroupRow[],
  opts: { grants: Grant[]; statistics: boolean; withCustomAttributes: boolean },
) {
  const ids = rows.map((r) => r.id);
  const attrs = opts.withCustomAttributes ? await customAttributesFor(c.app.db, ids) : undefined;
  const isAdmin = c.user?.is_admin === 1;
  const out = [];
  for (const g of rows) {
    const st = settingsOfListed(g);
    const statistics = opts.statistics ? await statisticsFor(c.app.db, g) : undefined;
    out.push(
      presentGroup(g, st, {
        base: c.base,
        config: c.app.config,
        isAdmin,
        access: isAdmin ? AccessLevel.OWNER : grantedLevel(opts.grants, g.traversal),
        customAttributes: attrs?.get(g.id),
        statistics,
        rootStorageStatistics: statistics ? rootStorageStatistics(statistics) : null,
      }),
    );
  }
  return out;
}

/** Presents one group as GroupDetail (projects and shared projects capped at 100). */
export async function presentGroupDetailFor(
  c: Ctx,
  g: GroupRow,
  st: GroupSettingsRow,
  access: number,
  opts: { withProjects: boolean; withCustomAttributes?: boolean },
) {
  const isAdmin = c.user?.is_admin === 1;
  let projects: unknown[] | undefined;
  let sharedProjects: unknown[] | undefined;
  if (opts.withProjects) {
    const rows = await (await visibleProjectsQuery(c.app.db, c.user)).where('projects.namespace_id', '=', g.id).orderBy('projects.id').limit(100).execute();
    projects = await presentProjects(c.app.db, rows, { base: c.base, user: c.user });
    sharedProjects = await sharedProjectsFor(c, g.id);
  }
  const attrs = opts.withCustomAttributes && isAdmin ? (await customAttributesFor(c.app.db, [g.id])).get(g.id) : undefined;
  return presentGroupDetail(
    g,
    st,
    { base: c.base, config: c.app.config, isAdmin, access, customAttributes: attrs },
    { sharedWithGroups: await sharedWithGroups(c.app.db, g.id, c.user), projects, sharedProjects },
  );
}

async function sharedProjectsFor(c: Ctx, groupId: number): Promise<unknown[]> {
  const hasLinks = await projectGroupLinksAvailable(c.app.db);
  if (!hasLinks) return [];
  const rows = await (await visibleProjectsQuery(c.app.db, c.user))
    .where('projects.id', 'in', (eb: any) =>
      eb.selectFrom('project_group_links').select('project_group_links.project_id').where('project_group_links.group_id', '=', groupId),
    )
    .orderBy('projects.id')
    .limit(100)
    .execute();
  return presentProjects(c.app.db, rows, { base: c.base, user: c.user });
}

let linksTable: boolean | undefined;

/** Project-to-group links belong to the projects module; they may not exist in this build. */
export async function projectGroupLinksAvailable(db: Kysely<DB>): Promise<boolean> {
  if (linksTable !== undefined) return linksTable;
  try {
    await (db as Kysely<any>).selectFrom('project_group_links').select('id').limit(1).execute();
    linksTable = true;
  } catch {
    linksTable = false;
  }
  return linksTable;
}
