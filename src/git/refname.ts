/**
 * Pure-TypeScript implementation of git's ref name rules (refs.c
 * check_refname_format with flags 0, and `git check-ref-format --branch`).
 * Validating in-process avoids one git spawn per branch name and is checked
 * against the git binary in test/git/refname.test.ts.
 */

/** Characters forbidden anywhere in a ref name besides control characters. */
const FORBIDDEN = new Set([' ', '~', '^', ':', '?', '*', '[', '\\']);

// Lone UTF-16 surrogates cannot be passed to git intact (they become U+FFFD).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** One '/'-separated component; mirrors check_refname_component(). */
function isValidComponent(component: string): boolean {
  if (component.length === 0) return false; // "//", leading or trailing '/'
  if (component.startsWith('.')) return false; // hidden components, "." and ".."
  if (component.endsWith('.lock')) return false; // collides with git's lock files
  let last = '';
  for (const ch of component) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f) return false;
    if (FORBIDDEN.has(ch)) return false;
    if (ch === '.' && last === '.') return false; // ".." would read as a range
    if (ch === '{' && last === '@') return false; // "@{" is reflog syntax
    last = ch;
  }
  return true;
}

/**
 * `git check-ref-format <refname>` (without --allow-onelevel): a full ref
 * name such as `refs/heads/main` or `refs/tags/v1.0`.
 */
export function isValidRefName(refname: string): boolean {
  if (refname.length === 0 || refname === '@') return false;
  if (refname.endsWith('.')) return false;
  if (LONE_SURROGATE.test(refname)) return false;
  const components = refname.split('/');
  if (components.length < 2) return false;
  return components.every(isValidComponent);
}

/**
 * `git check-ref-format --branch <name>` outside of a repository: the short
 * branch name must make a valid `refs/heads/<name>`, must not start with '-'
 * (it would read as an option) and must not be "HEAD".
 */
export function isValidBranchName(name: string): boolean {
  if (name.startsWith('-') || name === 'HEAD') return false;
  return isValidRefName(`refs/heads/${name}`);
}

/** Prefixes GitLab's GitRefValidator refuses in new branch names: they would read as full refs. */
const EXPANDED_PREFIXES = ['refs/heads/', 'refs/remotes/', 'refs/tags/'];
/** NAME_MAX (255) less the '.lock' suffix git writes beside a loose ref. */
const MAX_COMPONENT_BYTES = 250;
/** Well inside PATH_MAX once the repository directory is prepended. */
const MAX_NAME_BYTES = 1024;

/**
 * A name for a branch created through the API: git's rules, GitLab's GitRefValidator prefixes, and
 * what the loose-ref files can store (a longer name would fail deep inside `git update-ref`).
 * GITLAB-COMPAT: GitLab has no explicit length limit; its storage fails on the same names.
 */
export function isValidNewBranchName(name: string): boolean {
  if (!isValidBranchName(name)) return false;
  if (EXPANDED_PREFIXES.some((p) => name.startsWith(p))) return false;
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) return false;
  return name.split('/').every((c) => Buffer.byteLength(c) <= MAX_COMPONENT_BYTES);
}

/** Same rules for tags (`refs/tags/<name>`); a leading '-' is refused for argv safety. */
export function isValidTagName(name: string): boolean {
  if (name.startsWith('-')) return false;
  return isValidRefName(`refs/tags/${name}`);
}

/** A name for a new tag, as GitLab's GitRefValidator: also no full-ref prefix, no HEAD, bounded lengths. */
export function isValidNewTagName(name: string): boolean {
  if (!isValidTagName(name) || name === 'HEAD') return false;
  if (EXPANDED_PREFIXES.some((p) => name.startsWith(p))) return false;
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) return false;
  return name.split('/').every((c) => Buffer.byteLength(c) <= MAX_COMPONENT_BYTES);
}

/**
 * A user-supplied revision (branch, tag, full ref, sha, `main~2`...) that is
 * safe to put on a git command line: no option-like prefix, nothing git
 * would read as a path (`rev:path`) or that argv cannot carry.
 */
export function isSafeRevision(rev: string): boolean {
  if (rev.length === 0 || rev.length > 1024) return false;
  if (rev.startsWith('-')) return false;
  return !/[\0\n\r:]/.test(rev);
}
