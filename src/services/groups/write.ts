// Creating and updating groups: one transaction each, the route claimed or moved with the row.
import type { Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import type { DB } from '../../db/types.js';
import { ApiError, validationError } from '../../http/errors.js';
import { AccessLevel } from '../access.js';
import { recordAudit } from '../audit.js';
import { claimRoute, movePrefix, pathTaken } from '../routes.js';
import type { GroupRow } from './lookup.js';
import { effectiveSettings, type GroupSettings } from './settings.js';
import { moreVisible, nameErrors, pathErrors, rubyInspect } from './validate.js';

export interface NewGroup {
  name: string;
  path: string;
  parent: GroupRow | null;
  visibility: string;
  description: string;
  settings: GroupSettings;
  avatarPath?: string | null;
}

/** Creates a group; the creator becomes its Owner. Failures are 400 `Failed to save group {…}`. */
export async function createGroup(app: AppContext, user: UserRow, input: NewGroup, ip: string | null): Promise<GroupRow> {
  const errors: Record<string, string[]> = {};
  const ne = nameErrors(input.name);
  if (ne.length) errors.name = ne;
  const pe = pathErrors(input.path, input.parent === null);
  if (pe.length) errors.path = pe;
  if (input.parent && moreVisible(input.visibility, input.parent.visibility)) {
    errors.visibility_level = [`${input.visibility} is not allowed since the parent group has a ${input.parent.visibility} visibility.`];
  }
  if (Object.keys(errors).length) throw failedToSave(errors);
  const fullPath = input.parent ? `${input.parent.full_path}/${input.path}` : input.path;
  const fullName = input.parent ? `${input.parent.full_name} / ${input.name}` : input.name;
  return app.database.transaction(async (trx) => {
    if (await pathTaken(trx, fullPath)) throw failedToSave({ path: ['has already been taken'] });
    return insertGroup(trx, user, input, fullPath, fullName, ip);
  }).catch((err: unknown) => {
    // Two creators racing for one path on PostgreSQL: the unique route index decides.
    const code = (err as { code?: string }).code;
    if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE') throw failedToSave({ path: ['has already been taken'] });
    throw err;
  });
}

async function insertGroup(trx: Transaction<DB>, user: UserRow, input: NewGroup, fullPath: string, fullName: string, ip: string | null): Promise<GroupRow> {
  {
    const now = nowIso();
    const inserted = await trx
      .insertInto('namespaces')
      .values({
        name: input.name,
        path: input.path,
        full_path: fullPath,
        full_name: fullName,
        kind: 'group',
        parent_id: input.parent?.id ?? null,
        traversal: '',
        owner_id: null,
        visibility: input.visibility,
        description: input.description,
        avatar_path: input.avatarPath ?? null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const traversal = `${input.parent?.traversal ?? '/'}${inserted.id}/`;
    await trx.updateTable('namespaces').set({ traversal }).where('id', '=', inserted.id).execute();
    await trx
      .insertInto('group_settings')
      .values({
        namespace_id: inserted.id,
        settings: JSON.stringify(input.settings),
        archived: 0,
        marked_for_deletion_on: null,
        repository_storage: 'default',
        created_by_id: user.id,
        updated_at: now,
      })
      .execute();
    await claimRoute(trx, 'Namespace', inserted.id, fullPath, fullName);
    await trx
      .insertInto('members')
      .values({
        source_type: 'Namespace',
        source_id: inserted.id,
        user_id: user.id,
        access_level: AccessLevel.OWNER,
        expires_at: null,
        created_by_id: user.id,
        member_role_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await recordAudit(trx, {
      author: user,
      entityType: 'Group',
      entityId: inserted.id,
      entityPath: fullPath,
      eventName: 'group_created',
      targetType: 'Group',
      targetId: inserted.id,
      targetDetails: fullPath,
      ipAddress: ip,
    });
    return trx.selectFrom('namespaces').selectAll().where('id', '=', inserted.id).executeTakeFirstOrThrow();
  }
}

export function failedToSave(errors: Record<string, string[]>): ApiError {
  return new ApiError(400, { message: `Failed to save group ${rubyInspect(errors)}` });
}

export interface GroupChanges {
  name?: string;
  path?: string;
  description?: string;
  visibility?: string;
  settings?: GroupSettings;
  /** undefined: unchanged; null: removed. */
  avatarPath?: string | null;
}

/** Highest visibility among a group's subgroups and projects (for lowering a group's visibility). */
async function highestChildVisibility(trx: Transaction<DB>, g: GroupRow): Promise<{ groups: string[]; projects: string[] }> {
  const groups = await trx
    .selectFrom('namespaces')
    .select('visibility')
    .distinct()
    .where('traversal', 'like', `${g.traversal}%`)
    .where('id', '!=', g.id)
    .execute();
  const projects = await trx
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select('projects.visibility')
    .distinct()
    .where('namespaces.traversal', 'like', `${g.traversal}%`)
    .execute();
  return { groups: groups.map((r) => r.visibility), projects: projects.map((r) => r.visibility) };
}

/** Updates a group; model errors are 400 `{"message":{attr:[…]}}`. Returns the changed keys. */
export async function updateGroup(
  app: AppContext,
  user: UserRow,
  group: GroupRow,
  changes: GroupChanges,
  ip: string | null,
): Promise<string[]> {
  const errors: Record<string, string[]> = {};
  if (changes.name !== undefined) {
    const e = nameErrors(changes.name);
    if (e.length) errors.name = e;
  }
  if (changes.path !== undefined) {
    const e = pathErrors(changes.path, group.parent_id === null);
    if (e.length) errors.path = e;
  }
  if (Object.keys(errors).length) throw validationError(errors);
  return app.database.transaction(async (trx) => {
    const current = await app.database
      .forUpdate(trx.selectFrom('namespaces').selectAll().where('id', '=', group.id))
      .executeTakeFirstOrThrow();
    const parent = current.parent_id
      ? await trx.selectFrom('namespaces').selectAll().where('id', '=', current.parent_id).executeTakeFirst()
      : undefined;
    const changed: string[] = [];
    const now = nowIso();
    if (changes.visibility !== undefined && changes.visibility !== current.visibility) {
      if (parent && moreVisible(changes.visibility, parent.visibility)) {
        throw validationError({
          visibility_level: [`${changes.visibility} is not allowed since the parent group has a ${parent.visibility} visibility.`],
        });
      }
      const kids = await highestChildVisibility(trx, current);
      if (kids.groups.some((v) => moreVisible(v, changes.visibility!))) {
        throw validationError({ visibility_level: [`${changes.visibility} is not allowed since there are sub-groups with higher visibility.`] });
      }
      if (kids.projects.some((v) => moreVisible(v, changes.visibility!))) {
        throw validationError({
          visibility_level: [`${changes.visibility} is not allowed since this group contains projects with higher visibility.`],
        });
      }
      changed.push('visibility');
    }
    const newPath = changes.path ?? current.path;
    const newName = changes.name ?? current.name;
    const newFullPath = parent ? `${parent.full_path}/${newPath}` : newPath;
    const newFullName = parent ? `${parent.full_name} / ${newName}` : newName;
    if (newPath !== current.path) {
      if (newFullPath.toLowerCase() !== current.full_path.toLowerCase() && (await pathTaken(trx, newFullPath))) {
        throw validationError({ path: ['has already been taken'] });
      }
      await movePrefix(trx, current.full_path, newFullPath);
      changed.push('path');
    }
    if (newName !== current.name) {
      await renameDescendants(trx, current, newFullName);
      changed.push('name');
    }
    const patch: Record<string, unknown> = { updated_at: now, name: newName, path: newPath, full_path: newFullPath, full_name: newFullName };
    if (changes.description !== undefined && changes.description !== current.description) {
      patch.description = changes.description;
      changed.push('description');
    }
    if (changes.visibility !== undefined) patch.visibility = changes.visibility;
    if (changes.avatarPath !== undefined) {
      patch.avatar_path = changes.avatarPath;
      changed.push('avatar');
    }
    await trx.updateTable('namespaces').set(patch).where('id', '=', current.id).execute();
    await trx.updateTable('routes').set({ name: newFullName }).where('source_type', '=', 'Namespace').where('source_id', '=', current.id).execute();
    if (changes.settings && Object.keys(changes.settings).length) {
      const row = await trx.selectFrom('group_settings').select(['settings']).where('namespace_id', '=', current.id).executeTakeFirst();
      const before = effectiveSettings(row?.settings);
      const stored = row ? (JSON.parse(row.settings) as GroupSettings) : {};
      for (const [k, v] of Object.entries(changes.settings)) {
        if (k === 'ai_settings') {
          stored.ai_settings = Object.assign({}, ((stored.ai_settings as object) ?? {}), { ...(v as object) });
          changed.push('ai_settings');
          continue;
        }
        if (JSON.stringify(before[k]) !== JSON.stringify(v)) changed.push(k);
        stored[k] = v;
      }
      if (row) {
        await trx.updateTable('group_settings').set({ settings: JSON.stringify(stored), updated_at: now }).where('namespace_id', '=', current.id).execute();
      } else {
        await trx
          .insertInto('group_settings')
          .values({ namespace_id: current.id, settings: JSON.stringify(stored), archived: 0, marked_for_deletion_on: null, repository_storage: 'default', created_by_id: null, updated_at: now })
          .execute();
      }
    }
    if (changed.length) {
      await recordAudit(trx, {
        author: user,
        entityType: 'Group',
        entityId: current.id,
        entityPath: newFullPath,
        eventName: 'group_updated',
        targetType: 'Group',
        targetId: current.id,
        targetDetails: newFullPath,
        details: { changes: changed },
        ipAddress: ip,
      });
    }
    return changed;
  });
}

/** Rewrites full_name of a group's descendants after it is renamed or moved. */
export async function renameDescendants(trx: Transaction<DB>, group: GroupRow, newFullName: string): Promise<void> {
  const rows = await trx
    .selectFrom('namespaces')
    .select(['id', 'full_name'])
    .where('traversal', 'like', `${group.traversal}%`)
    .where('id', '!=', group.id)
    .execute();
  for (const r of rows) {
    if (!r.full_name.startsWith(group.full_name + ' / ')) continue;
    const name = newFullName + r.full_name.slice(group.full_name.length);
    await trx.updateTable('namespaces').set({ full_name: name }).where('id', '=', r.id).execute();
    await trx.updateTable('routes').set({ name }).where('source_type', '=', 'Namespace').where('source_id', '=', r.id).execute();
  }
}
