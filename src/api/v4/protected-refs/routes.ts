// Protected branches and tags of a project (GitLab's lib/api/protected_branches.rb and
// lib/api/protected_tags.rb). Rules are looked up by their exact name (a wildcard rule by its
// pattern, `release%2F*`), as GitLab's find_by!(name:).
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, notFound, notGiven, paramError } from '../../../http/errors.js';
import { paginateArray } from '../../../http/pagination.js';
import type { ParamHash, ParamValue } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { tierAvailable } from '../../../services/groups/tiers.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { findProject, type FoundProject } from '../../../services/projects/lookup.js';
import { canReadRepository } from '../../../services/repository/project-repo.js';
import { canUnprotect, loadProtectedRefRules, PROTECTED_REF_LEVELS, refActor, type ProtectedRefRule, type RefAction, type RefKind } from '../../../services/repository/protected-refs.js';
import {
  createProtectedRef,
  deleteProjectProtectedRefs,
  deleteProtectedRef,
  updateProtectedRef,
  type NewLevel,
  type NewRule,
  type RuleChanges,
} from '../../../services/repository/protected-refs-write.js';
import { presentProtectedBranch, presentProtectedTag } from '../entities/protected-ref.js';
import { pathParam } from '../repository/common.js';

/**
 * Longest rule name accepted. GITLAB-COMPAT: GitLab sets no limit; no branch or tag longer than
 * this can exist here (src/git/refname.ts), so a longer rule could never match.
 */
const MAX_NAME = 1024;

/** Most entries one `allowed_to_*` list may carry. */
const MAX_ENTRIES = 20;

/** ProtectedBranchesFinder::LIMIT: lists show at most this many rules. */
const LIST_LIMIT = 100;

/** read_code: whoever may read the repository lists the branch rules. */
async function branchReader(c: Ctx): Promise<FoundProject> {
  const found = await findProject(c, pathParam(c, 'id'));
  if (!canReadRepository(found.project, c.user, found.access)) throw forbidden();
  return found;
}

/** create/update/destroy_protected_branch and manage_protected_tags: Maintainers and up. */
function requireMaintainer(c: Ctx, found: FoundProject): void {
  const user = c.requireUser();
  if (found.access < AccessLevel.MAINTAINER && !user.is_admin) throw forbidden();
}

/** Changing or removing a rule: a Maintainer, and one its unprotect levels name (EE's can_unprotect?). */
function requireUnprotector(c: Ctx, found: FoundProject, rule: ProtectedRefRule): void {
  requireMaintainer(c, found);
  if (!canUnprotect(rule, refActor(c.user, found.access, found.project.archived))) throw forbidden();
}

async function maintainer(c: Ctx): Promise<FoundProject> {
  const found = await findProject(c, pathParam(c, 'id'));
  requireMaintainer(c, found);
  return found;
}

async function rulesOf(c: Ctx, found: FoundProject, kind: RefKind): Promise<ProtectedRefRule[]> {
  return (await loadProtectedRefRules(c.app, found.project.id)).filter((r) => r.kind === kind);
}

async function findRule(c: Ctx, found: FoundProject, kind: RefKind): Promise<ProtectedRefRule> {
  const name = pathParam(c, 'name');
  const rule = (await rulesOf(c, found, kind)).find((r) => r.name === name);
  if (!rule) throw notFound();
  return rule;
}

/** Creates a rule (201) and reads it back; `taken` is the answer when the name exists, a racing creation included. */
async function insertRule(c: Ctx, found: FoundProject, rule: NewRule, taken: () => Error): Promise<ProtectedRefRule> {
  if ((await rulesOf(c, found, rule.kind)).some((r) => r.name === rule.name)) throw taken();
  const id = await createProtectedRef(c.app, found.project.id, rule);
  if (id === null) throw taken();
  const created = (await rulesOf(c, found, rule.kind)).find((r) => r.id === id);
  if (!created) throw notFound();
  c.status(201);
  return created;
}

