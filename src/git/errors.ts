/**
 * Error type of the git storage layer. The `code` is stable and meant to be
 * mapped to HTTP statuses by callers (not_found → 404, exists/conflict/
 * cas_failed → 409 or 400, invalid_* → 400, failed → 500).
 */
export type GitErrorCode =
  | 'not_found'
  | 'invalid_ref'
  | 'cas_failed'
  | 'conflict'
  | 'exists'
  | 'invalid_path'
  | 'failed';

export class GitError extends Error {
  readonly code: GitErrorCode;
  /** stderr of the failing git process, when there was one (for logs, never for clients). */
  readonly stderr?: string;

  constructor(code: GitErrorCode, message: string, stderr?: string) {
    super(message);
    this.name = 'GitError';
    this.code = code;
    if (stderr !== undefined) this.stderr = stderr;
  }
}

export function isGitError(err: unknown, code?: GitErrorCode): err is GitError {
  return err instanceof GitError && (code === undefined || err.code === code);
}
