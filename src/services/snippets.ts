// Snippets (GitLab's Snippet, PersonalSnippet and ProjectSnippet with their policies and
// Snippets::CreateService / UpdateService / DestroyService): a title, a description and a
// visibility in the database, the files in the snippet's own bare git repository (one commit per
// change of files: "Initial commit", then "Update snippet"), the file paths also kept on the row so
// lists make no git call per snippet.
import { join } from 'node:path';
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { UserRow } from '../db/repositories/users.js';
import type { SnippetsTable } from '../db/tables/snippets.js';
import { GitRepository, initBareRepository, isGitError, removeRepository } from '../git/repository.js';
import type { FileAction } from '../git/write.js';
import { apiError } from '../http/errors.js';
import { AccessLevel } from './access.js';
import { projectDeletionHooks } from './projects/create.js';
import type { NamespaceRow, ProjectRow } from './projects/lookup.js';
import { charLength, toSentence } from './ruby-text.js';
import { userDeletionHooks } from './users.js';
import { removeReposWhenGone } from './repository/removal.js';
import { storedSize } from './repository/repository-size.js';

export type SnippetRow = Selectable<SnippetsTable>;
export const SNIPPET_VISIBILITIES = ['private', 'internal', 'public'] as const;
export type SnippetVisibility = (typeof SNIPPET_VISIBILITIES)[number];
const DEFAULT_BRANCH = 'main';
/** GitLab's snippet_size_limit default (50 MB), per file. */
export const SNIPPET_SIZE_LIMIT = 50 * 1024 * 1024;
const DESCRIPTION_LIMIT = 1024 * 1024;
/** GitLab's Snippet::MAX_FILE_COUNT. */
export const SNIPPET_MAX_FILES = 10;
const TOO_MANY_FILES = `Snippets can't contain more than ${SNIPPET_MAX_FILES} files`;

/** The project a project snippet belongs to, with the caller's access to it. */
export interface SnippetProject {
  project: ProjectRow;
  namespace: NamespaceRow;
  access: number;
}

export function snippetRepoPath(app: AppContext, id: number): string {
  return join(app.config.dataDir, 'snippets', `${id}.git`);
}

