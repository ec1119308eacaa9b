// Merge request lists in the three scopes (spec §4.1). Stored fields only: no git call and a fixed
// number of queries per page.
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../../../http/route.js';
import { route } from '../../../http/route.js';
import { notFound, unauthorized } from '../../../http/errors.js';
import { resolveId } from '../../../http/ids.js';
import { paginateOffset } from '../../../http/pagination.js';
import { mrProject } from './context.js';
import { findCommit } from '../repository/commits.js';
import { readableRepo } from '../../../services/repository/project-repo.js';
import { parseListFilters } from './params.js';
import { checkSearchRateLimit } from '../../../services/merge-requests/search-limit.js';
import { buildListQuery, type ListScope } from '../../../services/merge-requests/list.js';
import { loadBundle, type MrRow, type ProjectInfo } from '../../../services/merge-requests/rows.js';
import { refreshMergeStatus } from '../../../services/merge-requests/git-ops.js';
import { presentMergeRequestBasic, presentMergeRequestSimple, type MrPresentCtx } from '../entities/merge-request.js';
import { namespaceAccess, visibleWithoutMembership, AccessLevel } from '../../../services/access.js';
import { loadGroupById } from '../../../services/groups/lookup.js';

async function listAndPresent(c: Ctx, scope: ListScope, defaults: { scope: string; nonArchived: boolean }, ctxExtra: Partial<MrPresentCtx>, known?: ProjectInfo[]) {
  const filters = parseListFilters(c, defaults);
  if (filters.search) {
    // Every search counts against its own limit, which a kept response would skip.
    c.noStore();
    checkSearchRateLimit(c.user ? `user:${c.user.id}` : `ip:${c.req.ip}`, c.user !== null);
  }
  let rows = (await paginateOffset(c, await buildListQuery(c.app.db, scope, filters, c.user), { deferredJoin: 'merge_requests' })) as MrRow[];
  // with_merge_status_recheck: the caller asks for fresh statuses, so this page is rechecked against
  // the repository (only for callers who could update, as GitLab's restrict_merge_status_recheck).
  if (c.params.bool('with_merge_status_recheck') && scope.kind === 'project' && scope.access >= AccessLevel.DEVELOPER) {
    // Rechecked against the repository, whose refs the database does not hold.
    c.noStore();
    const fresh: MrRow[] = [];
    for (let i = 0; i < rows.length; i += 4) fresh.push(...(await Promise.all(rows.slice(i, i + 4).map((r) => refreshMergeStatus(c.app, r)))));
    rows = fresh;
  }
  const bundle = await loadBundle(c.app.db, rows, known);
  const ctx: MrPresentCtx = { base: c.base, bundle, withLabelsDetails: c.params.bool('with_labels_details') === true, ...ctxExtra };
  if (c.params.raw.view === 'simple') return rows.map((r) => presentMergeRequestSimple(r, ctx));
  return rows.map((r) => {
    const out = presentMergeRequestBasic(r, ctx);
    if (scope.kind === 'group') {
      const info = bundle.projects.get(r.project_id);
      if (info?.namespace.kind === 'group') out.group_id = info.namespace.id;
    }
    return out;
  });
}

export function registerMergeRequestListRoutes(app: FastifyInstance): void {
  // GET /merge_requests
  route(app, 'GET', '/merge_requests', async function listAllMrs(c) {
    const scope = typeof c.params.raw.scope === 'string' ? c.params.raw.scope : undefined;
    if (!c.user && scope !== 'all') throw unauthorized();
    return listAndPresent(c, { kind: 'global' }, { scope: 'created_by_me', nonArchived: false }, {});
  }, { cache: true });

  // GET /projects/:id/merge_requests
  route(app, 'GET', '/projects/:id/merge_requests', async function listProjectMrs(c) {
    const p = await mrProject(c);
    return listAndPresent(c, { kind: 'project', projectId: p.info.project.id, access: p.access }, { scope: 'all', nonArchived: false }, { projectContext: true }, [p.info]);
  }, { cache: true });

  // GET /projects/:id/repository/commits/:sha/merge_requests (lib/api/commits.rb): the project's merge
  // requests the commit belongs to, newest first. GITLAB-COMPAT: a request is found by its head,
  // merge and squash commits (GitLab also by any commit of its diff, which it keeps in a table).
  route(app, 'GET', '/projects/:id/repository/commits/:sha/merge_requests', async function commitMrs(c) {
    const p = await mrProject(c);
    const pr = await readableRepo(c, String(c.params.raw.id ?? ''));
    const commit = await findCommit(pr, String(c.params.raw.sha ?? ''));
    const state = c.params.enum('state', ['opened', 'closed', 'locked', 'merged', 'all'] as const) ?? 'all';
    const scope = { kind: 'project' as const, projectId: p.info.project.id, access: p.access };
    const q = (await buildListQuery(c.app.db, scope, { orderBy: 'created_at', sort: 'desc', state }, c.user)).where((eb) =>
      eb.or([eb('merge_requests.head_sha', '=', commit.id), eb('merge_requests.merge_commit_sha', '=', commit.id), eb('merge_requests.squash_commit_sha', '=', commit.id)]),
    );
    const rows = (await paginateOffset(c, q)) as MrRow[];
    const bundle = await loadBundle(c.app.db, rows, [p.info]);
    return rows.map((r) => presentMergeRequestBasic(r, { base: c.base, bundle }));
  });

  // GET /groups/:id/merge_requests
  route(app, 'GET', '/groups/:id/merge_requests', async function listGroupMrs(c) {
    const id = await resolveId(c, 'Namespace', String(c.params.raw.id ?? ''), { allowTopLevelPath: true });
    if (id === null) throw notFound('Group');
    const group = await loadGroupById(c.app.db, id);
    if (!group) throw notFound('Group');
    if (!c.user?.is_admin && !visibleWithoutMembership(group.visibility, c.user) && (await namespaceAccess(c.app.db, c.user, group)) < AccessLevel.GUEST) {
      throw notFound('Group');
    }
    return listAndPresent(
      c,
      { kind: 'group', groupId: group.id, traversal: group.traversal },
      { scope: 'all', nonArchived: true },
      { group: { id: group.id, full_path: group.full_path } },
    );
  }, { cache: true });
}
