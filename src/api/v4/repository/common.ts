// Helpers shared by the repository routes: Grape-worded required parameters, path parameters that
// arrive URL-decoded, and the context branch and commit presenters need.
import { paramError } from '../../../http/errors.js';
import type { Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import type { ProjectRepo } from '../../../services/repository/project-repo.js';
import { mergedBranches } from '../../../services/repository/queries.js';
import type { BranchPresentCtx } from '../entities/branch.js';

/** Grape's `requires`: every missing one named, `{"error":"a is missing, b is missing"}`. */
export function requireParams(c: Ctx, names: string[]): void {
  const missing = names.filter((n) => !c.params.has(n) || c.params.raw[n] === null);
  if (missing.length) throw paramError(missing.map((n) => `${n} is missing`).join(', '));
}

/** A required, non-blank string parameter (`{"error":"x is missing"}` / `"x is empty"`). */
export function requiredString(c: Ctx, name: string): string {
  requireParams(c, [name]);
  return c.params.string(name, { allowBlank: false })!;
}

/** A path parameter as routed (Fastify has already URL-decoded it once). */
export function pathParam(c: Ctx, name: string): string {
  const v = c.params.raw[name];
  return typeof v === 'string' ? v : String(v ?? '');
}

export function canPush(pr: ProjectRepo): boolean {
  return pr.access >= AccessLevel.DEVELOPER && !pr.project.archived;
}

export async function branchContext(pr: ProjectRepo): Promise<BranchPresentCtx> {
  return {
    projectWebUrl: pr.webUrl,
    defaultBranch: pr.project.default_branch,
    merged: await mergedBranches(pr.repo, pr.project.default_branch),
    canPush: canPush(pr),
  };
}
