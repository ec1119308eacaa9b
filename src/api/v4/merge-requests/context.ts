// Shared lookups for merge request routes: the project (404/403 rules of findProject), the merge
// request feature's access rule, the merge request by iid, and presentation of one request.
import { userCanReadMrs } from '../../../services/merge-requests/access.js';
import type { SelectQueryBuilder } from 'kysely';
import type { DB } from '../../../db/types.js';
import { prepared, type BoundStatement } from '../../../db/prepared.js';
import type { Ctx } from '../../../http/route.js';
import { forbidden, notFound, paramError, unauthorized } from '../../../http/errors.js';
import { AccessLevel } from '../../../services/access.js';
import { findProject } from '../../../services/projects/lookup.js';
import { canMerge, protectionFor } from '../../../services/merge-requests/merge.js';
import { findMrByIid, loadBundle, mrByIid, pathId, type MrRow, type ProjectInfo } from '../../../services/merge-requests/rows.js';
import { presentMergeRequest, type MrDetailCtx } from '../entities/merge-request.js';

export interface MrProject {
  info: ProjectInfo;
  access: number;
}

/** Whether the caller may read merge requests of the project (the feature's access level). */
export function canReadMrs(c: Ctx, info: ProjectInfo, access: number): boolean {
  return userCanReadMrs(c.user, info, access);
}


/** The project of `:id` whose merge requests the caller may read (404 / 403 otherwise). */
export async function mrProject(
  c: Ctx,
  opts: { write?: boolean; alsoRead?: NonNullable<Parameters<typeof findProject>[2]>['alsoRead']; hidden?: boolean } = {},
): Promise<MrProject & { also?: Record<string, unknown[]> }> {
  const found = await findProject(c, String(c.params.raw.id ?? ''), { alsoRead: opts.alsoRead });
  const info = { project: found.project, namespace: found.namespace };
  // `hidden`: routes that find the merge request through a finder of readable ones (notes) say 404.
  if (!canReadMrs(c, info, found.access)) throw opts.hidden ? notFound() : forbidden();
  if (opts.write && !c.user) throw unauthorized();
  return { info, access: found.access, also: found.also };
}

/** Project + merge request by iid; unknown iid: `404 Not found` (ActiveRecord's wording). */
export async function mrFromPath(c: Ctx, opts: { write?: boolean; hidden?: boolean } = {}): Promise<MrProject & { mr: MrRow }> {
  const raw = String(c.params.raw.merge_request_iid ?? '');
  // Grape's `type: Integer`: a value that is no integer is refused before anything is looked up.
  if (!/^-?\d+$/.test(raw)) throw paramError('merge_request_iid is invalid');
  const iid = pathId(raw);
  // On PostgreSQL the request is read with its project (one round trip); on SQLite after it.
  const alsoRead = iid >= 0 ? (projectId: number) => ({ mr: mrByIid.with(projectId, iid) }) : undefined;
  const { also, ...p } = await mrProject(c, { write: opts.write, alsoRead, hidden: opts.hidden });
  if (iid < 0) throw notFound();
  const mr = also ? (also.mr[0] as MrRow | undefined) : await findMrByIid(c.app.db, p.info.project.id, iid);
  if (!mr) throw notFound();
  return Object.assign(p, { mr });
}

/**
 * May the caller update this request: Developers and up, or its author wherever they may read it
 * (a contributor from a fork is often no member of the target: GitLab lets authors edit their own).
 */
export function canUpdate(c: Ctx, p: MrProject, mr: MrRow): boolean {
  if (!c.user) return false;
  if (c.user.is_admin) return true;
  if (p.info.project.archived) return false;
  return p.access >= AccessLevel.DEVELOPER || (mr.author_id === c.user.id && canReadMrs(c, p.info, p.access));
}

/** One other merged request of the author in the project, if any (`first_contribution`). */
const otherMergedByAuthor = prepared((db, projectId: number, authorId: number, id: number) =>
  db.selectFrom('merge_requests').select('id').where('project_id', '=', projectId).where('author_id', '=', authorId).where('state', '=', 'merged').where('id', '!=', id).limit(1),
);

/** The caller's explicit subscription to a merge request, if any. */
const subscriptionOf = prepared((db, mrId: number, userId: number) =>
  db.selectFrom('subscriptions').select('subscribed').where('subscribable_id', '=', mrId).where('subscribable_type', '=', 'MergeRequest').where('user_id', '=', userId),
);

