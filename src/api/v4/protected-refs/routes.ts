// Protected branches and tags of a project (GitLab's lib/api/protected_branches.rb and
// lib/api/protected_tags.rb). Rules are looked up by their exact name (a wildcard rule by its
// pattern, `release%2F*`), as GitLab's find_by!(name:).
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, notFound, paramError } from '../../../http/errors.js';
import { paginateArray } from '../../../http/pagination.js';
import type { ParamHash, ParamValue } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { findProject, type FoundProject } from '../../../services/projects/lookup.js';
import { canReadRepository } from '../../../services/repository/project-repo.js';
import { loadProtectedRefRules, PROTECTED_REF_LEVELS, type ProtectedRefRule, type RefAction, type RefKind } from '../../../services/repository/protected-refs.js';
import {
  createProtectedRef,
  deleteProjectProtectedRefs,
  deleteProtectedRef,
  updateProtectedRef,
  type NewLevel,
  type RuleChanges,
} from '../../../services/repository/protected-refs-write.js';
import { presentProtectedBranch, presentProtectedTag } from '../entities/protected-ref.js';
import { pathParam, requiredString } from '../repository/common.js';

/** Longest rule name accepted (GitLab's column is a string; longer names cannot be ref names anyway). */
const MAX_NAME = 255;

/** read_code: whoever may read the repository lists the branch rules. */
async function branchReader(c: Ctx): Promise<FoundProject> {
  const found = await findProject(c, pathParam(c, 'id'));
  if (!canReadRepository(found.project, c.user, found.access)) throw forbidden();
  return found;
}

/** create/update/destroy_protected_branch and manage_protected_tags: Maintainers and up. */
async function maintainer(c: Ctx): Promise<FoundProject> {
  const found = await findProject(c, pathParam(c, 'id'));
  const user = c.requireUser();
  if (found.access < AccessLevel.MAINTAINER && !user.is_admin) throw forbidden();
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
  return listOf(c.params.raw[name]!, name).map((h) => {
    for (const key of ['user_id', 'group_id', 'deploy_key_id', 'member_role_id']) {
      if (h[key] !== undefined && h[key] !== null && h[key] !== '') throw paramError(`${name}[${key}] is not supported`);
    }
    const level = intOf(h.access_level, `${name}[access_level]`);
    if (level !== undefined && !(allowed as readonly number[]).includes(level)) throw paramError(`${name}[access_level] does not have a valid value`);
    const id = intOf(h.id, `${name}[id]`);
    const destroy = ['true', '1'].includes(String(h._destroy ?? '').toLowerCase());
    if (level === undefined && !(id !== undefined && destroy)) throw paramError(`${name}[access_level] is missing`);
    return { ...(id !== undefined ? { id } : {}), ...(level !== undefined ? { access_level: level } : {}), destroy };
  });
}

/** Levels for a new rule: the `*_access_level` parameter and the `allowed_to_*` entries, Maintainers when neither is given (GitLab's default). */
function newLevels(c: Ctx, action: RefAction, levelName: string, listName: string, fallback: number | null): NewLevel[] {
  const out: NewLevel[] = [];
  const level = levelParam(c, levelName, action);
  if (level !== undefined) out.push({ action, access_level: level });
  for (const e of allowedParam(c, listName, action)) {
    if (e.id !== undefined || e.destroy) throw paramError(`${listName}[id] is not allowed here`);
    out.push({ action, access_level: e.access_level! });
  }
  if (out.length === 0 && fallback !== null) out.push({ action, access_level: fallback });
  return out;
}

// GET /projects/:id/protected_branches
async function listProtectedBranches(c: Ctx) {
  const found = await branchReader(c);
  const search = c.params.string('search')?.toLowerCase();
  let rules = await rulesOf(c, found, 'branch');
  if (search) rules = rules.filter((r) => r.name.toLowerCase().includes(search));
  return paginateArray(c, rules).map(presentProtectedBranch);
}

// GET /projects/:id/protected_branches/:name
async function showProtectedBranch(c: Ctx) {
  const found = await branchReader(c);
  return presentProtectedBranch(await findRule(c, found, 'branch'));
}

// POST /projects/:id/protected_branches
async function protectBranch(c: Ctx) {
  const found = await maintainer(c);
  const name = requiredString(c, 'name');
  if (name.length > MAX_NAME) throw apiError(422, ['Name is too long (maximum is 255 characters)']);
  const levels = [
    ...newLevels(c, 'push', 'push_access_level', 'allowed_to_push', AccessLevel.MAINTAINER),
    ...newLevels(c, 'merge', 'merge_access_level', 'allowed_to_merge', AccessLevel.MAINTAINER),
    ...newLevels(c, 'unprotect', 'unprotect_access_level', 'allowed_to_unprotect', null),
  ];
  const allowForcePush = c.params.bool('allow_force_push') ?? false;
  const codeOwner = c.params.bool('code_owner_approval_required') ?? false;
  const conflict = () => apiError(409, `Protected branch '${name}' already exists`);
  if ((await rulesOf(c, found, 'branch')).some((r) => r.name === name)) throw conflict();
  const id = await createProtectedRef(c.app, found.project.id, { kind: 'branch', name, allowForcePush, codeOwnerApprovalRequired: codeOwner, levels });
  if (id === null) throw conflict();
  const rule = (await rulesOf(c, found, 'branch')).find((r) => r.id === id);
  if (!rule) throw notFound();
  c.status(201);
  return presentProtectedBranch(rule);
}

// PATCH /projects/:id/protected_branches/:name
async function updateProtectedBranch(c: Ctx) {
  const found = await maintainer(c);
  const rule = await findRule(c, found, 'branch');
  const changes: RuleChanges = { add: [], change: [], remove: [] };
  if (c.params.has('allow_force_push')) {
    const v = c.params.bool('allow_force_push');
    if (v === undefined) throw paramError('allow_force_push is empty');
    changes.allowForcePush = v;
  }
  const owner = c.params.bool('code_owner_approval_required');
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
  const outcome = await updateProtectedRef(c.app, rule.id, changes);
  if (outcome === 'duplicate') throw apiError(422, [duplicateMessage(changes)]);
  const updated = (await rulesOf(c, found, 'branch')).find((r) => r.id === rule.id);
  if (!updated) throw notFound();
  return presentProtectedBranch(updated);
}

/** Rails' message for a level listed twice: `Push access levels access level has already been taken`. */
function duplicateMessage(changes: RuleChanges): string {
  const action = changes.add[0]?.action ?? 'push';
  const label = action.charAt(0).toUpperCase() + action.slice(1);
  return `${label} access levels access level has already been taken`;
}

// DELETE /projects/:id/protected_branches/:name
async function unprotectBranch(c: Ctx) {
  const found = await maintainer(c);
  const rule = await findRule(c, found, 'branch');
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
  const name = requiredString(c, 'name');
  if (name.length > MAX_NAME) throw apiError(422, ['Name is too long (maximum is 255 characters)']);
  const levels = newLevels(c, 'create', 'create_access_level', 'allowed_to_create', AccessLevel.MAINTAINER);
  // GitLab has no pre-check here: the model's uniqueness validation answers.
  const taken = () => apiError(422, ['Name has already been taken']);
  if ((await rulesOf(c, found, 'tag')).some((r) => r.name === name)) throw taken();
  const id = await createProtectedRef(c.app, found.project.id, { kind: 'tag', name, allowForcePush: false, codeOwnerApprovalRequired: false, levels });
  if (id === null) throw taken();
  const rule = (await rulesOf(c, found, 'tag')).find((r) => r.id === id);
  if (!rule) throw notFound();
  c.status(201);
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
