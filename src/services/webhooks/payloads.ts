// The parts every webhook payload shares (GitLab's Project#hook_attrs, User#hook_attrs,
// Commit#hook_attrs) and the push and tag push payloads (Gitlab::DataBuilder::Push).
import type { Commit, GitRepository } from '../../git/index.js';
import { ZERO_SHA, type RefChange } from '../../git/index.js';
import type { UserRefRow } from '../../db/repositories/users.js';
import type { NamespaceRow, ProjectRow } from '../projects/lookup.js';
import { fullPath } from '../projects/lookup.js';
import type { RefProtection } from '../repository/protected-refs.js';

export interface HookProject {
  project: ProjectRow;
  namespace: NamespaceRow;
}

/** Commits listed in one push payload (GitLab keeps the newest 20). */
const PUSH_COMMITS_LIMIT = 20;
/** A new default branch lists at most its last 100 commits. */
const NEW_DEFAULT_BRANCH_COMMITS = 100;

const VISIBILITY_LEVELS: Record<string, number> = { private: 0, internal: 10, public: 20 };

function hostOf(base: string): string {
  try {
    return new URL(base).hostname;
  } catch {
    return 'localhost';
  }
}

export function projectWebUrl(base: string, p: HookProject): string {
  return `${base}/${fullPath(p.project, p.namespace)}`;
}

/** Project#hook_attrs, with the backward-compatible keys unless `backward` is false (pipeline events). */
export function projectHookAttrs(base: string, p: HookProject, backward = true) {
  const path = fullPath(p.project, p.namespace);
  const web = `${base}/${path}`;
  const ssh = `git@${hostOf(base)}:${path}.git`;
  return {
    id: p.project.id,
    name: p.project.name,
    description: p.project.description,
    web_url: web,
    avatar_url: p.project.avatar_path ? `${base}/uploads/-/system/project/avatar/${p.project.id}/${p.project.avatar_path}` : null,
    git_ssh_url: ssh,
    git_http_url: `${web}.git`,
    namespace: p.namespace.name,
    visibility_level: VISIBILITY_LEVELS[p.project.visibility] ?? 0,
    path_with_namespace: path,
    default_branch: p.project.default_branch,
    ci_config_path: null,
    ...(backward ? { homepage: web, url: ssh, ssh_url: ssh, http_url: `${web}.git` } : {}),
  };
}

/** The deprecated `repository` object: push events carry more of the project than the others. */
export function repositoryAttrs(base: string, p: HookProject, kind: 'push' | 'issuable') {
  const a = projectHookAttrs(base, p);
  const out = { name: a.name, url: a.url, description: a.description, homepage: a.homepage };
  return kind === 'push' ? { ...out, git_http_url: a.git_http_url, git_ssh_url: a.git_ssh_url, visibility_level: a.visibility_level } : out;
}

/** User#hook_attrs: the e-mail address only when the user made it public. */
export function userHookAttrs(base: string, u: UserRefRow) {
  return {
    id: u.id,
    name: u.name,
    username: u.username,
    avatar_url: u.avatar_path ? `${base}/uploads/-/system/user/avatar/${u.id}/${u.avatar_path}` : null,
    email: u.public_email ? u.public_email : '[REDACTED]',
  };
}

export interface FileChanges {
  added: string[];
  modified: string[];
  removed: string[];
}

/** Commit#hook_attrs; push payloads add the files each commit changed. */
export function commitHookAttrs(web: string, c: Commit, files?: FileChanges) {
  return {
    id: c.id,
    message: c.message,
    title: c.title,
    timestamp: c.authored_date,
    url: `${web}/-/commit/${c.id}`,
    author: { name: c.author_name, email: c.author_email },
    ...(files ? { added: files.added, modified: files.modified, removed: files.removed } : {}),
  };
}

