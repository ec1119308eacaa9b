// Finding a group from `:id` (number or URL-encoded full path) with the caller's access, and the
// 404-before-403 rule: a caller who cannot read a group learns nothing about it.
import type { Selectable } from 'kysely';
import { forbidden, notFound } from '../../http/errors.js';
import { selectBatch } from '../../db/batch.js';
import { resolveId } from '../../http/ids.js';
import type { Ctx } from '../../http/route.js';
import type { NamespacesTable } from '../../db/tables/core.js';
import type { GroupSettingsTable } from '../../db/tables/groups.js';
import type { DB } from '../../db/types.js';
import type { Kysely } from 'kysely';
import { AccessLevel } from '../access.js';
import { canReadGroup, groupAccess } from './visibility.js';

export type GroupRow = Selectable<NamespacesTable>;
export type GroupSettingsRow = Selectable<GroupSettingsTable>;

export interface LoadedGroup {
  group: GroupRow;
  settings: GroupSettingsRow;
  /** The caller's access level (admins count as Owner). */
  access: number;
}

function groupQuery(db: Kysely<DB>, id: number) {
  return db.selectFrom('namespaces').selectAll().where('id', '=', id).where('kind', '=', 'group');
}

export async function loadGroupById(db: Kysely<DB>, id: number): Promise<GroupRow | undefined> {
  return groupQuery(db, id).executeTakeFirst();
}

/** A group's settings row, or the defaults of a group that has none. */
export function settingsOrDefault(namespaceId: number, row: GroupSettingsRow | undefined): GroupSettingsRow {
  return (
    row ?? {
      id: 0,
      namespace_id: namespaceId,
      settings: '{}',
      archived: 0,
      marked_for_deletion_on: null,
      repository_storage: 'default',
      created_by_id: null,
      updated_at: '',
    }
  );
}

function settingsQuery(db: Kysely<DB>, namespaceId: number) {
  return db.selectFrom('group_settings').selectAll().where('namespace_id', '=', namespaceId);
}

export async function loadSettings(db: Kysely<DB>, namespaceId: number): Promise<GroupSettingsRow> {
  return settingsOrDefault(namespaceId, await settingsQuery(db, namespaceId).executeTakeFirst());
}

export interface FindOpts {
  /** Access the caller needs; below it (but able to read) is 403. */
  minAccess?: number;
  /** The resource name in the 404 body. */
  resource?: string;
}

/** Resolves `:id` to a readable group or throws 404 (or 403 when readable but lacking `minAccess`). */
export async function findGroup(c: Ctx, rawId: unknown, opts: FindOpts = {}): Promise<LoadedGroup> {
  const resource = opts.resource ?? 'Group';
  const id = await resolveId(c, 'Namespace', String(rawId ?? ''), { allowTopLevelPath: true });
  if (id === null) throw notFound(resource);
  // The settings come with the group (one round trip on PostgreSQL); they are returned only once
  // the caller is known to be allowed to read the group.
  const db = c.app.db;
  const loaded = await selectBatch(db, {
    group: groupQuery(db, id),
    settings: settingsQuery(db, id),
  });
  const group = loaded.group[0];
  if (!group) throw notFound(resource);
  const user = c.user;
  const access = user?.is_admin ? AccessLevel.OWNER : await groupAccess(c.app.db, user, group);
  if (!(await canReadGroup(c.app.db, user, group))) throw notFound(resource);
  if (opts.minAccess !== undefined && access < opts.minAccess) throw forbidden();
  return { group, settings: settingsOrDefault(group.id, loaded.settings[0]), access };
}
