// Protected branches and tags: which names a rule covers, and who may push, merge, force-push,
// create or delete under it (GitLab's ProtectedRef, RefMatcher and Gitlab::UserAccess). Every
// writer of refs asks here: git pushes (through the pre-receive hook, src/git/pre-receive-hook.ts),
// the files, commits, branches and tags APIs, merges and rebases.
import { ProjectCache } from '../project-cache.js';
import { prepared } from '../../db/prepared.js';
import type { AppContext } from '../../context.js';
import type { ProtectedRefAccessLevelsTable } from '../../db/tables/protected-refs.js';
import type { UserRow } from '../../db/repositories/users.js';
import { AccessLevel } from '../access.js';
import { refMatcher } from '../../git/ref-matcher.js';

export { refMatcher };

export type RefKind = 'branch' | 'tag';
export type RefAction = ProtectedRefAccessLevelsTable['action'];

/** GitLab's access levels for protected refs: no one, Developers + Maintainers, Maintainers, administrators. */
export const NO_ONE = 0;
export const ADMIN_ONLY = 60;
export const PROTECTED_REF_LEVELS = [30, 40, 60, 0] as const;

export const LEVEL_DESCRIPTIONS: Record<number, string> = {
  0: 'No one',
  30: 'Developers + Maintainers',
  40: 'Maintainers',
  60: 'Instance admins',
};

export interface AccessLevelRow {
  id: number;
  action: RefAction;
  access_level: number;
}

export interface ProtectedRefRule {
  id: number;
  kind: RefKind;
  name: string;
  allowForcePush: boolean;
  codeOwnerApprovalRequired: boolean;
  levels: AccessLevelRow[];
  matches(ref: string): boolean;
}

/** Who is writing: their access to the project, and whether they may write code there at all. */
export interface RefActor {
  access: number;
  isAdmin: boolean;
  /** push_code: Developer and above on a project that is not archived. */
  canPushCode: boolean;
}

export function refActor(user: Pick<UserRow, 'is_admin'> | null, access: number, archived: boolean | number): RefActor {
  return { access, isAdmin: !!user?.is_admin, canPushCode: user !== null && access >= AccessLevel.DEVELOPER && !archived };
}

/** One access level lets the actor through: GitLab's ProtectedRefAccess#check_access. */
function levelAllows(level: number, actor: RefActor): boolean {
  if (level === NO_ONE) return false;
  if (level === ADMIN_ONLY) return actor.isAdmin;
  // GITLAB-COMPAT: administrators have Owner access here, so role levels let them through even
  // where they are not members (GitLab looks at their own membership).
  return actor.canPushCode && actor.access >= level;
}

/** One rule lets the actor do `action` (any of its levels for that action lets them through). */
export function ruleAllows(rule: ProtectedRefRule, action: RefAction, actor: RefActor): boolean {
  return rule.levels.some((l) => l.action === action && levelAllows(l.access_level, actor));
}

/** EE's can_unprotect?: a rule that names who may unprotect it is changed or removed only by them. */
export function canUnprotect(rule: ProtectedRefRule, actor: RefActor): boolean {
  if (!rule.levels.some((l) => l.action === 'unprotect')) return true;
  return ruleAllows(rule, 'unprotect', actor);
}

/** The group's (or the instance's) default branch protection, as GitLab's DefaultBranchProtection. */
export interface BranchProtectionDefaults {
  pushLevel: number;
  mergeLevel: number;
  allowForcePush: boolean;
  developerCanInitialPush: boolean;
}

/** Legacy `default_branch_protection` levels 0-4 (GitLab's BranchProtection#to_hash). */
const LEGACY_LEVELS: Record<number, BranchProtectionDefaults> = {
  0: { pushLevel: 30, mergeLevel: 30, allowForcePush: true, developerCanInitialPush: false },
  1: { pushLevel: 30, mergeLevel: 40, allowForcePush: false, developerCanInitialPush: false },
  2: { pushLevel: 40, mergeLevel: 40, allowForcePush: false, developerCanInitialPush: false },
  3: { pushLevel: 40, mergeLevel: 30, allowForcePush: false, developerCanInitialPush: false },
  4: { pushLevel: 40, mergeLevel: 40, allowForcePush: false, developerCanInitialPush: true },
};

/** The instance default: LABWRIGHT_DEFAULT_BRANCH_PROTECTION, fully protected (2) unless set, as GitLab's. */
export function instanceDefaults(app: Pick<AppContext, 'config'>): BranchProtectionDefaults {
  return LEGACY_LEVELS[app.config.defaultBranchProtection] ?? LEGACY_LEVELS[2]!;
}