/** The commits a push payload lists (oldest first, the newest 20) and how many there were in all. */
async function pushedCommits(repo: GitRepository, p: HookProject, change: RefChange): Promise<{ commits: Commit[]; total: number }> {
  if (!change.after) return { commits: [], total: 0 };
  const branch = change.ref.slice('refs/heads/'.length);
  if (change.before) {
    const [commits, total] = await Promise.all([
      repo.listCommits({ ref: change.after, exclude: change.before, limit: PUSH_COMMITS_LIMIT }),
      repo.countCommits(change.after, { exclude: change.before }),
    ]);
    return { commits: commits.reverse(), total };
  }
  const defaultBranch = p.project.default_branch;
  if (!defaultBranch || defaultBranch === branch) {
    const commits = await repo.listCommits({ ref: change.after, limit: NEW_DEFAULT_BRANCH_COMMITS });
    const total = commits.length < NEW_DEFAULT_BRANCH_COMMITS ? commits.length : await repo.countCommits(change.after);
    return { commits: commits.slice(0, PUSH_COMMITS_LIMIT).reverse(), total };
  }
  // A new branch: the commits the default branch does not have.
  const defaultSha = await repo.branchSha(defaultBranch);
  const opts = defaultSha ? { exclude: defaultSha } : {};
  const [commits, total] = await Promise.all([repo.listCommits({ ref: change.after, ...opts, limit: PUSH_COMMITS_LIMIT }), repo.countCommits(change.after, opts)]);
  return { commits: commits.reverse(), total };
}

export interface PushContext {
  base: string;
  project: HookProject;
  repo: GitRepository;
  user: UserRefRow | null;
  protection: RefProtection;
  /** `git push -o` options, as GitLab's push_options hash. */
  pushOptions?: Record<string, unknown>;
}

/** A push or tag push payload for one ref change. */
export async function pushPayload(ctx: PushContext, change: RefChange): Promise<Record<string, unknown>> {
  const tag = change.ref.startsWith('refs/tags/');
  const name = change.ref.replace(/^refs\/(heads|tags)\//, '');
  const web = projectWebUrl(ctx.base, ctx.project);
  let commits: Commit[] = [];
  let total = 0;
  let message: string | null = null;
  let checkout: string | null = change.after;
  if (tag) {
    if (change.after) {
      const found = await ctx.repo.findTag(name);
      // As the tags API shows it: without git's closing newline.
      message = found?.message ? found.message.replace(/\n$/, '') : null;
      checkout = found?.target ?? change.after;
      const commit = checkout && (!found || found.targetType === 'commit') ? await ctx.repo.getCommit(checkout) : null;
      if (commit) commits = [commit];
    }
    total = commits.length;
  } else {
    ({ commits, total } = await pushedCommits(ctx.repo, ctx.project, change));
  }
  const files = await ctx.repo.changedFiles(commits.map((c) => c.id));
  const u = ctx.user;
  return {
    object_kind: tag ? 'tag_push' : 'push',
    event_name: tag ? 'tag_push' : 'push',
    before: change.before ?? ZERO_SHA,
    after: change.after ?? ZERO_SHA,
    ref: change.ref,
    ref_protected: tag ? ctx.protection.isProtectedTag(name) : ctx.protection.isProtectedBranch(name),
    checkout_sha: checkout,
    message,
    user_id: u?.id ?? null,
    user_name: u?.name ?? null,
    user_username: u?.username ?? null,
    user_email: u?.public_email ?? '',
    user_avatar: u?.avatar_path ? `${ctx.base}/uploads/-/system/user/avatar/${u.id}/${u.avatar_path}` : null,
    project_id: ctx.project.project.id,
    project: projectHookAttrs(ctx.base, ctx.project),
    commits: commits.map((c) => commitHookAttrs(web, c, files.get(c.id) ?? { added: [], modified: [], removed: [] })),
    total_commits_count: total,
    push_options: ctx.pushOptions ?? {},
    repository: repositoryAttrs(ctx.base, ctx.project, 'push'),
  };
}
