// Blobs by id, the merge base of refs and contributors (GitLab's lib/api/repositories.rb).
import type { FastifyInstance } from 'fastify';
import { repositoryLanguages } from '../../../services/repository/languages.js';
import { apiError, notFound, notGiven } from '../../../http/errors.js';
import { paginateArray } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { isSafeRevision } from '../../../git/refname.js';
import { readableRepo, type ProjectRepo } from '../../../services/repository/project-repo.js';
import { presentCommit } from '../entities/commit.js';
import { pathParam } from './common.js';
import { looksLikeText } from './files.js';
import { sendGitStream } from './git-stream.js';

async function blobOfPath(c: Ctx): Promise<{ pr: ProjectRepo; blob: { sha: string; size: number; data: Buffer } }> {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const blob = await pr.repo.blobById(pathParam(c, 'sha'));
  if (!blob) throw notFound('Blob');
  return { pr, blob };
}

// GET /projects/:id/repository/blobs/:sha
async function showBlob(c: Ctx) {
  const { blob } = await blobOfPath(c);
  return { size: blob.size, encoding: 'base64', content: blob.data.toString('base64'), sha: blob.sha };
}

// GET /projects/:id/repository/blobs/:sha/raw: streamed (GitLab's send_git_blob), typed from its first bytes.
async function rawBlob(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const sha = await pr.repo.blobId(pathParam(c, 'sha'));
  if (!sha) throw notFound('Blob');
  return sendGitStream(c, pr.repo.blobStream(sha), {
    type: (first) => (looksLikeText(first.subarray(0, 8192)) ? 'text/plain; charset=utf-8' : 'application/octet-stream'),
    failed: () => notFound('Blob'),
    // GitLab's no_cache_headers.
    headers: { 'Cache-Control': 'no-cache, no-store', Pragma: 'no-cache', Expires: 'Fri, 01 Jan 1990 00:00:00 GMT', 'Content-Disposition': 'inline' },
  });
}

// GET /projects/:id/repository/merge_base?refs[]=a&refs[]=b
async function mergeBase(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  if (!c.params.has('refs')) throw notGiven('refs');
  const refs = c.params.stringArray('refs', { comma: true }) ?? [];
  if (refs.length < 2) throw apiError(400, 'Provide at least 2 refs');
  const shas: string[] = [];
  const unknown: string[] = [];
  for (const ref of refs) {
    const sha = isSafeRevision(ref) ? await pr.repo.resolveRef(ref) : null;
    if (sha) shas.push(sha);
    else unknown.push(ref);
  }
  if (unknown.length) throw apiError(400, `Could not find ${unknown.length === 1 ? 'ref' : 'refs'}: ${unknown.join(', ')}`);
  const base = await pr.repo.mergeBaseOf(shas);
  const commit = base ? await pr.repo.getCommit(base) : null;
  if (!commit) throw notFound('Merge Base');
  return presentCommit(commit, pr.webUrl);
}

// GET /projects/:id/repository/contributors
async function contributors(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const orderBy = c.params.enum('order_by', ['email', 'name', 'commits'] as const) ?? 'commits';
  const sort = c.params.enum('sort', ['asc', 'desc'] as const) ?? 'asc';
  const ref = c.params.string('ref') || pr.project.default_branch;
  const sha = ref && isSafeRevision(ref) ? await pr.repo.resolveRef(ref) : null;
  // GitLab rescues any failure (an empty repository, an unknown ref) as `404 Not Found`.
  if (!sha) throw apiError(404, '404 Not Found');
  const dir = sort === 'asc' ? 1 : -1;
  const key = (x: { name: string; email: string; commits: number }) => x[orderBy];
  const list = (await pr.repo.contributors(sha)).sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return dir * (x < y ? -1 : x > y ? 1 : 0) || (a.email < b.email ? -1 : a.email > b.email ? 1 : 0);
  });
  // GITLAB-COMPAT: additions and deletions are 0, as GitLab shows them since it stopped counting lines.
  return paginateArray(c, list).map((x) => ({ name: x.name, email: x.email, commits: x.commits, additions: 0, deletions: 0 }));
}

export function registerBlobRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/blobs/:sha', showBlob);
  route(app, 'GET', '/projects/:id/repository/blobs/:sha/raw', rawBlob);
  route(app, 'GET', '/projects/:id/repository/merge_base', mergeBase);
  route(app, 'GET', '/projects/:id/repository/contributors', contributors);
  route(app, 'GET', '/projects/:id/languages', languages);
}

// GET /projects/:id/languages: the default branch's languages by share of bytes ({} when empty).
async function languages(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const branch = pr.project.default_branch;
  const sha = branch ? await pr.repo.branchSha(branch) : null;
  return sha ? repositoryLanguages(pr.repo.path, sha) : {};
}