/** A legacy level's defaults as GitLab stores them (`default_branch_protection_defaults`). */
export function legacyLevelHash(level: number): Record<string, unknown> | undefined {
  const d = LEGACY_LEVELS[level];
  if (!d) return undefined;
  return {
    allowed_to_push: [{ access_level: d.pushLevel }],
    allow_force_push: d.allowForcePush,
    allowed_to_merge: [{ access_level: d.mergeLevel }],
    ...(d.developerCanInitialPush ? { developer_can_initial_push: true } : {}),
  };
}

/** ProtectDefaultBranchService's level for a list of allowed roles: no one, else Developers, else Maintainers, else administrators. */
function levelFromList(list: unknown): number {
  const levels = Array.isArray(list) ? list.map((x) => Number((x as { access_level?: unknown })?.access_level)) : [];
  if (levels.includes(0)) return 0;
  if (levels.includes(30)) return 30;
  if (levels.includes(40)) return 40;
  return ADMIN_ONLY;
}

/**
 * A group's defaults from its stored settings: the hash if the group set one, else its legacy
 * level, else the instance default. Personal namespaces use the instance default.
 */
export function protectionDefaultsFromSettings(stored: string | null | undefined, instance: BranchProtectionDefaults): BranchProtectionDefaults {
  let settings: Record<string, unknown> = {};
  try {
    if (stored) settings = JSON.parse(stored) as Record<string, unknown>;
  } catch {
    /* a damaged row reads as defaults */
  }
  const hash = settings.default_branch_protection_defaults as Record<string, unknown> | undefined;
  if (hash && typeof hash === 'object') {
    return {
      pushLevel: levelFromList(hash.allowed_to_push),
      mergeLevel: levelFromList(hash.allowed_to_merge),
      allowForcePush: hash.allow_force_push === true,
      developerCanInitialPush: hash.developer_can_initial_push === true,
    };
  }
  const legacy = settings.default_branch_protection;
  if (typeof legacy === 'number' && LEGACY_LEVELS[legacy]) return LEGACY_LEVELS[legacy]!;
  return instance;
}

/** DefaultBranchProtection#any?: anything at all is protected. */
export function defaultsProtect(d: BranchProtectionDefaults): boolean {
  return !(d.allowForcePush && d.pushLevel === 30 && d.mergeLevel === 30);
}

/** The rules of one project and the defaults of its namespace, with GitLab's questions about a ref. */
export class RefProtection {
  constructor(
    readonly rules: readonly ProtectedRefRule[],
    readonly defaults: BranchProtectionDefaults,
  ) {}

  matching(kind: RefKind, ref: string): ProtectedRefRule[] {
    return this.rules.filter((r) => r.kind === kind && r.matches(ref));
  }

  /** ProtectedBranch.protected?: a rule covers it, or the repository is empty and the namespace protects default branches. */
  isProtectedBranch(ref: string, emptyRepo = false): boolean {
    if (emptyRepo && defaultsProtect(this.defaults)) return true;
    return this.matching('branch', ref).length > 0;
  }

  isProtectedTag(ref: string): boolean {
    return this.matching('tag', ref).length > 0;
  }

  private accessible(kind: RefKind, ref: string, action: RefAction, actor: RefActor): boolean {
    return this.matching(kind, ref).some((r) => ruleAllows(r, action, actor));
  }

  /** The empty-repository exception: administrators and Maintainers create the first branch; Developers when the namespace lets them. */
  emptyRepoAllows(actor: RefActor): boolean {
    if (!actor.canPushCode) return false;
    if (actor.isAdmin || actor.access >= AccessLevel.MAINTAINER) return true;
    return this.defaults.developerCanInitialPush || this.defaults.pushLevel === 30;
  }

  /** Gitlab::UserAccess#can_push_to_branch? */
  canPushToBranch(actor: RefActor, ref: string, emptyRepo = false): boolean {
    if (!actor.canPushCode) return false;
    if (!this.isProtectedBranch(ref, emptyRepo)) return true;
    if (emptyRepo && this.emptyRepoAllows(actor)) return true;
    return this.accessible('branch', ref, 'push', actor);
  }

  /** Gitlab::UserAccess#can_merge_to_branch? */
  canMergeToBranch(actor: RefActor, ref: string, emptyRepo = false): boolean {
    if (!this.isProtectedBranch(ref, emptyRepo)) return actor.canPushCode;
    if (emptyRepo && this.emptyRepoAllows(actor)) return true;
    return this.accessible('branch', ref, 'merge', actor);
  }

