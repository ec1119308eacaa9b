// Helpers shared by the repository routes: Grape-worded required parameters, path parameters that
// arrive URL-decoded, and the context branch and commit presenters need.
import { paramError } from '../../../http/errors.js';
import { MAX_DB_INT } from '../../../http/params.js';
import type { Ctx } from '../../../http/route.js';
import type { ProjectRepo } from '../../../services/repository/project-repo.js';
import { mergedBranches } from '../../../services/repository/queries.js';
import { loadBranchRules, refActor, type RefActor } from '../../../services/repository/protected-refs.js';
import type { BranchPresentCtx } from '../entities/branch.js';

/** A required, non-blank string parameter (`"x" not given` / `{"error":"x is empty"}`). */
export function requiredString(c: Ctx, name: string): string {
  c.params.requireAll([name]);
  return c.params.string(name, { allowBlank: false })!;
}

/**
 * An Integer path parameter as Grape declares it: not an integer is 400 `<name> is invalid`; a
 * negative or out-of-range one is a valid Integer that finds no row (-1).
 */
export function integerPathParam(c: Ctx, name: string): number {
  const raw = pathParam(c, name);
  if (!/^-?\d+$/.test(raw)) throw paramError(`${name} is invalid`);
  const n = Number(raw);
  return n > 0 && n <= MAX_DB_INT ? n : -1;
}

/** A path parameter as routed (Fastify has already URL-decoded it once). */
export function pathParam(c: Ctx, name: string): string {
  const v = c.params.raw[name];
  return typeof v === 'string' ? v : String(v ?? '');
}

/** The caller as a writer of this project's refs. */
export function actorFor(c: Ctx, pr: ProjectRepo): RefActor {
  return refActor(c.user, pr.access, pr.project.archived);
}

export async function branchContext(c: Ctx, pr: ProjectRepo): Promise<BranchPresentCtx> {
  const [merged, protection] = await Promise.all([
    mergedBranches(pr.repo, pr.project.default_branch),
    // Existing branches only: the rules alone, no empty-repository defaults to read.
    loadBranchRules(c.app, pr.project.id),
  ]);
  return {
    projectWebUrl: pr.webUrl,
    defaultBranch: pr.project.default_branch,
    merged,
    protection,
    actor: actorFor(c, pr),
  };
}