/** One note the caller wrote on the merge request, if any (note authors take part). */
const notedBy = prepared((db, mrId: number, userId: number) =>
  db.selectFrom('notes').select('id').where('noteable_id', '=', mrId).where('noteable_type', '=', 'MergeRequest').where('author_id', '=', userId).where('system', '=', 0).limit(1),
);

/** GitLab's participants who are subscribed without choosing to be: author, assignees, reviewers, commenters. */
export function isParticipant(mr: MrRow, bundle: { assignees: Map<number, number[]>; reviewers: Map<number, number[]> }, userId: number, noted: boolean): boolean {
  return mr.author_id === userId || (bundle.assignees.get(mr.id) ?? []).includes(userId) || (bundle.reviewers.get(mr.id) ?? []).includes(userId) || noted;
}

const assigneeRow = prepared((db, mrId: number, userId: number) =>
  db.selectFrom('merge_request_assignees').select('id').where('merge_request_id', '=', mrId).where('user_id', '=', userId),
);
const reviewerRow = prepared((db, mrId: number, userId: number) =>
  db.selectFrom('merge_request_reviewers').select('id').where('merge_request_id', '=', mrId).where('user_id', '=', userId),
);

/**
 * Whether a user is subscribed to a merge request, and assigned to it, without presenting it
 * (subscribe and unsubscribe): the same rule as the entity's `subscribed`.
 */
export async function subscriptionState(c: Ctx, mr: MrRow, userId: number): Promise<{ subscribed: boolean; assigned: boolean }> {
  const [explicit, noted, assigned, reviewing] = await Promise.all([
    subscriptionOf(c.app.db, mr.id, userId),
    notedBy(c.app.db, mr.id, userId),
    assigneeRow(c.app.db, mr.id, userId),
    reviewerRow(c.app.db, mr.id, userId),
  ]);
  const bundle = { assignees: new Map([[mr.id, assigned.length ? [userId] : []]]), reviewers: new Map([[mr.id, reviewing.length ? [userId] : []]]) };
  const subscribed = explicit[0] ? explicit[0].subscribed === 1 : isParticipant(mr, bundle, userId, noted.length > 0);
  return { subscribed, assigned: assigned.length > 0 };
}

/**
 * The full MergeRequest entity for one row. With `withFirstContribution`, `first_contribution` is
 * looked up too (with the bundle's first queries: one statement fewer on PostgreSQL).
 */
export async function presentOne(
  c: Ctx,
  p: MrProject,
  mr: MrRow,
  extra: Partial<MrDetailCtx> = {},
  opts: { withFirstContribution?: boolean } = {},
): Promise<Record<string, unknown>> {
  const also: Record<string, SelectQueryBuilder<DB, any, any> | BoundStatement<unknown>> = {}; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (opts.withFirstContribution) also.otherMerged = otherMergedByAuthor.with(mr.project_id, mr.author_id, mr.id);
  if (c.user) {
    also.subscription = subscriptionOf.with(mr.id, c.user.id);
    also.noted = notedBy.with(mr.id, c.user.id);
  }
  // Deployments are linked to merged requests only (deployments/routes.ts).
  if (mr.state === 'merged') {
    also.production = c.app.db
      .selectFrom('deployment_merge_requests')
      .select((eb) => eb.fn.min<string>('deployed_at').as('at'))
      .where('merge_request_id', '=', mr.id)
      .where('environment', '=', 'production');
  }
  const bundle = await loadBundle(c.app.db, [mr], [p.info], also);
  const production = bundle.also.production?.[0] as { at: string | null } | undefined;
  if (opts.withFirstContribution) extra.firstContribution = bundle.also.otherMerged.length === 0;
  if (c.user) {
    const explicit = bundle.also.subscription[0] as { subscribed: number } | undefined;
    extra.subscribed = explicit ? explicit.subscribed === 1 : isParticipant(mr, bundle, c.user.id, bundle.also.noted.length > 0);
  }
  return presentMergeRequest(mr, {
    firstDeployedToProductionAt: production?.at ?? null,
    base: c.base,
    bundle,
    projectContext: true,
    canMerge: c.user !== null && canMerge(c.user, p.access, p.info, await protectionFor(c.app, p.info), mr.target_branch),
    canReadPipelines: p.info.project.builds_access_level !== 'disabled' && (p.info.project.visibility === 'public' || p.access >= AccessLevel.REPORTER || !!c.user?.is_admin),
    ...extra,
  });
}