  /** can_update_branch?: what merging a merge request into `ref` needs (can_be_merged_by?). */
  canUpdateBranch(actor: RefActor, ref: string): boolean {
    return this.canPushToBranch(actor, ref) || this.canMergeToBranch(actor, ref);
  }

  /** Deleting a protected branch (through the API only): Maintainers and up. */
  canDeleteProtectedBranch(actor: RefActor): boolean {
    return actor.canPushCode && (actor.isAdmin || actor.access >= AccessLevel.MAINTAINER);
  }

  allowsForcePush(ref: string): boolean {
    return this.matching('branch', ref).some((r) => r.allowForcePush);
  }

  /** Entities::Branch `developers_can_push` / `developers_can_merge`: a rule names Developers for the action. */
  developersCan(action: 'push' | 'merge', ref: string): boolean {
    return this.matching('branch', ref).some((r) => r.levels.some((l) => l.action === action && l.access_level === AccessLevel.DEVELOPER));
  }

  /** Gitlab::UserAccess#can_create_tag? (admin_tag is push_code). */
  canCreateTag(actor: RefActor, ref: string): boolean {
    if (!this.isProtectedTag(ref)) return actor.canPushCode;
    return this.accessible('tag', ref, 'create', actor);
  }
}

export function compileRule(row: { id: number; kind: RefKind; name: string; allow_force_push: number; code_owner_approval_required: number }, levels: AccessLevelRow[]): ProtectedRefRule {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    allowForcePush: row.allow_force_push === 1,
    codeOwnerApprovalRequired: row.code_owner_approval_required === 1,
    levels,
    matches: refMatcher(row.name),
  };
}

// Compiled once (db/prepared.ts): every push and merge request creation reads them.
const protectedRefsOf = prepared((db, projectId: number) =>
  db.selectFrom('protected_refs').select(['id', 'kind', 'name', 'allow_force_push', 'code_owner_approval_required']).where('project_id', '=', projectId).orderBy('id'),
);
const accessLevelsOf = prepared((db, refIds: readonly number[]) =>
  db.selectFrom('protected_ref_access_levels').select(['id', 'protected_ref_id', 'action', 'access_level']).where('protected_ref_id', 'in', refIds).orderBy('id'),
);

/** The rules of a project, oldest first, with their access levels (two queries). */
export async function loadProtectedRefRules(app: AppContext, projectId: number): Promise<ProtectedRefRule[]> {
  const rows = await protectedRefsOf(app.db, projectId);
  if (rows.length === 0) return [];
  const levels = await accessLevelsOf(app.db, rows.map((r) => r.id));
  const byRef = new Map<number, AccessLevelRow[]>();
  for (const l of levels) {
    let list = byRef.get(l.protected_ref_id);
    if (!list) byRef.set(l.protected_ref_id, (list = []));
    list.push({ id: l.id, action: l.action, access_level: l.access_level });
  }
  return rows.map((r) => compileRule(r, byRef.get(r.id) ?? []));
}

/** The defaults of the namespace a project lives in (a group's settings; the instance default for a user). */
export async function namespaceProtectionDefaults(app: AppContext, namespaceId: number, namespaceKind: string): Promise<BranchProtectionDefaults> {
  if (namespaceKind !== 'group') return instanceDefaults(app);
  const row = await app.db.selectFrom('group_settings').select('settings').where('namespace_id', '=', namespaceId).executeTakeFirst();
  return protectionDefaultsFromSettings(row?.settings, instanceDefaults(app));
}

/**
 * A project's rules, read on every merge request and branch page and on every push (see
 * ProjectCache for how long they are kept).
 */
const rulesCache = new ProjectCache(loadProtectedRefRules);

/** Called by every rule write of this process, once it has committed (protected-refs-write.ts). */
export function rulesChanged(): void {
  rulesCache.changed();
}

function cachedRules(app: AppContext, projectId: number): Promise<ProtectedRefRule[]> {
  return rulesCache.get(app, projectId);
}

/** The rules and the namespace's defaults (for writers, which may meet an empty repository). */
export async function loadRefProtection(app: AppContext, project: { id: number; namespace_id: number }, namespace: { kind: string }): Promise<RefProtection> {
  const [rules, defaults] = await Promise.all([cachedRules(app, project.id), namespaceProtectionDefaults(app, project.namespace_id, namespace.kind)]);
  return new RefProtection(rules, defaults);
}

/**
 * The rules alone, for questions about branches that exist (merging into a target, pushing to a
 * merge request's source): the namespace's defaults only matter in an empty repository, so they
 * are not read.
 */
export async function loadBranchRules(app: AppContext, projectId: number): Promise<RefProtection> {
  return new RefProtection(await cachedRules(app, projectId), instanceDefaults(app));
}
