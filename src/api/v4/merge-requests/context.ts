// Shared lookups for merge request routes: the project (404/403 rules of findProject), the merge
// request feature's access rule, the merge request by iid, and presentation of one request.
import type { Ctx } from '../../../http/route.js';
import { forbidden, notFound, unauthorized } from '../../../http/errors.js';
import { AccessLevel } from '../../../services/access.js';
import { findProject } from '../../../services/projects/lookup.js';
import { canMerge } from '../../../services/merge-requests/merge.js';
import { findMrByIid, loadBundle, pathId, type MrRow, type ProjectInfo } from '../../../services/merge-requests/rows.js';
import { presentMergeRequest, type MrDetailCtx } from '../entities/merge-request.js';

export interface MrProject {
  info: ProjectInfo;
  access: number;
}

/** Whether the caller may read merge requests of the project (the feature's access level). */
export function canReadMrs(c: Ctx, info: ProjectInfo, access: number): boolean {
  if (c.user?.is_admin) return true;
  const level = info.project.merge_requests_access_level;
  if (level === 'disabled') return false;
  if (level === 'private' || info.project.visibility === 'private') return access >= AccessLevel.REPORTER; // GitLab: Guests of private projects do not read merge requests (they are code)
  return true;
}

/** The project of `:id` whose merge requests the caller may read (404 / 403 otherwise). */
export async function mrProject(c: Ctx, opts: { write?: boolean } = {}): Promise<MrProject> {
  const found = await findProject(c, String(c.params.raw.id ?? ''));
  const info = { project: found.project, namespace: found.namespace };
  if (!canReadMrs(c, info, found.access)) throw forbidden();
  if (opts.write && !c.user) throw unauthorized();
  return { info, access: found.access };
}

export function readIid(c: Ctx): number {
  const raw = String(c.params.raw.merge_request_iid ?? '');
  const id = pathId(raw);
  if (id < 0) throw notFound();
  return id;
}

/** Project + merge request by iid; unknown iid: `404 Not found` (ActiveRecord's wording). */
export async function mrFromPath(c: Ctx, opts: { write?: boolean } = {}): Promise<MrProject & { mr: MrRow }> {
  const p = await mrProject(c, opts);
  const iid = readIid(c);
  const mr = await findMrByIid(c.app.db, p.info.project.id, iid);
  if (!mr) throw notFound();
  return Object.assign({}, p, { mr });
}

/** May the caller update this request: its author, or Developer and up. */
export function canUpdate(c: Ctx, p: MrProject, mr: MrRow): boolean {
  if (!c.user) return false;
  if (c.user.is_admin) return true;
  if (p.info.project.archived) return false;
  return p.access >= AccessLevel.DEVELOPER || (mr.author_id === c.user.id && p.access >= AccessLevel.GUEST);
}

/** The full MergeRequest entity for one row. */
export async function presentOne(c: Ctx, p: MrProject, mr: MrRow, extra: Partial<MrDetailCtx> = {}): Promise<Record<string, unknown>> {
  const [bundle, production] = await Promise.all([
    loadBundle(c.app.db, [mr], [p.info]),
    // Deployments are linked to merged requests only (deployments/routes.ts).
    mr.state === 'merged'
      ? c.app.db
          .selectFrom('deployment_merge_requests')
          .select((eb) => eb.fn.min<string>('deployed_at').as('at'))
          .where('merge_request_id', '=', mr.id)
          .where('environment', '=', 'production')
          .executeTakeFirst()
      : undefined,
  ]);
  return presentMergeRequest(mr, {
    firstDeployedToProductionAt: production?.at ?? null,
    base: c.base,
    bundle,
    projectContext: true,
    canMerge: c.user !== null && canMerge(p.access, p.info),
    canReadPipelines: p.info.project.builds_access_level !== 'disabled' && (p.info.project.visibility === 'public' || p.access >= AccessLevel.REPORTER || !!c.user?.is_admin),
    ...extra,
  });
}
