/**
 * Validation of file paths inside a repository tree (what clients send as
 * `file_path`). Git itself would refuse some of these only deep inside an
 * index operation, or accept them and write a tree other tools choke on.
 */
import { GitError } from './errors.js';

/** Returns why a path is not acceptable, or null when it is. */
export function repoPathProblem(path: string): string | null {
  if (typeof path !== 'string' || path.length === 0) return 'path is empty';
  if (path.length > 4096) return 'path is too long';
  if (path.startsWith('/')) return 'path must be relative';
  if (/[\0\n\r]/.test(path)) return 'path contains a forbidden character';
  for (const segment of path.split('/')) {
    if (segment.length === 0) return 'path contains an empty segment';
    if (segment === '.' || segment === '..') return 'path contains a relative segment';
    // Also catches the case-insensitive variants git protects against (.GIT, .Git...).
    if (segment.toLowerCase() === '.git') return 'path must not contain .git';
    if (Buffer.byteLength(segment) > 255) return 'path segment is too long';
  }
  return null;
}

export function assertRepoPath(path: string): void {
  const problem = repoPathProblem(path);
  if (problem) throw new GitError('invalid_path', `${problem}: ${JSON.stringify(path)}`);
}

/** Normalises an optional directory argument ('' / '/' / 'a/b/' → '' / '' / 'a/b'). */
export function normalizeDir(path: string | undefined): string {
  if (!path) return '';
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  assertRepoPath(trimmed);
  return trimmed;
}

export function parentDir(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** '' and every proper ancestor directory of a path: 'a/b/c' → ['', 'a', 'a/b']. */
export function ancestorDirs(path: string): string[] {
  const dirs = [''];
  let idx = path.indexOf('/');
  while (idx !== -1) {
    dirs.push(path.slice(0, idx));
    idx = path.indexOf('/', idx + 1);
  }
  return dirs;
}
