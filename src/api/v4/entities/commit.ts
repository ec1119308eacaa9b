// Commit presenters named after GitLab's entities: Commit, CommitDetail (with stats, status,
// project_id, last_pipeline), CommitStats, and Diff (a file's change). Field order follows GitLab.
import type { Commit, Diff } from '../../../git/index.js';

export interface CommitStats {
  additions: number;
  deletions: number;
  total: number;
}

/** git prints `2024-01-02T03:04:05+01:00`; GitLab's JSON has milliseconds. */
export function gitlabTime(iso: string): string {
  return iso.replace(/^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?!\.)/, '$1.000').replace(/Z$/, '+00:00');
}

/**
 * GitLab's Commit#title: the first line, truncated at a word boundary to 80 characters plus '…'
 * when it is 100 characters or longer.
 */
export function commitTitle(message: string): string {
  const nl = message.indexOf('\n');
  const full = (nl === -1 ? message : message.slice(0, nl)).replace(/\r$/, '');
  const chars = [...full];
  if (chars.length < 100) return full;
  const head = chars.slice(0, 80).join('');
  const cut = head.lastIndexOf(' ');
  return `${cut > 0 ? head.slice(0, cut) : head}…`;
}

/** Trailers (`Key: value` lines of the message's last paragraph), as GitLab's `trailers` hash. */
export function commitTrailers(message: string): Record<string, string> {
  const paragraphs = message.trimEnd().split(/\n\s*\n/);
  if (paragraphs.length < 2) return {};
  const out: Record<string, string> = {};
  for (const line of paragraphs[paragraphs.length - 1]!.split('\n')) {
    const m = /^([A-Za-z0-9][A-Za-z0-9-]*):\s+(.+)$/.exec(line);
    if (!m) return {};
    out[m[1]!] = m[2]!;
  }
  return out;
}

/** Entities::Commit */
export function presentCommit(commit: Commit, projectWebUrl: string) {
  const trailers = commitTrailers(commit.message);
  return {
    id: commit.id,
    short_id: commit.short_id,
    created_at: gitlabTime(commit.committed_date),
    parent_ids: commit.parent_ids,
    title: commitTitle(commit.message),
    message: commit.message,
    author_name: commit.author_name,
    author_email: commit.author_email,
    authored_date: gitlabTime(commit.authored_date),
    committer_name: commit.committer_name,
    committer_email: commit.committer_email,
    committed_date: gitlabTime(commit.committed_date),
    trailers,
    extended_trailers: Object.fromEntries(Object.entries(trailers).map(([k, v]) => [k, [v]])),
    web_url: `${projectWebUrl}/-/commit/${commit.id}`,
  };
}

/** Entities::CommitDetail (stats only when asked for). */
export function presentCommitDetail(commit: Commit, projectWebUrl: string, projectId: number, stats?: CommitStats) {
  return Object.assign({}, presentCommit(commit, projectWebUrl), Object.assign({}, (stats ? { stats } : {}), {
    status: null,
    project_id: projectId,
    last_pipeline: null,
  }));
}

/** Entities::Diff */
export function presentDiff(d: Diff) {
  return {
    diff: d.diff,
    new_path: d.new_path,
    old_path: d.old_path,
    a_mode: d.a_mode,
    b_mode: d.b_mode,
    new_file: d.new_file,
    renamed_file: d.renamed_file,
    deleted_file: d.deleted_file,
    generated_file: d.generated_file ?? false,
  };
}