/** The rule's `name`: 400 when missing, the model's 422 when blank or too long. */
function nameParam(c: Ctx): string {
  c.params.requireAll(['name']);
  const name = c.params.string('name')!;
  if (name.trim() === '') throw apiError(422, ["Name can't be blank"]);
  // GITLAB-COMPAT: no ref name holds a control character, so a rule with one could never match.
  if (/[\u0000-\u001f\u007f]/.test(name)) throw apiError(422, ['Name is invalid']);
  if (name.length > MAX_NAME) throw apiError(422, [`Name is too long (maximum is ${MAX_NAME} characters)`]);
  return name;
}

/** A `*_access_level` parameter: one of GitLab's values (unprotecting is never "No one"). */
function levelParam(c: Ctx, name: string, action: RefAction): number | undefined {
  const allowed = action === 'unprotect' ? PROTECTED_REF_LEVELS.filter((l) => l !== 0) : PROTECTED_REF_LEVELS;
  return c.params.intEnum(name, allowed);
}

interface AllowedEntry {
  id?: number;
  access_level?: number;
  destroy: boolean;
}

function listOf(raw: ParamValue, name: string): ParamHash[] {
  const list = Array.isArray(raw) ? raw : raw !== null && typeof raw === 'object' ? Object.values(raw) : null;
  if (!list || !list.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))) throw paramError(`${name} is invalid`);
  return list as ParamHash[];
}

function intOf(v: ParamValue | undefined, name: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) throw paramError(`${name} is invalid`);
  return n;
}

/**
 * `allowed_to_push[]` and its kin: entries of `{access_level}`, and on update `{id, access_level}`
 * or `{id, _destroy: true}`. GITLAB-COMPAT: entries for a user, a group or a deploy key (GitLab's
 * paid tiers and deploy keys) are refused with a 400, not silently dropped.
 */
function allowedParam(c: Ctx, name: string, action: RefAction): AllowedEntry[] {
  if (!c.params.has(name)) return [];
  const allowed = action === 'unprotect' ? PROTECTED_REF_LEVELS.filter((l) => l !== 0) : PROTECTED_REF_LEVELS;
  const list = listOf(c.params.raw[name]!, name);
  // A rule has at most one entry per level (four); a longer list can only repeat them.
  if (list.length > MAX_ENTRIES) throw paramError(`${name} has too many entries`);
  return list.map((h) => {
    for (const key of ['user_id', 'group_id', 'deploy_key_id', 'member_role_id']) {
      if (h[key] !== undefined && h[key] !== null && h[key] !== '') throw paramError(`${name}[${key}] is not supported`);
    }
    const level = intOf(h.access_level, `${name}[access_level]`);
    if (level !== undefined && !(allowed as readonly number[]).includes(level)) throw paramError(`${name}[access_level] does not have a valid value`);
    const id = intOf(h.id, `${name}[id]`);
    const destroy = ['true', '1'].includes(String(h._destroy ?? '').toLowerCase());
    if (level === undefined && !(id !== undefined && destroy)) throw notGiven(`${name}[access_level]`);
    return { ...(id !== undefined ? { id } : {}), ...(level !== undefined ? { access_level: level } : {}), destroy };
  });
}

/** Rails' message for a level listed twice in one rule: `Push access levels access level has already been taken`. */
function duplicateLevel(action: RefAction) {
  const label = action.charAt(0).toUpperCase() + action.slice(1);
  return apiError(422, [`${label} access levels access level has already been taken`]);
}

/**
 * Levels for a new rule: the `*_access_level` parameter and the `allowed_to_*` entries,
 * Maintainers when neither is given (GitLab's AccessLevelParams default); a level given twice is
 * the model's 422.
 */
