/**
 * Commit metadata: the `git log` format we parse, identities and dates for
 * commits we create.
 */
import { GitError } from './errors.js';

export interface Commit {
  id: string;
  short_id: string;
  title: string;
  message: string;
  author_name: string;
  author_email: string;
  /** ISO 8601 with the author's offset, e.g. 2024-01-02T03:04:05+01:00 */
  authored_date: string;
  committer_name: string;
  committer_email: string;
  committed_date: string;
  parent_ids: string[];
}

export interface Identity {
  name: string;
  email: string;
  /** Date object, ISO 8601 string (offset kept), or git raw "<unix> <+hhmm>". Default: now. */
  date?: Date | string;
}

/**
 * Fields separated by NUL and commits by NUL too (`-z`): names, emails and
 * dates can never contain NUL, and git cannot store NUL in a message either,
 * so a fixed field count per commit splits the stream unambiguously.
 */
export const LOG_FORMAT = '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B';
const FIELDS = 9;
const SHA_RE = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** Parses `git log -z` (or `git show -s -z`) output produced with LOG_FORMAT. */
export function parseLog(out: Buffer | string): Commit[] {
  const text = typeof out === 'string' ? out : out.toString('utf8');
  if (text.length === 0) return [];
  const parts = text.split('\0');
  const commits: Commit[] = [];
  for (let i = 0; i + FIELDS <= parts.length; i += FIELDS) {
    const id = parts[i]!.replace(/^\n/, '');
    if (!SHA_RE.test(id)) throw new GitError('failed', `unexpected git log output near ${JSON.stringify(id.slice(0, 50))}`);
    commits.push(makeCommitFromFields(id, parts.slice(i + 1, i + FIELDS)));
  }
  return commits;
}

/** Builds a Commit from the 8 fields after the id, in LOG_FORMAT order. */
export function makeCommitFromFields(id: string, f: string[]): Commit {
  const message = f[7]!;
  return {
    id,
    short_id: id.slice(0, 8),
    title: commitTitle(message),
    message,
    author_name: f[1]!,
    author_email: f[2]!,
    authored_date: f[3]!,
    committer_name: f[4]!,
    committer_email: f[5]!,
    committed_date: f[6]!,
    parent_ids: f[0]!.length ? f[0]!.split(' ') : [],
  };
}

/** First line of the message, as GitLab's `title` (the API layer may truncate further). */
export function commitTitle(message: string): string {
  const nl = message.indexOf('\n');
  return (nl === -1 ? message : message.slice(0, nl)).replace(/\r$/, '');
}

/**
 * Converts a date to git's raw "@<unix seconds> <+hhmm>" form (the '@' makes
 * git read it as a timestamp even for small values). ISO strings keep
 * their own offset so authored_date round-trips exactly; anything
 * unparseable is refused rather than handed to git's lenient approxidate.
 */
export function toGitDate(date: Date | string): string {
  if (date instanceof Date) {
    if (Number.isNaN(date.getTime())) throw new GitError('failed', 'invalid date');
    return `@${Math.floor(date.getTime() / 1000)} +0000`;
  }
  const raw = /^@?(\d+) ([+-]\d{4})$/.exec(date.trim());
  if (raw) return `@${raw[1]} ${raw[2]}`;
  const iso = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(date.trim());
  const ms = Date.parse(date);
  if (!iso || Number.isNaN(ms)) throw new GitError('failed', `invalid date: ${date}`);
  let offset = '+0000';
  const tz = iso[1];
  if (tz && tz.toUpperCase() !== 'Z') offset = tz.replace(':', '');
  // Without an explicit zone Date.parse uses local time; git would too, but be explicit: UTC.
  const seconds = tz ? Math.floor(ms / 1000) : Math.floor(Date.parse(`${date.trim()}Z`) / 1000);
  return `@${seconds} ${offset}`;
}

/** git strips these from identities or refuses them; clean them up front. */
function cleanIdent(value: string): string {
  return value.replace(/[<>\n\r\0]/g, '').trim();
}

/** GIT_AUTHOR_* / GIT_COMMITTER_* variables for commit-tree. */
export function identityEnv(author: Identity, committer?: Identity): Record<string, string> {
  const c = committer ?? author;
  const env: Record<string, string> = {};
  for (const [prefix, who] of [['GIT_AUTHOR', author], ['GIT_COMMITTER', c]] as const) {
    const name = cleanIdent(who.name);
    const email = cleanIdent(who.email);
    if (!name) throw new GitError('failed', `empty ${prefix === 'GIT_AUTHOR' ? 'author' : 'committer'} name`);
    env[`${prefix}_NAME`] = name;
    env[`${prefix}_EMAIL`] = email;
    env[`${prefix}_DATE`] = toGitDate(who.date ?? new Date());
  }
  return env;
}

/**
 * Identity for the throw-away commits used to emulate `merge-tree
 * --merge-base` on git < 2.40: fixed values so identical inputs hash to the
 * same (dangling) object instead of piling up new ones.
 */
export const SYNTHETIC_IDENTITY_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 'labwright',
  GIT_AUTHOR_EMAIL: 'labwright@localhost',
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'labwright',
  GIT_COMMITTER_EMAIL: 'labwright@localhost',
  GIT_COMMITTER_DATE: '@0 +0000',
};
