// Path rules shared by usernames, groups and projects (GitLab's path regex and reserved names).

/** Top-level names that would shadow Labwright's own routes. */
export const RESERVED_TOP_LEVEL = new Set([
  '-', '.well-known', 'admin', 'api', 'assets', 'dashboard', 'explore', 'favicon.ico', 'groups', 'help',
  'oauth', 'projects', 'public', 'robots.txt', 'search', 'snippets', 'user_settings', 'users', 'uploads', 'health_check',
]);

const PATH_RE = /^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$/;

/** Returns an error message in GitLab's words, or null when the path is acceptable. */
export function pathError(path: string, opts: { topLevel: boolean }): string | null {
  if (path.length === 0) return "can't be blank";
  if (path.length > 255) return 'is too long (maximum is 255 characters)';
  if (!PATH_RE.test(path) || path.endsWith('.') || /[._-]{2,}/.test(path) || /\.(git|atom)$/i.test(path)) {
    return "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";
  }
  if (opts.topLevel && RESERVED_TOP_LEVEL.has(path.toLowerCase())) return `${path} is a reserved name`;
  return null;
}

/** Turns a display name into a path GitLab would suggest. */
export function pathFromName(name: string): string {
  const p = name
    .trim()
    .replace(/[^a-zA-Z0-9_.-]+/g, '-')
    .replace(/[._-]{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .toLowerCase();
  return p || 'path';
}