function newLevels(c: Ctx, action: RefAction, levelName: string, listName: string): NewLevel[] {
  const out: NewLevel[] = [];
  const level = levelParam(c, levelName, action);
  if (level !== undefined) out.push({ action, access_level: level });
  for (const e of allowedParam(c, listName, action)) {
    if (e.id !== undefined || e.destroy) throw paramError(`${listName}[id] is not allowed here`);
    if (out.some((l) => l.access_level === e.access_level)) throw duplicateLevel(action);
    out.push({ action, access_level: e.access_level! });
  }
  if (out.length === 0) out.push({ action, access_level: AccessLevel.MAINTAINER });
  return out;
}

/** code_owner_approval_required is a paid-tier attribute: ignored (false) on the free plan, as GitLab's ApiService. */
function codeOwnerParam(c: Ctx): boolean | undefined {
  const v = c.params.bool('code_owner_approval_required');
  return tierAvailable(c.app.config, 'PU') ? v : undefined;
}

/**
 * GitLab's fuzzy_arel_match: every word of three characters or more must appear (any case); a
 * query without such words matches a whole name, any case.
 */
export function fuzzyNameMatcher(query: string): ((name: string) => boolean) | null {
  const q = query.trim().replace(/\s+/g, ' ').toLowerCase();
  if (q === '') return null;
  const words = q.split(' ').filter((w) => w.length >= 3);
  if (words.length > 0) return (name) => words.every((w) => name.toLowerCase().includes(w));
  return (name) => name.toLowerCase() === q;
}

// GET /projects/:id/protected_branches
async function listProtectedBranches(c: Ctx) {
  const found = await branchReader(c);
  const search = c.params.string('search');
  let rules = await rulesOf(c, found, 'branch');
  const match = search === undefined ? null : fuzzyNameMatcher(search);
  if (match) rules = rules.filter((r) => match(r.name));
  return paginateArray(c, rules.slice(0, LIST_LIMIT)).map(presentProtectedBranch);
}

// GET /projects/:id/protected_branches/:name
async function showProtectedBranch(c: Ctx) {
  const found = await branchReader(c);
  return presentProtectedBranch(await findRule(c, found, 'branch'));
}

// POST /projects/:id/protected_branches
async function protectBranch(c: Ctx) {
  const found = await branchReader(c);
  // Grape validates the parameters before the endpoint authorizes.
  const name = nameParam(c);
  const levels = [
    ...newLevels(c, 'push', 'push_access_level', 'allowed_to_push'),
    ...newLevels(c, 'merge', 'merge_access_level', 'allowed_to_merge'),
    ...newLevels(c, 'unprotect', 'unprotect_access_level', 'allowed_to_unprotect'),
  ];
  const allowForcePush = c.params.bool('allow_force_push') ?? false;
  const codeOwner = codeOwnerParam(c) ?? false;
  requireMaintainer(c, found);
  const rule = await insertRule(c, found, { kind: 'branch', name, allowForcePush, codeOwnerApprovalRequired: codeOwner, levels }, () =>
    apiError(409, `Protected branch '${name}' already exists`),
  );
  return presentProtectedBranch(rule);
}

