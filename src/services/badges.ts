// Project and group badges (GitLab's Badge, ProjectBadge, GroupBadge): a link and an image whose
// URLs may hold placeholders filled from a project (`%{project_path}`, `%{default_branch}`, …).
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.js';
import type { BadgesTable } from '../db/tables/badges.js';
import { runGit } from '../git/exec.js';
import { GitRepository } from '../git/repository.js';
import { apiError } from '../http/errors.js';
import { projectDeletionHooks } from './projects/create.js';
import { fullPath, repoPathFor, type NamespaceRow, type ProjectRow } from './projects/lookup.js';

export type BadgeRow = Selectable<BadgesTable>;

export interface BadgeProject {
  project: ProjectRow;
  namespace: NamespaceRow;
}

/** The placeholders' values for a project (GitLab's Badge::PLACEHOLDERS); null leaves a placeholder as written. */
export async function placeholderValues(app: AppContext, p: BadgeProject | null, base: string): Promise<Record<string, string | null> | null> {
  if (!p) return null;
  const repo = new GitRepository(repoPathFor(app, p.project.id));
  const branch = p.project.default_branch;
  const needsRepo = async () => {
    if (!(await repo.exists())) return { sha: null, tag: null };
    const sha = branch ? await repo.branchSha(branch).catch(() => null) : null;
    // TagsFinder's updated_desc: the most recently made tag (git's creator date: tagger or committer).
    const newest = await runGit(['for-each-ref', '--sort=-creatordate', '--count=1', '--format=%(refname:lstrip=2)', 'refs/tags/'], { gitDir: repo.path }).catch(() => null);
    const tag = newest?.stdout.toString('utf8').trim() || null;
    return { sha, tag };
  };
  const { sha, tag } = await needsRepo();
  let host = 'localhost';
  try {
    host = new URL(base).hostname;
  } catch {
    /* keep localhost */
  }
  return {
    project_path: fullPath(p.project, p.namespace),
    project_title: p.project.name,
    project_name: p.project.path,
    project_id: String(p.project.id),
    project_namespace: p.namespace.full_path,
    group_name: p.namespace.kind === 'group' ? p.namespace.full_path : null,
    gitlab_server: host,
    gitlab_pages_domain: null,
    default_branch: branch,
    commit_sha: sha,
    latest_tag: tag,
  };
}

const PLACEHOLDER = /%(\{|25%7B)(project_path|project_title|project_name|project_id|project_namespace|group_name|gitlab_server|gitlab_pages_domain|default_branch|commit_sha|latest_tag)(\}|%7D)/g;

/** The URL with its placeholders filled (values as they are), then escaped as Addressable::URI.escape does. */
export function renderUrl(url: string, values: Record<string, string | null> | null): string {
  if (!values) return url;
  const filled = url.replace(PLACEHOLDER, (whole, _open, name: string) => values[name] ?? whole);
  try {
    return encodeURI(filled);
  } catch {
    return filled;
  }
}

/** The model's URL rule (AddressableUrlValidator): http or https only. */
export function validateBadge(attrs: { link_url?: string; image_url?: string; name?: string | null }): void {
  const errors: Record<string, string[]> = {};
  for (const key of ['link_url', 'image_url'] as const) {
    const v = attrs[key];
    if (v === undefined) continue;
    const url = v.trim();
    if (!url) {
      errors[key] = ['must be a valid URL'];
      continue;
    }
    let parsed: URL | null = null;
    try {
      parsed = new URL(url.replace(PLACEHOLDER, 'x'));
    } catch {
      parsed = null;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) errors[key] = ['is blocked: Only allowed schemes are http, https'];
    else if (!parsed.hostname) errors[key] = ['is blocked: Hostname or IP address invalid'];
    else if (url.length > 2048) errors[key] = ['is too long (maximum is 2048 characters)'];
  }
  if (attrs.name && attrs.name.length > 255) errors.name = ['is too long (maximum is 255 characters)'];
  if (Object.keys(errors).length) throw apiError(400, errors);
}

let registered = false;

/** A deleted project's badges go with it (a group's go in deleteGroup). */
export function registerBadgeHooks(): void {
  if (registered) return;
  registered = true;
  projectDeletionHooks.push(async function deleteProjectBadges(_app, trx, projectId) {
    await trx.deleteFrom('badges').where('project_id', '=', projectId).execute();
  });
}
