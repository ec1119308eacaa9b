// Set-up shortcuts for the merge request tests: projects through the API, branches and commits
// written with the real git layer (no work tree), as a push would leave them.
import { GitRepository } from '../../src/git/index.js';
import { repoPathFor } from '../../src/services/projects/lookup.js';
import type { TestServer } from '../helpers/server.js';

export const AUTHOR = { name: 'Dev', email: 'dev@example.com' };

export async function createProject(s: TestServer, name: string, opts: { token?: string; visibility?: string; extra?: Record<string, unknown> } = {}) {
  const r = await s.request('POST', '/projects', {
    token: opts.token,
    json: { name, path: name, visibility: opts.visibility ?? 'private', initialize_with_readme: true, ...(opts.extra ?? {}) },
  });
  if (r.status !== 201) throw new Error(`project ${name}: ${r.status} ${r.text}`);
  return r.body as { id: number; path_with_namespace: string; default_branch: string };
}

export function repo(s: TestServer, projectId: number): GitRepository {
  return new GitRepository(repoPathFor(s.app.lw, projectId));
}

/** Commits files on a branch (created from `from` when missing); returns the new sha. */
export async function commit(s: TestServer, projectId: number, branch: string, files: Record<string, string | null>, opts: { from?: string; message?: string } = {}) {
  const r = repo(s, projectId);
  const current = await r.branchSha(branch);
  const start = current ?? (opts.from ? await r.branchSha(opts.from) : null);
  const existing = new Set(start ? (await r.listTree({ ref: start, recursive: true })).map((t) => t.path) : []);
  const actions = Object.entries(files).map(([file_path, content]) => {
    if (content === null) return { action: 'delete' as const, file_path };
    return { action: existing.has(file_path) ? ('update' as const) : ('create' as const), file_path, content };
  });
  return r.commitFiles({ branch, startSha: start, message: opts.message ?? `change ${Object.keys(files).join(', ')}`, author: AUTHOR, actions, expectedOldSha: current });
}

export async function addMember(s: TestServer, projectId: number, userId: number, level: number) {
  const r = await s.request('POST', `/projects/${projectId}/members`, { json: { user_id: userId, access_level: level } });
  if (r.status !== 201) throw new Error(`member: ${r.status} ${r.text}`);
}

export async function openMr(s: TestServer, projectId: number, source: string, extra: Record<string, unknown> = {}, token?: string) {
  const r = await s.request('POST', `/projects/${projectId}/merge_requests`, {
    token,
    json: { source_branch: source, target_branch: 'main', title: `MR ${source}`, ...extra },
  });
  if (r.status !== 201) throw new Error(`mr: ${r.status} ${r.text}`);
  return r.body;
}

/**
 * Closes the test server. pg's pool resolves `end()` before its sockets have closed, and the
 * helper then drops the database WITH (FORCE), which can kill a connection that is still closing
 * (an uncaught "terminating connection due to administrator command"); waiting a moment between
 * the two avoids that race in these connection-heavy tests.
 */
export async function closeServer(s: TestServer | undefined): Promise<void> {
  if (!s) return;
  await s.app.close();
  await new Promise((resolve) => setTimeout(resolve, 300));
  await s.close();
}