// PATCH /projects/:id/protected_branches/:name
async function updateProtectedBranch(c: Ctx) {
  const found = await branchReader(c);
  // find_by! (404) comes before the authorization (403), as GitLab.
  const rule = await findRule(c, found, 'branch');
  requireUnprotector(c, found, rule);
  const changes: RuleChanges = { add: [], change: [], remove: [] };
  if (c.params.has('allow_force_push')) {
    const v = c.params.bool('allow_force_push');
    if (v === undefined) throw paramError('allow_force_push is empty');
    changes.allowForcePush = v;
  }
  const owner = codeOwnerParam(c);
  if (owner !== undefined) changes.codeOwnerApprovalRequired = owner;
  const actions: Array<[RefAction, string]> = [['push', 'allowed_to_push'], ['merge', 'allowed_to_merge'], ['unprotect', 'allowed_to_unprotect']];
  for (const [action, listName] of actions) {
    for (const e of allowedParam(c, listName, action)) {
      if (e.id === undefined) {
        changes.add.push({ action, access_level: e.access_level! });
        continue;
      }
      // An id names one of this rule's levels for this action; anything else is not found, as Rails' nested attributes.
      if (!rule.levels.some((l) => l.id === e.id && l.action === action)) throw notFound();
      if (e.destroy) changes.remove.push(e.id);
      else changes.change.push({ id: e.id, access_level: e.access_level! });
    }
  }
  // The levels the rule would have: one action may not list a level twice (the model's uniqueness).
  const after = new Map(rule.levels.map((l) => [l.id, { action: l.action, level: l.access_level }]));
  for (const id of changes.remove) after.delete(id);
  for (const ch of changes.change) after.set(ch.id, { action: after.get(ch.id)!.action, level: ch.access_level });
  const all = [...after.values(), ...changes.add.map((l) => ({ action: l.action, level: l.access_level }))];
  const seen = new Set<string>();
  for (const l of all) {
    const key = `${l.action}:${l.level}`;
    if (seen.has(key)) throw duplicateLevel(l.action);
    seen.add(key);
  }
  const outcome = await updateProtectedRef(c.app, rule.id, changes);
  // A racing update added the same level meanwhile.
  if (outcome === 'duplicate') throw duplicateLevel(all[all.length - 1]?.action ?? 'push');
  const updated = (await rulesOf(c, found, 'branch')).find((r) => r.id === rule.id);
  if (!updated) throw notFound();
  return presentProtectedBranch(updated);
}

// DELETE /projects/:id/protected_branches/:name
async function unprotectBranch(c: Ctx) {
  const found = await branchReader(c);
  const rule = await findRule(c, found, 'branch');
  requireUnprotector(c, found, rule);
  await deleteProtectedRef(c.app, rule.id);
  c.status(204);
  return undefined;
}

// GET /projects/:id/protected_tags
async function listProtectedTags(c: Ctx) {
  const found = await maintainer(c);
  return paginateArray(c, await rulesOf(c, found, 'tag')).map(presentProtectedTag);
}

// GET /projects/:id/protected_tags/:name
async function showProtectedTag(c: Ctx) {
  const found = await maintainer(c);
  return presentProtectedTag(await findRule(c, found, 'tag'));
}

// POST /projects/:id/protected_tags
async function protectTag(c: Ctx) {
  const found = await maintainer(c);
  const name = nameParam(c);
  const levels = newLevels(c, 'create', 'create_access_level', 'allowed_to_create');
  // GitLab has no pre-check here: the model's uniqueness validation answers.
  const rule = await insertRule(c, found, { kind: 'tag', name, allowForcePush: false, codeOwnerApprovalRequired: false, levels }, () => apiError(422, ['Name has already been taken']));
  return presentProtectedTag(rule);
}

// DELETE /projects/:id/protected_tags/:name
async function unprotectTag(c: Ctx) {
  const found = await maintainer(c);
  const rule = await findRule(c, found, 'tag');
  await deleteProtectedRef(c.app, rule.id);
  c.status(204);
  return undefined;
}

let hooked = false;

export function registerProtectedRefRoutes(app: FastifyInstance): void {
  if (!hooked) {
    hooked = true;
    projectDeletionHooks.push(async function deleteProtectedRefs(_app, trx, projectId) {
      await deleteProjectProtectedRefs(trx, projectId);
    });
  }
  route(app, 'GET', '/projects/:id/protected_branches', listProtectedBranches);
  route(app, 'POST', '/projects/:id/protected_branches', protectBranch);
  route(app, 'GET', '/projects/:id/protected_branches/:name', showProtectedBranch);
  route(app, 'PATCH', '/projects/:id/protected_branches/:name', updateProtectedBranch);
  route(app, 'DELETE', '/projects/:id/protected_branches/:name', unprotectBranch);
  route(app, 'GET', '/projects/:id/protected_tags', listProtectedTags);
  route(app, 'POST', '/projects/:id/protected_tags', protectTag);
  route(app, 'GET', '/projects/:id/protected_tags/:name', showProtectedTag);
  route(app, 'DELETE', '/projects/:id/protected_tags/:name', unprotectTag);
}
