// Branches: list, show, create, delete (GitLab's lib/api/branches.rb). Names containing '/' arrive
// URL-encoded in the path (spec rule 7).
import { assertCanCreateBranch, assertCanDeleteBranch, protectionOf } from './protection.js';
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, notFound } from '../../../http/errors.js';
import { AccessLevel } from '../../../services/access.js';
import { canUnprotect, loadProtectedRefRules } from '../../../services/repository/protected-refs.js';
import { createProtectedRef, deleteProtectedRef, replaceLevels } from '../../../services/repository/protected-refs-write.js';
import { paginateArray } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { isGitError, isValidBranchName, isValidNewBranchName } from '../../../git/index.js';
import { isSafeRevision } from '../../../git/refname.js';
import { readableRepo, writableRepo, type ProjectRepo } from '../../../services/repository/project-repo.js';
import { notifyRefChanges } from '../../../services/repository/ref-hooks.js';
import { mergedBranches } from '../../../services/repository/queries.js';
import { presentBranch } from '../entities/branch.js';
import { actorFor, branchContext, pathParam } from './common.js';

/** GitLab's branch search: `^x` prefix, `x$` suffix, otherwise substring; case-insensitive. */
export function matchesSearch(name: string, search: string): boolean {
  const n = name.toLowerCase();
  let s = search.toLowerCase();
  const prefix = s.startsWith('^');
  const suffix = s.endsWith('$');
  if (prefix) s = s.slice(1);
  if (suffix) s = s.slice(0, -1);
  if (prefix && suffix) return n === s;
  if (prefix) return n.startsWith(s);
  if (suffix) return n.endsWith(s);
  return n.includes(s);
}

async function findBranch(pr: ProjectRepo, name: string) {
  const sha = isValidBranchName(name) ? await pr.repo.branchSha(name) : null;
  const commit = sha ? await pr.repo.getCommit(sha) : null;
  if (!commit) throw notFound('Branch');
  return commit;
}

// GET /projects/:id/repository/branches
async function listBranches(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const search = c.params.string('search');
  const sort = c.params.enum('sort', ['name_asc', 'updated_asc', 'updated_desc'] as const) ?? 'name_asc';
  let branches = await pr.repo.listBranches({ withCommit: true });
  if (search) branches = branches.filter((b) => matchesSearch(b.name, search));
  if (sort !== 'name_asc') {
    const dir = sort === 'updated_asc' ? 1 : -1;
    const time = (d: string | undefined) => (d ? Date.parse(d) : 0);
    branches = [...branches].sort((a, b) => dir * (time(a.commit?.committed_date) - time(b.commit?.committed_date)) || (a.name < b.name ? -1 : 1));
  }
  const ctx = await branchContext(c, pr);
  return paginateArray(c, branches).map((b) => presentBranch(b.name, b.commit!, ctx));
}

// GET /projects/:id/repository/branches/:branch
async function showBranch(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const name = pathParam(c, 'branch');
  const commit = await findBranch(pr, name);
  return presentBranch(name, commit, await branchContext(c, pr));
}

// HEAD /projects/:id/repository/branches/:branch
async function branchExists(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  await findBranch(pr, pathParam(c, 'branch'));
  c.status(204);
  return undefined;
}

// POST /projects/:id/repository/branches
async function createBranch(c: Ctx) {
  c.params.requireAll(['branch', 'ref']);
  const pr = await writableRepo(c, pathParam(c, 'id'));
  const name = c.params.string('branch')!;
  const ref = c.params.string('ref')!;
  if (!isValidNewBranchName(name)) throw apiError(400, 'Branch name is invalid');
  if (await pr.repo.branchSha(name)) throw apiError(400, 'Branch already exists');
  const sha = isSafeRevision(ref) ? await pr.repo.resolveRef(ref) : null;
  if (!sha) throw apiError(400, `Invalid reference name: ${ref}`);
  await assertCanCreateBranch(c, pr, name, sha);
  try {
    await pr.repo.createBranch(name, sha);
  } catch (err) {
    if (isGitError(err, 'exists')) throw apiError(400, 'Branch already exists');
    if (isGitError(err, 'invalid_ref')) throw apiError(400, 'Branch name is invalid');
    throw err;
  }
  await notifyRefChanges(c.app, pr.project.id, [{ ref: `refs/heads/${name}`, before: null, after: sha }], c.user?.id ?? null);
  const commit = (await pr.repo.getCommit(sha))!;
  return presentBranch(name, commit, await branchContext(c, pr));
}

// DELETE /projects/:id/repository/branches/:branch
async function deleteBranch(c: Ctx) {
  const pr = await writableRepo(c, pathParam(c, 'id'));
  const name = pathParam(c, 'branch');
  const sha = isValidBranchName(name) ? await pr.repo.branchSha(name) : null;
  if (!sha) throw notFound('Branch');
  if (name === pr.project.default_branch) throw apiError(405, 'Cannot remove HEAD branch');
  await assertCanDeleteBranch(c, pr, name);
  try {
    // Deletes only the tip we looked at: a branch pushed to meanwhile is not lost.
    await pr.repo.deleteBranch(name, sha);
  } catch (err) {
    if (isGitError(err, 'not_found')) throw notFound('Branch');
    if (isGitError(err, 'cas_failed')) throw apiError(400, 'Failed to remove branch');
    throw err;
  }
  await notifyRefChanges(c.app, pr.project.id, [{ ref: `refs/heads/${name}`, before: sha, after: null }], c.user?.id ?? null);
  return undefined;
}