export function snippetFiles(s: Pick<SnippetRow, 'file_paths'>): string[] {
  try {
    const paths = JSON.parse(s.file_paths) as unknown;
    return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether the project's snippets feature is open to the caller (feature_available?(:snippets)): never when disabled. */
export function snippetsFeatureAvailable(user: UserRow | null, p: SnippetProject): boolean {
  const level = p.project.snippets_access_level;
  if (level === 'disabled') return false;
  if (user?.is_admin) return true;
  if (level === 'private') return p.access >= AccessLevel.GUEST;
  return true;
}

/**
 * read_snippet. Personal: the author, administrators, anyone for public ones, signed-in users who
 * are not external for internal ones. Project (the project already visible to the caller): the
 * feature open to them, then public snippets to anyone, internal ones to members and users who are
 * not external, private ones to members, the author and administrators.
 */
export function canReadSnippet(user: UserRow | null, s: SnippetRow, p: SnippetProject | null): boolean {
  if (s.project_id !== null) {
    if (!p || !snippetsFeatureAvailable(user, p)) return false;
    if (user?.is_admin || user?.id === s.author_id || p.access >= AccessLevel.GUEST) return true;
    if (s.visibility === 'public') return true;
    return s.visibility === 'internal' && Boolean(user) && !user!.external;
  }
  if (user?.is_admin || user?.id === s.author_id) return true;
  if (s.visibility === 'public') return true;
  return s.visibility === 'internal' && Boolean(user) && !user!.external;
}

/** update_snippet: the author, administrators, and a project snippet's Maintainers; nobody in an archived project. */
export function canUpdateSnippet(user: UserRow | null, s: SnippetRow, p: SnippetProject | null): boolean {
  if (!user || p?.project.archived) return false;
  if (user.is_admin || user.id === s.author_id) return true;
  return s.project_id !== null && p !== null && p.access >= AccessLevel.MAINTAINER;
}

/** admin_snippet (delete): as update, but a project snippet's author only while Reporter or above. */
export function canDeleteSnippet(user: UserRow | null, s: SnippetRow, p: SnippetProject | null): boolean {
  if (!user || p?.project.archived) return false;
  if (user.is_admin) return true;
  if (s.project_id === null) return user.id === s.author_id;
  if (!p) return false;
  return p.access >= AccessLevel.MAINTAINER || (user.id === s.author_id && p.access >= AccessLevel.REPORTER);
}

export interface SnippetFile {
  path: string;
  content: string;
}

/** The model's rules, as one Rails sentence (400 {"message":{"error": …}}). */
function validateAttributes(a: { title?: string; description?: string | null }): void {
  const errors: string[] = [];
  if (a.title !== undefined) {
    if (a.title.trim() === '') errors.push("Title can't be blank");
    else if (charLength(a.title) > 255) errors.push('Title is too long (maximum is 255 characters)');
  }
  if (a.description && Buffer.byteLength(a.description) > DESCRIPTION_LIMIT) errors.push('Description is too long (1 MiB). The maximum size is 1 MiB.');
  if (errors.length) throw apiError(400, { error: toSentence(errors) });
}

function validateSizes(contents: Array<string | Buffer | undefined>): void {
  for (const c of contents) {
    if (c !== undefined && Buffer.byteLength(c) > SNIPPET_SIZE_LIMIT) throw apiError(400, { error: 'Content is too long (more than 50 MiB). The maximum size is 50 MiB.' });
  }
}

/** The paths on a branch, in git's order. */
async function listPaths(repo: GitRepository, branch: string): Promise<string[]> {
  const items = await repo.listTree({ ref: branch, recursive: true });
  return items.filter((i) => i.type === 'blob').map((i) => i.path);
}

export interface NewSnippet {
  projectId: number | null;
  title: string;
  description: string | null;
  visibility: SnippetVisibility;
  files: SnippetFile[];
}

/** Creates a snippet and its repository with one commit of its files; undone if the commit fails. */
export async function createSnippet(app: AppContext, author: UserRow, input: NewSnippet): Promise<SnippetRow> {
  validateAttributes({ title: input.title, description: input.description });
  if (input.files.length > SNIPPET_MAX_FILES) throw apiError(400, { error: TOO_MANY_FILES });
  validateSizes(input.files.map((f) => f.content));
  const now = nowIso();
  const row = await app.db
    .insertInto('snippets')
    .values({
      type: input.projectId === null ? 'PersonalSnippet' : 'ProjectSnippet',
      project_id: input.projectId,
      author_id: author.id,
      title: input.title,
      description: input.description,
      visibility: input.visibility,
      file_paths: JSON.stringify(input.files.map((f) => f.path)),
      default_branch: DEFAULT_BRANCH,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const path = snippetRepoPath(app, row.id);
  try {
    await initBareRepository(path, { defaultBranch: DEFAULT_BRANCH });
    const repo = new GitRepository(path);
    await repo.commitFiles({
      branch: DEFAULT_BRANCH,
      startSha: null,
      message: 'Initial commit',
      author: { name: author.name, email: author.email },
      actions: input.files.map((f) => ({ action: 'create' as const, file_path: f.path, content: f.content })),
      expectedOldSha: null,
    });
    const paths = await listPaths(repo, DEFAULT_BRANCH);
    await app.db.updateTable('snippets').set({ file_paths: JSON.stringify(paths) }).where('id', '=', row.id).execute();
    await measureSnippet(app, row);
    return { ...row, file_paths: JSON.stringify(paths) };
  } catch (err) {
    await app.db.deleteFrom('snippets').where('id', '=', row.id).execute().catch(() => undefined);
    await removeRepository(path).catch(() => undefined);
    if (isGitError(err)) throw apiError(400, { error: 'Repository Error creating the snippet' });
    throw err;
  }
}

export interface SnippetChange {
  title?: string;
  description?: string | null;
  visibility?: SnippetVisibility;
  /** File changes, committed as "Update snippet". */
  actions?: FileAction[];
}

/**
 * Updates a snippet: the files first (one commit; a change git refuses, such as updating a file
 * that is not there, changes nothing and is 400), then the row.
 */
export async function updateSnippet(app: AppContext, user: UserRow, s: SnippetRow, change: SnippetChange): Promise<SnippetRow> {
  validateAttributes({ title: change.title, description: change.description });
  let paths: string[] | undefined;
  if (change.actions && change.actions.length) {
    if (change.actions.length > SNIPPET_MAX_FILES * 2) throw apiError(400, { error: TOO_MANY_FILES });
    validateSizes(change.actions.map((a) => a.content));
    const repo = new GitRepository(snippetRepoPath(app, s.id));
    try {
      const head = await repo.branchSha(s.default_branch);
      await repo.commitFiles({
        branch: s.default_branch,
        startSha: head,
        message: 'Update snippet',
        author: { name: user.name, email: user.email },
        actions: change.actions,
        expectedOldSha: head,
      });
      paths = await listPaths(repo, s.default_branch);
      // Over the limit: the commit is taken back (the branch returns to where it was).
      if (paths.length > SNIPPET_MAX_FILES) {
        const now = await repo.branchSha(s.default_branch);
        if (head && now) await repo.updateRef(`refs/heads/${s.default_branch}`, head, now);
        throw apiError(400, { error: TOO_MANY_FILES });
      }
    } catch (err) {
      if (isGitError(err)) throw apiError(400, { error: 'Repository Error updating the snippet' });
      throw err;
    }
  }
  const set: Partial<SnippetRow> = { updated_at: nowIso() };
  if (change.title !== undefined) set.title = change.title;
  if (change.description !== undefined) set.description = change.description;
  if (change.visibility !== undefined) set.visibility = change.visibility;
  if (paths) set.file_paths = JSON.stringify(paths);
  await app.db.updateTable('snippets').set(set).where('id', '=', s.id).execute();
  if (paths) await measureSnippet(app, s);
  return { ...s, ...set };
}

/** After a push to the snippet's repository: the row learns its files again. */
export async function refreshSnippetFiles(app: AppContext, s: SnippetRow): Promise<void> {
  const paths = await listPaths(new GitRepository(snippetRepoPath(app, s.id)), s.default_branch);
  await app.db.updateTable('snippets').set({ file_paths: JSON.stringify(paths), updated_at: nowIso() }).where('id', '=', s.id).execute();
  await measureSnippet(app, s);
}

/**
 * The snippet's repository_size measured again, and its project's snippets_size the sum of its
 * snippets (never thrown: the change stands).
 */
export async function measureSnippet(app: AppContext, s: Pick<SnippetRow, 'id' | 'project_id'>, gone = false): Promise<void> {
  try {
    if (!gone) {
      const size = await new GitRepository(snippetRepoPath(app, s.id)).repositorySize();
      await app.db.updateTable('snippets').set({ repository_size: storedSize(size) }).where('id', '=', s.id).execute();
    }
    if (s.project_id === null) return;
    const sum = await app.db.selectFrom('snippets').select((eb) => eb.fn.sum<number>('repository_size').as('size')).where('project_id', '=', s.project_id).executeTakeFirst();
    await app.db.updateTable('projects').set({ snippets_size: storedSize(Number(sum?.size ?? 0)) }).where('id', '=', s.project_id).execute();
  } catch (err) {
    app.log.warn({ err, snippetId: s.id }, 'could not measure the snippet');
  }
}

export async function deleteSnippet(app: AppContext, s: SnippetRow): Promise<void> {
  await app.db.deleteFrom('snippets').where('id', '=', s.id).execute();
  await measureSnippet(app, s, true);
  await removeRepository(snippetRepoPath(app, s.id)).catch((err) => app.log.warn({ err, snippetId: s.id }, 'could not remove snippet repository'));
}

let registered = false;

/** A deleted project's snippets go with it; a deleted user's personal snippets too (their project snippets stay with the project). */
export function registerSnippetHooks(): void {
  if (registered) return;
  registered = true;
  projectDeletionHooks.push(async function deleteProjectSnippets(app, trx, projectId) {
    const ids = (await trx.selectFrom('snippets').select('id').where('project_id', '=', projectId).execute()).map((r) => r.id);
    if (!ids.length) return;
    await trx.deleteFrom('snippets').where('id', 'in', ids).execute();
    removeReposWhenGone(app, 'snippets', ids, (id) => snippetRepoPath(app, id));
  });
  userDeletionHooks.push(async function deletePersonalSnippets(app, trx, user) {
    const ids = (await trx.selectFrom('snippets').select('id').where('author_id', '=', user.id).where('project_id', 'is', null).execute()).map((r) => r.id);
    if (!ids.length) return;
    await trx.deleteFrom('snippets').where('id', 'in', ids).execute();
    removeReposWhenGone(app, 'snippets', ids, (id) => snippetRepoPath(app, id));
  });
}
