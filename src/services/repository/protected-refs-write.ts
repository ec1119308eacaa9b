// Writing protected branch and tag rules (GitLab's ProtectedBranches::CreateService/UpdateService,
// ProtectedTags::CreateService), and protecting a project's default branch when it first appears
// (Projects::ProtectDefaultBranchService).
import type { Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { DB } from '../../db/types.js';
import { isUniqueViolation } from '../projects/unique.js';
import { defaultsProtect, loadProtectedRefRules, namespaceProtectionDefaults, rulesChanged, type RefAction, type RefKind } from './protected-refs.js';

export interface NewLevel {
  action: RefAction;
  access_level: number;
}

export interface NewRule {
  kind: RefKind;
  name: string;
  allowForcePush: boolean;
  codeOwnerApprovalRequired: boolean;
  levels: NewLevel[];
}

async function insertLevels(trx: Transaction<DB>, refId: number, levels: NewLevel[], now: string): Promise<void> {
  // Callers refuse a level given twice (the route's 422); the unique index stands behind them.
  const rows = levels.map((l) => ({ protected_ref_id: refId, action: l.action, access_level: l.access_level, created_at: now }));
  if (rows.length > 0) await trx.insertInto('protected_ref_access_levels').values(rows).execute();
}

/** Inserts a rule; null when the project already has one of that kind and name (a racing creation included). */
export async function createProtectedRef(app: AppContext, projectId: number, rule: NewRule): Promise<number | null> {
  try {
    const id = await app.database.transaction(async (trx) => {
      const now = nowIso();
      const row = await trx
        .insertInto('protected_refs')
        .values({
          project_id: projectId,
          kind: rule.kind,
          name: rule.name,
          allow_force_push: rule.allowForcePush ? 1 : 0,
          code_owner_approval_required: rule.codeOwnerApprovalRequired ? 1 : 0,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await insertLevels(trx, row.id, rule.levels, now);
      return row.id;
    });
    rulesChanged();
    return id;
  } catch (err) {
    if (isUniqueViolation(err)) return null;
    throw err;
  }
}

export interface RuleChanges {
  allowForcePush?: boolean;
  codeOwnerApprovalRequired?: boolean;
  add: NewLevel[];
  /** Existing access level ids to change ({id, access_level}) or remove. */
  change: Array<{ id: number; access_level: number }>;
  remove: number[];
}

/** Applies PATCH changes; 'duplicate' when a level would be listed twice for one action. */
export async function updateProtectedRef(app: AppContext, refId: number, changes: RuleChanges): Promise<'ok' | 'duplicate'> {
  try {
    await app.database.transaction(async (trx) => {
      const now = nowIso();
      // The rule's row first: concurrent updates of one rule queue here.
      await trx
        .updateTable('protected_refs')
        .set({
          updated_at: now,
          ...(changes.allowForcePush !== undefined ? { allow_force_push: changes.allowForcePush ? 1 : 0 } : {}),
          ...(changes.codeOwnerApprovalRequired !== undefined ? { code_owner_approval_required: changes.codeOwnerApprovalRequired ? 1 : 0 } : {}),
        })
        .where('id', '=', refId)
        .execute();
      if (changes.remove.length > 0) {
        await trx.deleteFrom('protected_ref_access_levels').where('protected_ref_id', '=', refId).where('id', 'in', changes.remove).execute();
      }
      for (const c of changes.change) {
        await trx.updateTable('protected_ref_access_levels').set({ access_level: c.access_level }).where('protected_ref_id', '=', refId).where('id', '=', c.id).execute();
      }
      for (const l of changes.add) {
        await trx.insertInto('protected_ref_access_levels').values({ protected_ref_id: refId, action: l.action, access_level: l.access_level, created_at: now }).execute();
      }
    });
    rulesChanged();
    return 'ok';
  } catch (err) {
    if (isUniqueViolation(err)) return 'duplicate';
    throw err;
  }
}

/** Sets one action's levels to exactly `level` (GitLab's LegacyApiUpdateService). */
export async function replaceLevels(app: AppContext, refId: number, changes: Array<{ action: RefAction; level: number }>): Promise<void> {
  await app.database.transaction(async (trx) => {
    const now = nowIso();
    await trx.updateTable('protected_refs').set({ updated_at: now }).where('id', '=', refId).execute();
    for (const { action, level } of changes) {
      await trx.deleteFrom('protected_ref_access_levels').where('protected_ref_id', '=', refId).where('action', '=', action).execute();
      await trx.insertInto('protected_ref_access_levels').values({ protected_ref_id: refId, action, access_level: level, created_at: now }).execute();
    }
  });
  rulesChanged();
}

export async function deleteProtectedRef(app: AppContext, refId: number): Promise<void> {
  await app.database.transaction(async (trx) => {
    await trx.deleteFrom('protected_ref_access_levels').where('protected_ref_id', '=', refId).execute();
    await trx.deleteFrom('protected_refs').where('id', '=', refId).execute();
  });
  rulesChanged();
}

/** A deleted project's rules (a project deletion hook). */
export async function deleteProjectProtectedRefs(trx: Transaction<DB>, projectId: number): Promise<void> {
  const ids = trx.selectFrom('protected_refs').select('id').where('project_id', '=', projectId);
  await trx.deleteFrom('protected_ref_access_levels').where('protected_ref_id', 'in', ids).execute();
  await trx.deleteFrom('protected_refs').where('project_id', '=', projectId).execute();
  // Inside the deletion's transaction: the project's rules are gone with it either way.
  rulesChanged();
}

/**
 * Projects::ProtectDefaultBranchService: when a project's default branch first appears, it is
 * protected as its namespace says (the instance default: Maintainers push and merge, no force
 * push), unless a rule of that name exists already or the namespace protects nothing.
 */
export async function protectDefaultBranch(app: AppContext, projectId: number, branch: string): Promise<void> {
  const project = await app.db
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select(['projects.namespace_id', 'namespaces.kind'])
    .where('projects.id', '=', projectId)
    .executeTakeFirst();
  if (!project) return;
  const defaults = await namespaceProtectionDefaults(app, project.namespace_id, project.kind);
  if (!defaultsProtect(defaults)) return;
  // A rule that already covers it, wildcards included, is left to decide (protect_branch?).
  const rules = await loadProtectedRefRules(app, projectId);
  if (rules.some((r) => r.kind === 'branch' && r.matches(branch))) return;
  await createProtectedRef(app, projectId, {
    kind: 'branch',
    name: branch,
    allowForcePush: defaults.allowForcePush,
    codeOwnerApprovalRequired: false,
    levels: [
      { action: 'push', access_level: defaults.pushLevel },
      { action: 'merge', access_level: defaults.mergeLevel },
    ],
  });
}