// DELETE /projects/:id/repository/merged_branches
async function deleteMergedBranches(c: Ctx) {
  const pr = await writableRepo(c, pathParam(c, 'id'));
  // GITLAB-COMPAT: done before answering rather than in a background job; still 202 as GitLab.
  // Protected branches stay, as GitLab's DeleteMergedService.
  const protection = await protectionOf(c, pr);
  const merged = [...(await mergedBranches(pr.repo, pr.project.default_branch))].filter((name) => !protection.isProtectedBranch(name));
  const tips = new Map((await pr.repo.listBranches()).map((b) => [b.name, b.sha]));
  const changes = [];
  for (const name of merged) {
    const sha = tips.get(name);
    if (!sha) continue;
    try {
      await pr.repo.deleteBranch(name, sha);
      changes.push({ ref: `refs/heads/${name}`, before: sha, after: null });
    } catch (err) {
      // Moved or deleted meanwhile: it is no longer the merged branch we saw, so it stays.
      if (!isGitError(err, 'cas_failed') && !isGitError(err, 'not_found')) throw err;
    }
  }
  // Each deletion is a change of its own, as GitLab deletes them one by one (a push event each).
  for (const change of changes) await notifyRefChanges(c.app, pr.project.id, [change], c.user?.id ?? null);
  c.status(202);
  return { message: '202 Accepted' };
}

/** The caller may administer the project (Maintainer and up): the legacy protect routes' authorize_admin_project. */
function requireAdminProject(c: Ctx, pr: ProjectRepo): void {
  const user = c.requireUser();
  if (pr.access < AccessLevel.MAINTAINER && !user.is_admin) throw forbidden();
}

// PUT /projects/:id/repository/branches/:branch/protect
async function protectBranchLegacy(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  requireAdminProject(c, pr);
  const name = pathParam(c, 'branch');
  const commit = await findBranch(pr, name);
  const devPush = c.params.bool('developers_can_push');
  const devMerge = c.params.bool('developers_can_merge');
  const level = (dev: boolean | undefined) => (dev ? AccessLevel.DEVELOPER : AccessLevel.MAINTAINER);
  const existing = (await loadProtectedRefRules(c.app, pr.project.id)).find((r) => r.kind === 'branch' && r.name === name);
  if (existing && !canUnprotect(existing, actorFor(c, pr))) throw forbidden();
  if (existing) {
    // LegacyApiUpdateService: each flag given replaces that action's levels.
    const changes: Array<{ action: 'push' | 'merge'; level: number }> = [];
    if (devPush !== undefined) changes.push({ action: 'push', level: level(devPush) });
    if (devMerge !== undefined) changes.push({ action: 'merge', level: level(devMerge) });
    if (changes.length > 0) await replaceLevels(c.app, existing.id, changes);
  } else {
    await createProtectedRef(c.app, pr.project.id, {
      kind: 'branch',
      name,
      allowForcePush: false,
      codeOwnerApprovalRequired: false,
      levels: [
        { action: 'push', access_level: level(devPush) },
        { action: 'merge', access_level: level(devMerge) },
      ],
    });
  }
  return presentBranch(name, commit, await branchContext(c, pr));
}

// PUT /projects/:id/repository/branches/:branch/unprotect
async function unprotectBranchLegacy(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  requireAdminProject(c, pr);
  const name = pathParam(c, 'branch');
  const commit = await findBranch(pr, name);
  const existing = (await loadProtectedRefRules(c.app, pr.project.id)).find((r) => r.kind === 'branch' && r.name === name);
  if (existing && !canUnprotect(existing, actorFor(c, pr))) throw forbidden();
  if (existing) await deleteProtectedRef(c.app, existing.id);
  return presentBranch(name, commit, await branchContext(c, pr));
}

export function registerBranchRoutes(app: FastifyInstance): void {
  route(app, 'PUT', '/projects/:id/repository/branches/:branch/protect', protectBranchLegacy);
  route(app, 'PUT', '/projects/:id/repository/branches/:branch/unprotect', unprotectBranchLegacy);
  route(app, 'GET', '/projects/:id/repository/branches', listBranches);
  route(app, 'POST', '/projects/:id/repository/branches', createBranch);
  route(app, 'HEAD', '/projects/:id/repository/branches/:branch', branchExists);
  route(app, 'GET', '/projects/:id/repository/branches/:branch', showBranch);
  route(app, 'DELETE', '/projects/:id/repository/branches/:branch', deleteBranch);
  route(app, 'DELETE', '/projects/:id/repository/merged_branches', deleteMergedBranches);
}
