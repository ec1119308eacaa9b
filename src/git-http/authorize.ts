// What a git client may do with the project at a URL path: the project behind the path (current
// or old path), the caller's access, and the decision: serve, 401 (ask for credentials), 403, 404.
import type { AppContext } from '../context.js';
import { AccessLevel, canReadProject } from '../services/access.js';
import { effectiveAccess, loadProjectById, type NamespaceRow, type ProjectRow } from '../services/projects/lookup.js';
import { canReadRepository } from '../services/repository/project-repo.js';
import { collaborationBranches } from '../services/projects/collaboration.js';
import { deployTokenReaches } from '../services/deploy-tokens.js';
import { hasScope, READ_SCOPES, WRITE_SCOPES, type GitCaller } from './credentials.js';
import { canDownloadWiki, canWriteWiki } from '../services/wikis.js';
import { canReadSnippet, canUpdateSnippet, type SnippetProject, type SnippetRow } from '../services/snippets.js';

export type GitDecision =
  /** `collaboration`: the only branches the caller may push to (a fork's source branches whose merge requests allow collaboration). */
  | { allow: true; project: ProjectRow; namespace: NamespaceRow; access: number; collaboration?: string[]; wiki?: true }
  | { allow: false; status: 401 | 403 | 404; message: string };

const NOT_FOUND = "The project you were looking for could not be found or you don't have permission to view it.";
const PUSH_DENIED = 'You are not allowed to push code to this project.';
const DOWNLOAD_DENIED = 'You are not allowed to download code from this project.';
const ACCESS_DENIED = 'HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect or you\'re required to use a token instead of a password.';

/** The project id for a full path, following the redirects a rename or transfer left behind. */
async function projectIdForPath(app: AppContext, fullPath: string): Promise<number | null> {
  const lower = fullPath.toLowerCase();
  const route = await app.db.selectFrom('routes').select(['source_type', 'source_id']).where('path_lower', '=', lower).executeTakeFirst();
  if (route) return route.source_type === 'Project' ? route.source_id : null;
  const redirect = await app.db
    .selectFrom('redirect_routes')
    .select(['source_type', 'source_id'])
    .where('path_lower', '=', lower)
    .executeTakeFirst();
  return redirect?.source_type === 'Project' ? redirect.source_id : null;
}

/**
 * Git clients send credentials only after a 401, so whatever an anonymous caller may not do is
 * answered 401 (never 404, which would end the attempt); a signed-in caller who may not see the
 * project gets 404, so its existence is not revealed.
 */
export async function authorizeGit(app: AppContext, caller: GitCaller, fullPath: string, rpc: 'upload-pack' | 'receive-pack'): Promise<GitDecision> {
  if (caller.kind === 'invalid') return { allow: false, status: 401, message: ACCESS_DENIED };
  if (caller.kind === 'deploy_token') return authorizeDeployToken(app, caller, fullPath, rpc);
  const anonymous = caller.kind === 'anonymous';
  const user = caller.kind === 'user' ? caller.user : null;
  const deny = (status: 401 | 403 | 404, message: string): GitDecision => ({ allow: false, status, message });
  const needed = rpc === 'receive-pack' ? WRITE_SCOPES : READ_SCOPES;
  if (!anonymous && !hasScope(caller, needed)) {
    return rpc === 'receive-pack' && hasScope(caller, READ_SCOPES)
      ? deny(403, PUSH_DENIED)
      : deny(401, ACCESS_DENIED);
  }
  let id = await projectIdForPath(app, fullPath);
  // `<project>.wiki`: the project's wiki repository.
  const wiki = id === null && fullPath.toLowerCase().endsWith('.wiki') && (id = await projectIdForPath(app, fullPath.slice(0, -'.wiki'.length))) !== null;
  const found = id === null ? null : await loadProjectById(app.db, id);
  if (!found) return anonymous ? deny(401, ACCESS_DENIED) : deny(404, NOT_FOUND);
  const access = await effectiveAccess(app.db, user, found.project, found.namespace);
  if (!canReadProject(user, found.project, access)) return anonymous ? deny(401, ACCESS_DENIED) : deny(404, NOT_FOUND);
  if (wiki) return authorizeWiki(user, { project: found.project, namespace: found.namespace, access }, rpc);
  // Seeing the project is not reading its code (a Guest of a private project): GitLab's 403.
  if (!canReadRepository(found.project, user, access)) {
    if (anonymous) return deny(401, ACCESS_DENIED);
    return deny(403, rpc === 'receive-pack' ? PUSH_DENIED : DOWNLOAD_DENIED);
  }
  if (rpc === 'receive-pack') {
    if (anonymous) return deny(401, ACCESS_DENIED);
    if (found.project.archived) return deny(403, 'You are not allowed to push code to an archived project.');
    if (access < AccessLevel.DEVELOPER) {
      // A fork's merge request that allows collaboration lets the target's members push to its source branch.
      const branches = await collaborationBranches(app, user, found.project.id);
      if (!branches.length) return deny(403, PUSH_DENIED);
      return { allow: true, project: found.project, namespace: found.namespace, access, collaboration: branches };
    }
  }
  return { allow: true, project: found.project, namespace: found.namespace, access };
}

