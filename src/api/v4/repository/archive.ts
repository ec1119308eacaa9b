// Repository archives (GitLab's GET /projects/:id/repository/archive[.format]): `git archive` of a
// commit, streamed as it is made. Every failure GitLab's send_git_archive can meet is its
// `404 File Not Found`; they are found before the first byte is sent.
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { isSafeRevision } from '../../../git/refname.js';
import { readableRepo } from '../../../services/repository/project-repo.js';
import { pathParam } from './common.js';
import { sendGitStream } from './git-stream.js';

type ArchiveFormat = 'tar' | 'tar.gz' | 'tar.bz2' | 'zip';

/** Gitlab::PathRegex.archive_formats_regex, each to the archive made. */
const FORMATS: Record<string, ArchiveFormat> = {
  zip: 'zip',
  tar: 'tar',
  'tar.gz': 'tar.gz',
  tgz: 'tar.gz',
  gz: 'tar.gz',
  'tar.bz2': 'tar.bz2',
  tbz: 'tar.bz2',
  tbz2: 'tar.bz2',
  tb2: 'tar.bz2',
  bz2: 'tar.bz2',
};

const fileNotFound = () => notFound('File');

/** A path inside the repository as a client names it: no leading or trailing '/', nothing git would read as an option or magic. */
function repoPath(raw: string | undefined): string | undefined {
  const p = raw?.replace(/^\/+|\/+$/g, '');
  if (!p) return undefined;
  if (/[\0\n\r]/.test(p) || p.startsWith(':') || p.split('/').some((s) => s === '..')) throw fileNotFound();
  return p;
}

async function archive(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const format = FORMATS[String(c.params.raw.format ?? 'tar.gz')];
  if (!format) throw fileNotFound();
  const ref = c.params.string('sha') || pr.project.default_branch;
  if (!ref || !isSafeRevision(ref)) throw fileNotFound();
  const sha = await pr.repo.resolveRef(ref);
  if (!sha) throw fileNotFound();
  const path = repoPath(c.params.string('path'));
  if (path && !(await pr.repo.pathExists(sha, path))) throw fileNotFound();
  const exclude = (c.params.stringArray('exclude_paths') ?? []).map((p) => repoPath(p)).filter((p): p is string => !!p);
  // Gitaly's precondition: an excluded path must exist too.
  for (const p of exclude) if (!(await pr.repo.pathExists(sha, p))) throw fileNotFound();
  c.params.bool('include_lfs_blobs'); // accepted: Labwright stores no LFS objects
  // GitLab's archive_prefix with append_sha: project path, ref ('/' made '-'), commit, path.
  const prefix = [pr.project.path, ref.replace(/\//g, '-'), sha, ...(path ? [path.replace(/\//g, '-')] : [])].join('-');
  const filename = `${prefix}.${format}`.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return sendGitStream(c, pr.repo.archive(sha, format, prefix, path, exclude), {
    // Workhorse: application/zip for zip, application/octet-stream for the rest.
    type: () => (format === 'zip' ? 'application/zip' : 'application/octet-stream'),
    failed: fileNotFound,
    headers: { 'Content-Disposition': `attachment; filename="${filename}"`, 'Content-Transfer-Encoding': 'binary' },
  });
}

export function registerArchiveRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/archive', archive);
  route(app, 'GET', '/projects/:id/repository/archive.:format', archive);
}
