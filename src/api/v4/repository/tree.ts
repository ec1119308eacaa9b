// GET /projects/:id/repository/tree (GitLab's lib/api/repositories.rb): a directory's entries, or
// the whole subtree with recursive=true; offset pagination, or keyset with pagination=keyset and
// page_token as GitLab does (spec document 1 §4.2: tree listing, not restricted).
import type { FastifyInstance } from 'fastify';
import { notFound, paramError } from '../../../http/errors.js';
import { paginateArray, readPage, toQuery, wantsKeyset } from '../../../http/pagination.js';
import type { ParamHash, ParamValue } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import { isGitError, type TreeItem } from '../../../git/index.js';
import { repoPathProblem } from '../../../git/paths.js';
import { isSafeRevision } from '../../../git/refname.js';
import { defaultRef } from '../../../services/repository/default-branch.js';
import { readableRepo } from '../../../services/repository/project-repo.js';
import { pathParam } from './common.js';

function presentTreeItem(item: TreeItem) {
  return { id: item.id, name: item.name, type: item.type, path: item.path, mode: item.mode };
}

/**
 * Where a keyset page starts. GITLAB-COMPAT: Gitaly's page_token is the last entry's object id,
 * which is ambiguous when two files have the same content; Labwright's links carry the last
 * entry's path instead. An object id is still accepted (first entry with that id).
 */
function startAfter(items: TreeItem[], token: string): number {
  let i = items.findIndex((it) => it.path === token);
  if (i === -1) i = items.findIndex((it) => it.id === token);
  if (i === -1) throw paramError('page_token is invalid');
  return i + 1;
}

function keysetPage(c: Ctx, items: TreeItem[]): TreeItem[] {
  const { perPage } = readPage(c);
  const token = c.params.string('page_token');
  const start = token ? startAfter(items, token) : 0;
  const page = items.slice(start, start + perPage);
  c.header('X-Per-Page', String(perPage));
  if (start + perPage < items.length && page.length > 0) {
    const next = page[page.length - 1]!.path;
    const query: ParamHash = Object.create(null);
    for (const [k, v] of Object.entries((c.req.query ?? {}) as Record<string, ParamValue>)) query[k] = v;
    query.page_token = next;
    query.per_page = String(perPage);
    const path = c.req.url.split('?', 1)[0];
    c.header('Link', `<${c.base}${path}?${toQuery(query)}>; rel="next"`);
    c.header('X-Next-Page-Token', next);
  }
  return page;
}

// GET /projects/:id/repository/tree
async function listTree(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const path = c.params.string('path') ?? '';
  const recursive = c.params.bool('recursive') ?? false;
  const ref = c.params.string('ref') || (await defaultRef(pr.repo, pr.project.default_branch));
  const dir = path.replace(/^\/+|\/+$/g, '');
  if (!ref || !isSafeRevision(ref) || (dir && repoPathProblem(dir))) throw notFound('Tree');
  let items: TreeItem[];
  try {
    items = await pr.repo.listTree({ ref, path: dir, recursive });
  } catch (err) {
    if (isGitError(err, 'not_found') || isGitError(err, 'invalid_ref') || isGitError(err, 'invalid_path')) throw notFound('Tree');
    throw err;
  }
  const page = wantsKeyset(c) ? keysetPage(c, items) : paginateArray(c, items);
  return page.map(presentTreeItem);
}

export function registerTreeRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/tree', listTree);
}