export type SnippetDecision =
  | { allow: true; snippet: SnippetRow; project: SnippetProject | null }
  | { allow: false; status: 401 | 403 | 404; message: string };

/**
 * A snippet's repository (GitLab's GitAccessSnippet): `snippets/<id>` for a personal snippet,
 * `<project>/snippets/<id>` for a project's. Null when the path names no snippet (or a project
 * lives at it). Cloning needs read_snippet, pushing update_snippet.
 */
export async function authorizeSnippetGit(app: AppContext, caller: GitCaller, fullPath: string, rpc: 'upload-pack' | 'receive-pack'): Promise<SnippetDecision | null> {
  const m = /^(?:(.+)\/)?snippets\/(\d{1,9})$/.exec(fullPath);
  // `snippets/<id>` is always a personal snippet (`snippets` is a reserved top-level name); under a
  // project path a project of that name would come first.
  if (!m || (m[1] !== undefined && (await projectIdForPath(app, fullPath)) !== null)) return null;
  const deny = (status: 401 | 403 | 404, message: string): SnippetDecision => ({ allow: false, status, message });
  if (caller.kind === 'invalid' || caller.kind === 'deploy_token') return deny(401, ACCESS_DENIED);
  const anonymous = caller.kind === 'anonymous';
  const user = caller.kind === 'user' ? caller.user : null;
  const needed = rpc === 'receive-pack' ? WRITE_SCOPES : READ_SCOPES;
  if (!anonymous && !hasScope(caller, needed)) return rpc === 'receive-pack' && hasScope(caller, READ_SCOPES) ? deny(403, 'You are not allowed to update this snippet.') : deny(401, ACCESS_DENIED);
  const missing = () => (anonymous ? deny(401, ACCESS_DENIED) : deny(404, 'The snippet you were looking for could not be found.'));
  const snippet = await app.db.selectFrom('snippets').selectAll().where('id', '=', Number(m[2])).executeTakeFirst();
  if (!snippet) return missing();
  let project: SnippetProject | null = null;
  if (m[1] === undefined) {
    if (snippet.project_id !== null) return missing();
  } else {
    const projectId = await projectIdForPath(app, m[1]);
    const found = projectId === null || projectId !== snippet.project_id ? null : await loadProjectById(app.db, projectId);
    if (!found) return missing();
    const access = await effectiveAccess(app.db, user, found.project, found.namespace);
    if (!canReadProject(user, found.project, access)) return anonymous ? deny(401, ACCESS_DENIED) : deny(404, NOT_FOUND);
    project = { project: found.project, namespace: found.namespace, access };
  }
  if (!canReadSnippet(user, snippet, project)) return anonymous ? deny(401, ACCESS_DENIED) : deny(403, 'You are not allowed to read this snippet.');
  if (rpc === 'receive-pack') {
    if (anonymous) return deny(401, ACCESS_DENIED);
    if (!canUpdateSnippet(user, snippet, project)) return deny(403, 'You are not allowed to update this snippet.');
  }
  return { allow: true, snippet, project };
}

/** GitLab's GitAccessWiki: download_wiki_code to clone, create_wiki to push (no protected branches). */
function authorizeWiki(user: Parameters<typeof canWriteWiki>[0], p: { project: ProjectRow; namespace: NamespaceRow; access: number }, rpc: 'upload-pack' | 'receive-pack'): GitDecision {
  const deny = (status: 401 | 403, message: string): GitDecision => ({ allow: false, status, message });
  if (!canDownloadWiki(user, p)) return user ? deny(403, rpc === 'receive-pack' ? "You are not allowed to write to this project's wiki." : 'You are not allowed to download files from this wiki.') : deny(401, ACCESS_DENIED);
  if (rpc === 'receive-pack') {
    if (!user) return deny(401, ACCESS_DENIED);
    if (p.project.archived) return deny(403, 'You are not allowed to push code to an archived project.');
    if (!canWriteWiki(user, p)) return deny(403, 'You are not allowed to write to this project\'s wiki.');
  }
  return { allow: true, ...p, wiki: true };
}

/**
 * A deploy token reads the code of the projects it reaches (its project, or its group's and
 * subgroups') when it has read_repository, and never pushes. One that does not reach the project,
 * or a project whose repository is turned off, is refused as wrong credentials (GitLab's
 * deploy_token_check finds no token for it and falls through to password authentication).
 */
async function authorizeDeployToken(app: AppContext, caller: Extract<GitCaller, { kind: 'deploy_token' }>, fullPath: string, rpc: 'upload-pack' | 'receive-pack'): Promise<GitDecision> {
  const denied: GitDecision = { allow: false, status: 401, message: ACCESS_DENIED };
  const id = await projectIdForPath(app, fullPath);
  const found = id === null ? null : await loadProjectById(app.db, id);
  if (!found || found.project.repository_access_level === 'disabled') return denied;
  if (!(await deployTokenReaches(app.db, caller.token, found.project, found.namespace.traversal))) return denied;
  if (rpc === 'receive-pack') return { allow: false, status: 403, message: 'You are not allowed to upload code.' };
  if (!hasScope(caller, ['read_repository'])) return { allow: false, status: 403, message: 'You are not allowed to download code.' };
  return { allow: true, project: found.project, namespace: found.namespace, access: AccessLevel.NO_ACCESS };
}
