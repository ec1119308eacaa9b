// Repository archives (GitLab's GET /projects/:id/repository/archive[.format]): `git archive` of a
// commit, streamed as it is made. Every failure GitLab's send_git_archive can meet is its
// `404 File Not Found`; they are found before the first byte is sent.
import type { FastifyInstance } from 'fastify';
import { ApiError, notFound } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { isSafeRevision } from '../../../git/refname.js';
import { readableRepo, type ProjectRepo } from '../../../services/repository/project-repo.js';
import { pathParam } from './common.js';
import { currentSession } from '../../../web/session.js';
import { redirectToSignIn } from '../../../web/sign-in.js';
import { sendGitStream } from './git-stream.js';
import { addressAsSent, WEB_ARCHIVE_PREFIX } from '../../../http/web-addresses.js';

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

interface ArchiveRequest {
  ref: string | null;
  format: string;
  path: string | undefined;
  exclude: string[];
  /** GitLab's append_sha: true, false, or null (append it unless the ref is the commit id itself). */
  appendSha: boolean | null;
}

/** Streams the archive of `req.ref` (the default branch when null), named and prefixed as GitLab's archive_prefix. */
async function streamArchive(c: Ctx, pr: ProjectRepo, req: ArchiveRequest) {
  const format = FORMATS[req.format];
  if (!format) throw fileNotFound();
  const ref = req.ref || pr.project.default_branch;
  if (!ref || !isSafeRevision(ref)) throw fileNotFound();
  const sha = await pr.repo.resolveRef(ref);
  if (!sha) throw fileNotFound();
  const path = repoPath(req.path);
  if (path && !(await pr.repo.pathExists(sha, path))) throw fileNotFound();
  const exclude = req.exclude.map((p) => repoPath(p)).filter((p): p is string => !!p);
  // Gitaly's precondition: an excluded path must exist too.
  for (const p of exclude) if (!(await pr.repo.pathExists(sha, p))) throw fileNotFound();
  const appendSha = req.appendSha ?? ref !== sha;
  // GitLab's archive_prefix: project path, ref ('/' made '-'), the commit when appended, path. The
  // prefix is the directory every entry lies in: a backslash or control character (a revision such
  // as `main^{/..\\x}`) is made '-' too, so no unpacker on any system reads a path out of it.
  const flat = (s: string) => s.replace(/[\/\\\u0000-\u001f\u007f]/g, '-');
  const prefix = [pr.project.path, flat(ref), ...(appendSha ? [sha] : []), ...(path ? [flat(path)] : [])].join('-');
  const filename = `${prefix}.${format}`.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return sendGitStream(c, pr.repo.archive(sha, format, prefix, path, exclude), {
    // Workhorse: application/zip for zip, application/octet-stream for the rest.
    type: () => (format === 'zip' ? 'application/zip' : 'application/octet-stream'),
    failed: fileNotFound,
    headers: { 'Content-Disposition': `attachment; filename="${filename}"`, 'Content-Transfer-Encoding': 'binary' },
  });
}

// GET /projects/:id/repository/archive[.format]
async function archive(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  c.params.bool('include_lfs_blobs'); // accepted: Labwright stores no LFS objects
  // The API always appends the commit id (lib/api/repositories.rb: append_sha: true).
  return streamArchive(c, pr, {
    ref: c.params.string('sha') || null,
    format: String(c.params.raw.format ?? 'tar.gz'),
    path: c.params.string('path'),
    exclude: c.params.stringArray('exclude_paths') ?? [],
    appendSha: true,
  });
}

/** `v1.0/proj-v1.0.tar.gz` → ref, file name and format (GitLab's route: the format is required, the ref is all before the last '/'). */
export function parseArchivePath(rest: string): { ref: string; filename: string | null; format: string } | null {
  const format = Object.keys(FORMATS)
    .sort((a, b) => b.length - a.length)
    .find((f) => rest.endsWith(`.${f}`));
  if (!format) return null;
  const id = rest.slice(0, -(format.length + 1)).trim();
  if (id === '') return null;
  const slash = id.lastIndexOf('/');
  return slash === -1 ? { ref: id, filename: null, format } : { ref: id.slice(0, slash), filename: id.slice(slash + 1), format };
}

// GET /<namespace>/<project>/-/archive/<ref>/<project>-<ref>.<format> (GitLab's web download,
// which release source links name): tokens as on the API (GitLab's sessionless archive access);
// callers who may not see the project are sent to sign in when anonymous.
async function webArchive(c: Ctx) {
  // The address as sent (http/web-addresses.ts routed it here): the project's full path, then the rest.
  const sent = addressAsSent(c.req).split('?', 1)[0]!;
  const at = sent.indexOf('/-/archive/');
  let segments: string[];
  let rest: string;
  try {
    segments = sent.slice(1, at).split('/').map((x) => decodeURIComponent(x));
    rest = decodeURIComponent(sent.slice(at + '/-/archive/'.length));
  } catch {
    throw notFound();
  }
  // `api` is a reserved top-level path (GitLab's API): never a namespace.
  if (at < 0 || segments.length < 2 || segments.some((x) => x === '') || segments[0] === 'api') throw notFound();
  const parsed = parseArchivePath(rest);
  if (!parsed) throw fileNotFound();
  // A signed-in browser uses its session, as on GitLab's pages.
  if (!c.user) c.user = (await currentSession(c.app, c.req))?.user ?? null;
  let pr: ProjectRepo;
  try {
    pr = await readableRepo(c, segments.join('/'));
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 403)) {
      if (!c.user) return redirectToSignIn(c.req, c.reply);
      // GitLab's access_denied! on a page: 404, whether the project is hidden or only its code.
      throw notFound();
    }
    throw err;
  }
  const shortname = `${pr.project.path}-${parsed.ref.replace(/\//g, '-')}`;
  // append_sha is a raw string in GitLab: any value given (even "false") appends the commit.
  const appendParam = c.params.has('append_sha') ? true : null;
  return streamArchive(c, pr, {
    ref: parsed.ref,
    format: parsed.format,
    path: c.params.string('path'),
    exclude: [],
    appendSha: parsed.filename === shortname ? false : appendParam,
  });
}

/** Registered on the app itself, outside /api/v4: every depth of groups at one prefix (http/web-addresses.ts). */
export function registerWebArchiveRoutes(app: FastifyInstance): void {
  route(app, 'GET', `${WEB_ARCHIVE_PREFIX}/*`, webArchive, { sessionless: true, extraScopes: ['read_repository'] });
}

export function registerArchiveRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/archive', archive);
  route(app, 'GET', '/projects/:id/repository/archive.:format', archive);
}
