// Addresses under a project's full path (`/<group>/<subgroup>/…/<project>/…`) that GitLab serves
// outside the API: git over HTTP, the web archive download and the older address of Markdown
// uploads. A group path may be 20 deep, and a route per depth costs memory (about 75 KB each,
// docs/benchmarks.md finding 67), so each is rewritten before routing (Fastify's rewriteUrl) to
// one fixed prefix with a wildcard, whose handler reads the address as sent (`req.originalUrl`).

/** Git over HTTP: `/-/git-http/<full_path>[.git]/info/refs` and the two RPCs. */
export const GIT_HTTP_PREFIX = '/-/git-http';
/** The web archive: `/-/web-archive/<full_path>/-/archive/<ref>/<file>`. */
export const WEB_ARCHIVE_PREFIX = '/-/web-archive';

const GIT_SUFFIXES = ['/info/refs', '/git-upload-pack', '/git-receive-pack'];
/** `/<namespace>/<project>/uploads/<secret>/<file>`: two or more segments, a secret's 32 hex digits. */
const OLDER_UPLOAD = /^\/((?:[^/?#]+\/)+[^/?#]+)\/uploads\/([0-9a-f]{32})\/([^/?#]+)(\?.*)?$/;

/** Whether `path` (no query) starts with two or more non-empty segments of a project's full path before `end`. */
function underProject(path: string, end: number): boolean {
  const head = path.slice(1, end);
  if (head === '' || head.startsWith('/') || head.startsWith('api/') || head.startsWith('-/') || head.includes('/-/') || head.includes('//')) return false;
  return head.includes('/') && !head.endsWith('/');
}

/** The address to route `url` at, or null to route it as it is. */
export function rewriteWebAddress(url: string): string | null {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  for (const suffix of GIT_SUFFIXES) {
    if (path.endsWith(suffix)) return underProject(path, path.length - suffix.length) ? GIT_HTTP_PREFIX + url : null;
  }
  const archive = path.indexOf('/-/archive/');
  if (archive !== -1) return underProject(path, archive) ? WEB_ARCHIVE_PREFIX + url : null;
  if (path.indexOf('/uploads/') !== -1) {
    // The address `full_path` names: `/-/project/<full path, encoded>/uploads/<secret>/<file>`.
    const m = OLDER_UPLOAD.exec(url);
    if (!m || !underProject(`/${m[1]!}/`, m[1]!.length + 1)) return null;
    return `/-/project/${encodeURIComponent(m[1]!)}/uploads/${m[2]}/${m[3]}${m[4] ?? ''}`;
  }
  return null;
}

/** The address as sent (before rewriteWebAddress). */
export function addressAsSent(req: { url: string; originalUrl?: string }): string {
  return req.originalUrl ?? req.url;
}
