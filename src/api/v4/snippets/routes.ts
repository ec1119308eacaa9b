// Snippets (GitLab's lib/api/snippets.rb and project_snippets.rb): personal snippets (/snippets,
// /snippets/public, /snippets/all, /snippets/:id) and project snippets (/projects/:id/snippets),
// created with `files[]` (or the older `file_name` + `content`), updated with file actions, read
// as JSON or raw (the first file, or one file at a ref), deleted with their repository.
import type { FastifyInstance } from 'fastify';
import { findUserRefsByIds, type UserRow } from '../../../db/repositories/users.js';
import { repoPathProblem } from '../../../git/paths.js';
import { GitRepository, isGitError } from '../../../git/repository.js';
import type { FileAction } from '../../../git/write.js';
import { apiError, forbidden, notFound, notGiven, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import type { ParamHash, ParamValue } from '../../../http/params.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel, canReadProject } from '../../../services/access.js';
import { membershipCondition, visibleCondition } from '../../../services/projects/list.js';
import { effectiveAccess, findProject, fullPath, joinProjects, projectQueries, type FoundProject } from '../../../services/projects/lookup.js';
import {
  canDeleteSnippet,
  canReadSnippet,
  canUpdateSnippet,
  createSnippet,
  deleteSnippet,
  registerSnippetHooks,
  SNIPPET_VISIBILITIES,
  snippetFiles,
  snippetRepoPath,
  snippetsFeatureAvailable,
  updateSnippet,
  type SnippetFile,
  type SnippetProject,
  type SnippetRow,
  type SnippetVisibility,
} from '../../../services/snippets.js';
import { presentUserBasic } from '../entities/user.js';
import { host } from '../entities/project.js';
import { sendInlineFile } from '../repository/files.js';
import { integerPathParam, pathParam } from '../repository/common.js';

type Projects = Map<number, SnippetProject>;

function isBlank(v: ParamValue | undefined): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

/** `files[]` of a create: each `{file_path, content}`, Grape's messages for the first wrong one. */
function createFilesParam(c: Ctx): SnippetFile[] {
  const hasFiles = c.params.has('files');
  const hasContent = c.params.has('content');
  if (hasFiles && hasContent) throw paramError('files, content are mutually exclusive');
  if (!hasFiles && !hasContent) throw paramError('files, content are missing, exactly one parameter must be provided');
  if (hasContent) {
    if (isBlank(c.params.raw.content)) throw paramError('content is empty');
    if (!c.params.has('file_name')) throw notGiven('file_name');
    const name = c.params.string('file_name')!;
    if (repoPathProblem(name)) throw paramError('file_name should be a valid file path');
    return [{ path: name, content: c.params.string('content')! }];
  }
  const raw = c.params.raw.files;
  if (!Array.isArray(raw) || raw.length === 0) throw paramError('files is invalid');
  return raw.map((f, i) => {
    if (!f || typeof f !== 'object' || Array.isArray(f)) throw paramError('files is invalid');
    const h = f as ParamHash;
    if (isBlank(h.file_path)) throw paramError(`files[${i}][file_path] should be a valid file path, files[${i}][file_path] is empty`);
    if (typeof h.file_path !== 'string' || repoPathProblem(h.file_path)) throw paramError(`files[${i}][file_path] should be a valid file path`);
    if (h.content === undefined) throw notGiven(`files[${i}][content]`);
    if (typeof h.content !== 'string' && typeof h.content !== 'number') throw paramError(`files[${i}][content] is invalid`);
    if (isBlank(h.content)) throw paramError(`files[${i}][content] is empty`);
    return { path: h.file_path, content: String(h.content) };
  });
}

/** The update's file actions (GitLab's SnippetInputAction rules: 422 `Snippet actions have invalid data`). */
function updateActions(c: Ctx, s: SnippetRow): FileAction[] | undefined {
  c.params.mutuallyExclusive(['files', 'content']);
  c.params.mutuallyExclusive(['files', 'file_name']);
  if (c.params.has('content') && isBlank(c.params.raw.content)) throw paramError('content is empty');
  const current = snippetFiles(s);
  if (c.params.has('content') || c.params.has('file_name')) {
    if (current.length > 1) throw apiError(400, { error: 'To update Snippets with multiple files, you must use the `files` parameter' });
    const name = c.params.string('file_name') ?? current[0];
    if (!name || repoPathProblem(name)) throw paramError('file_name should be a valid file path');
    const content = c.params.string('content');
    if (current.length === 0) return [{ action: 'create', file_path: name, content: content ?? '' }];
    if (name !== current[0]) return [{ action: 'move', previous_path: current[0], file_path: name, ...(content !== undefined ? { content } : {}) }];
    return content !== undefined ? [{ action: 'update', file_path: name, content }] : [];
  }
  if (!c.params.has('files')) return undefined;
  const raw = c.params.raw.files;
  if (!Array.isArray(raw) || raw.length === 0) throw paramError('files is invalid');
  const invalid = () => apiError(422, { error: 'Snippet actions have invalid data' });
  return raw.map((f) => {
    if (!f || typeof f !== 'object' || Array.isArray(f)) throw paramError('files is invalid');
    const h = f as ParamHash;
    const action = h.action;
    if (isBlank(action)) throw notGiven('files[action]');
    if (!['create', 'update', 'delete', 'move'].includes(String(action))) throw paramError('files[action] does not have a valid value');
    const str = (v: ParamValue | undefined) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
    const filePath = str(h.file_path);
    const previous = str(h.previous_path);
    const content = str(h.content);
    for (const p of [filePath, previous]) if (p !== undefined && p !== '' && repoPathProblem(p)) throw paramError('files[file_path] should be a valid file path');
    switch (action) {
      case 'create':
        if (!filePath || content === undefined) throw invalid();
        return { action: 'create' as const, file_path: filePath, content };
      case 'update':
        if (!filePath || content === undefined || (previous && previous !== filePath)) throw invalid();
        return { action: 'update' as const, file_path: filePath, content };
      case 'delete':
        if (!filePath) throw invalid();
        return { action: 'delete' as const, file_path: filePath };
      default:
        if (!previous || !filePath || previous === filePath) throw invalid();
        return { action: 'move' as const, file_path: filePath, previous_path: previous, ...(content !== undefined ? { content } : {}) };
    }
  });
}

function visibilityParam(c: Ctx): SnippetVisibility | undefined {
  return c.params.enum('visibility', SNIPPET_VISIBILITIES);
}

function titleParam(c: Ctx, required: boolean): string | undefined {
  if (!c.params.has('title')) {
    if (required) throw notGiven('title');
    return undefined;
  }
  if (isBlank(c.params.raw.title)) throw paramError('title is empty');
  return c.params.string('title');
}

/** Entities::Snippet / PersonalSnippet / ProjectSnippet in GitLab's field order. */
async function present(c: Ctx, rows: SnippetRow[], projects: Projects): Promise<Record<string, unknown>[]> {
  const users = await findUserRefsByIds(c.app.db, [...new Set(rows.map((s) => s.author_id))]);
  return rows.map((s) => {
    const p = s.project_id === null ? null : projects.get(s.project_id);
    const web = p ? `${c.base}/${fullPath(p.project, p.namespace)}/-/snippets/${s.id}` : `${c.base}/-/snippets/${s.id}`;
    // The repository as git clones it (src/git-http: `snippets/<id>.git`, `<project>/snippets/<id>.git`).
    const repoPath = p ? `${fullPath(p.project, p.namespace)}/snippets/${s.id}` : `snippets/${s.id}`;
    const author = users.get(s.author_id);
    const files = snippetFiles(s);
    return {
      id: s.id,
      title: s.title,
      description: s.description,
      visibility: s.visibility,
      author: author ? presentUserBasic(author, { base: c.base }) : null,
      created_at: s.created_at,
      updated_at: s.updated_at,
      project_id: s.project_id,
      web_url: web,
      raw_url: `${web}/raw`,
      ssh_url_to_repo: `git@${host(c.base)}:${repoPath}.git`,
      http_url_to_repo: `${c.base}/${repoPath}.git`,
      file_name: files[0] ?? null,
      files: files.map((path) => ({ path, raw_url: `${web}/raw/${s.default_branch}/${path}` })),
      imported: false,
      imported_from: 'none',
    };
  });
}

/** The projects of project snippets on a page, with the caller's access (one lookup per project). */
async function loadProjects(c: Ctx, rows: SnippetRow[], withAccess = false): Promise<Projects> {
  const ids = [...new Set(rows.filter((s) => s.project_id !== null).map((s) => s.project_id!))];
  const out: Projects = new Map();
  if (!ids.length) return out;
  const q = projectQueries(c.app.db, ids);
  const [projects, namespaces] = await Promise.all([q.projects.execute(), q.namespaces.execute()]);
  // Lists show only the projects' paths: the caller's access is looked up for a single snippet.
  for (const [id, p] of joinProjects(projects, namespaces)) out.set(id, { ...p, access: withAccess ? await effectiveAccess(c.app.db, c.user, p.project, p.namespace) : 0 });
  return out;
}

function dateFilters<Q extends { where: (...args: any[]) => Q }>(c: Ctx, q: Q): Q { // eslint-disable-line @typescript-eslint/no-explicit-any
  const after = c.params.datetime('created_after');
  const before = c.params.datetime('created_before');
  if (after) q = q.where('snippets.created_at', '>', after);
  if (before) q = q.where('snippets.created_at', '<', before);
  return q;
}

/** A personal-route snippet (`/snippets/:id`): any snippet the caller may read, project ones too; else 404 `Snippet Not Found`. */
async function readableSnippet(c: Ctx, id: number, own = false): Promise<{ s: SnippetRow; p: SnippetProject | null }> {
  const s = id > 0 ? await c.app.db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
  if (!s || (own && s.author_id !== c.user?.id)) throw notFound('Snippet');
  const p = s.project_id === null ? null : ((await loadProjects(c, [s], true)).get(s.project_id) ?? null);
  if (p && !canReadProject(c.user, p.project, p.access)) throw notFound('Snippet');
  if (!canReadSnippet(c.user, s, p)) throw notFound('Snippet');
  return { s, p };
}

/** Raw content of one file (GitLab serves it through Workhorse: text/plain, inline with the file's name). */
async function sendRaw(c: Ctx, s: SnippetRow, ref: string, path: string, missingRef: boolean) {
  const repo = new GitRepository(snippetRepoPath(c.app, s.id));
  if (missingRef && !(await repo.resolveRef(ref).catch(() => null))) throw notFound('Reference');
  let blob;
  try {
    blob = await repo.readBlob(ref, path);
  } catch (err) {
    if (isGitError(err)) throw notFound('File');
    throw err;
  }
  if (!blob) throw notFound('File');
  return sendInlineFile(c, path, blob.content);
}

/** `/files/:ref/:file_path/raw`: the file at a ref (`404 Reference Not Found`, `404 File Not Found`). */
async function sendFileRaw(c: Ctx, s: SnippetRow) {
  const ref = pathParam(c, 'ref');
  const path = pathParam(c, 'file_path');
  if (repoPathProblem(path)) throw paramError('file_path should be a valid file path');
  return sendRaw(c, s, ref, path, true);
}

/** The project of `:id` with the snippets feature open to the caller (403 otherwise). */
async function snippetProject(c: Ctx): Promise<SnippetProject & { found: FoundProject }> {
  const found = await findProject(c, pathParam(c, 'id'));
  const p = { project: found.project, namespace: found.namespace, access: found.access };
  if (!snippetsFeatureAvailable(c.user, p)) throw forbidden();
  return { ...p, found };
}

/** A project snippet by `:snippet_id` the caller may read (404 `message`). */
async function projectSnippet(c: Ctx, p: SnippetProject, message: string): Promise<SnippetRow> {
  const id = integerPathParam(c, 'snippet_id');
  const s = id > 0 ? await c.app.db.selectFrom('snippets').selectAll().where('id', '=', id).where('project_id', '=', p.project.id).executeTakeFirst() : undefined;
  if (!s || !canReadSnippet(c.user, s, p)) throw apiError(404, message);
  return s;
}

function updateInput(c: Ctx, s: SnippetRow) {
  c.params.requireAtLeastOne(['content', 'description', 'files', 'file_name', 'title', 'visibility']);
  const title = titleParam(c, false);
  const description = c.params.has('description') ? (c.params.nullableString('description') ?? null) : undefined;
  const visibility = visibilityParam(c);
  const actions = updateActions(c, s);
  return { title, description, visibility, actions };
}

/**
 * Every snippet `user` may read, as a query (SnippetsFinder with all_available): administrators
 * all; else their own, personal ones by visibility, and project ones where the project and its
 * snippets are open to them (members: every snippet of the project, the feature not disabled).
 */
export async function readableSnippets(c: Ctx, user: UserRow) {
  const db = c.app.db;
  const q = db.selectFrom('snippets').selectAll('snippets');
  // Administrators: all, but none of a project whose snippets are turned off.
  if (user.is_admin) return q.where((eb) => eb.or([eb('snippets.project_id', 'is', null), eb('snippets.project_id', 'in', db.selectFrom('projects').select('projects.id').where('projects.snippets_access_level', '!=', 'disabled'))]));
  const open = user.external ? ['public'] : ['public', 'internal'];
  const visible = await visibleCondition(db, user);
  const member = await membershipCondition(db, user, AccessLevel.GUEST);
  let seen = db.selectFrom('projects').select('projects.id').where('projects.snippets_access_level', '=', 'enabled');
  if (visible) seen = seen.where(visible);
  const mine = db.selectFrom('projects').select('projects.id').where('projects.snippets_access_level', '!=', 'disabled').where(member);
  return q.where((eb) =>
    eb.or([
      eb.and([eb('snippets.author_id', '=', user.id), eb.or([eb('snippets.project_id', 'is', null), eb('snippets.project_id', 'in', mine), eb('snippets.project_id', 'in', seen)])]),
      eb.and([eb('snippets.project_id', 'is', null), eb('snippets.visibility', 'in', open)]),
      eb.and([eb('snippets.project_id', 'in', seen), eb('snippets.visibility', 'in', open)]),
      eb('snippets.project_id', 'in', mine),
    ]),
  );
}

/** A page of snippets in GitLab's entity (their projects loaded once). */
export async function presentSnippets(c: Ctx, rows: SnippetRow[]): Promise<Record<string, unknown>[]> {
  return present(c, rows, await loadProjects(c, rows));
}

export function registerSnippetRoutes(app: FastifyInstance): void {
  registerSnippetHooks();

  // GET /snippets: the caller's snippets, personal and in projects they may still read.
  route(app, 'GET', '/snippets', async function mySnippets(c) {
    const user = c.requireUser();
    const q = dateFilters(c, (await readableSnippets(c, user)).where('snippets.author_id', '=', user.id));
    return presentSnippets(c, await paginateOffset(c, q.orderBy('snippets.id', 'desc')));
  });

  // GET /snippets/public: everyone's public personal snippets.
  route(app, 'GET', '/snippets/public', async function publicSnippets(c) {
    c.requireUser();
    const q = dateFilters(c, c.app.db.selectFrom('snippets').selectAll('snippets').where('snippets.project_id', 'is', null).where('snippets.visibility', '=', 'public'));
    return present(c, await paginateOffset(c, q.orderBy('snippets.id', 'desc')), new Map());
  });

  // GET /snippets/all: every snippet the caller may read (administrators: all).
  route(app, 'GET', '/snippets/all', async function allSnippets(c) {
    const q = dateFilters(c, await readableSnippets(c, c.requireUser()));
    const rows = await paginateOffset(c, q.orderBy('snippets.id', 'desc'));
    return presentSnippets(c, rows);
  });

  route(app, 'GET', '/snippets/:id', async function getSnippet(c) {
    const { s, p } = await readableSnippet(c, integerPathParam(c, 'id'));
    return (await present(c, [s], p ? new Map([[s.project_id!, p]]) : new Map()))[0];
  });

  route(app, 'POST', '/snippets', async function createPersonal(c) {
    const user = c.requireUser();
    if (user.external) throw forbidden();
    const title = titleParam(c, true)!;
    const description = c.params.nullableString('description') ?? null;
    const visibility = visibilityParam(c) ?? 'internal';
    const files = createFilesParam(c);
    const s = await createSnippet(c.app, user, { projectId: null, title, description, visibility, files });
    c.status(201);
    return (await present(c, [s], new Map()))[0];
  });

  // PUT / DELETE /snippets/:id: the caller's own snippets only (404 for anyone else's, administrators too).
  route(app, 'PUT', '/snippets/:id', async function updatePersonal(c) {
    const user = c.requireUser();
    const { s, p } = await readableSnippet(c, integerPathParam(c, 'id'), true);
    if (!canUpdateSnippet(user, s, p)) throw forbidden();
    const fresh = await updateSnippet(c.app, user, s, updateInput(c, s));
    return (await present(c, [fresh], p ? new Map([[s.project_id!, p]]) : new Map()))[0];
  });

  route(app, 'DELETE', '/snippets/:id', async function deletePersonal(c) {
    const user = c.requireUser();
    const { s, p } = await readableSnippet(c, integerPathParam(c, 'id'), true);
    if (!canDeleteSnippet(user, s, p)) throw forbidden();
    await deleteSnippet(c.app, s);
    c.status(204);
    return undefined;
  });

  route(app, 'GET', '/snippets/:id/raw', async function personalRaw(c) {
    const { s } = await readableSnippet(c, integerPathParam(c, 'id'));
    const first = snippetFiles(s)[0];
    if (!first) throw notFound('File');
    return sendRaw(c, s, s.default_branch, first, false);
  });

  route(app, 'GET', '/snippets/:id/files/:ref/:file_path/raw', async function personalFileRaw(c) {
    const { s } = await readableSnippet(c, integerPathParam(c, 'id'));
    return sendFileRaw(c, s);
  });

  // Project snippets.
  route(app, 'GET', '/projects/:id/snippets', async function projectSnippets(c) {
    const user = c.requireUser();
    const p = await snippetProject(c);
    let q = c.app.db.selectFrom('snippets').selectAll('snippets').where('snippets.project_id', '=', p.project.id);
    if (!user.is_admin && p.access < AccessLevel.GUEST) {
      const open = user.external ? ['public'] : ['public', 'internal'];
      q = q.where((eb) => eb.or([eb('snippets.visibility', 'in', open), eb('snippets.author_id', '=', user.id)]));
    }
    const rows = await paginateOffset(c, q.orderBy('snippets.id', 'desc'));
    return present(c, rows, new Map([[p.project.id, p]]));
  });

  route(app, 'GET', '/projects/:id/snippets/:snippet_id', async function getProjectSnippet(c) {
    const p = await snippetProject(c);
    const s = await projectSnippet(c, p, '404 Not found');
    return (await present(c, [s], new Map([[p.project.id, p]])))[0];
  });

  route(app, 'POST', '/projects/:id/snippets', async function createProjectSnippet(c) {
    const user = c.requireUser();
    const p = await snippetProject(c);
    // create_snippet on a project: Reporters and up, not in an archived project.
    if (!user.is_admin && p.access < AccessLevel.REPORTER) throw forbidden();
    if (p.project.archived) throw forbidden();
    const title = titleParam(c, true)!;
    const description = c.params.nullableString('description') ?? null;
    if (!c.params.has('visibility')) throw notGiven('visibility');
    const visibility = visibilityParam(c)!;
    const files = createFilesParam(c);
    const s = await createSnippet(c.app, user, { projectId: p.project.id, title, description, visibility, files });
    c.status(201);
    return (await present(c, [s], new Map([[p.project.id, p]])))[0];
  });

  route(app, 'PUT', '/projects/:id/snippets/:snippet_id', async function updateProjectSnippet(c) {
    const user = c.requireUser();
    const p = await snippetProject(c);
    const s = await projectSnippet(c, p, '404 Snippet Not Found');
    if (!canUpdateSnippet(user, s, p) || p.project.archived) throw forbidden();
    const fresh = await updateSnippet(c.app, user, s, updateInput(c, s));
    return (await present(c, [fresh], new Map([[p.project.id, p]])))[0];
  });

  route(app, 'DELETE', '/projects/:id/snippets/:snippet_id', async function deleteProjectSnippet(c) {
    const user = c.requireUser();
    const p = await snippetProject(c);
    const s = await projectSnippet(c, p, '404 Snippet Not Found');
    if (!canDeleteSnippet(user, s, p) || p.project.archived) throw forbidden();
    await deleteSnippet(c.app, s);
    c.status(204);
    return undefined;
  });

  route(app, 'GET', '/projects/:id/snippets/:snippet_id/raw', async function projectRaw(c) {
    const p = await snippetProject(c);
    const s = await projectSnippet(c, p, '404 Snippet Not Found');
    const first = snippetFiles(s)[0];
    if (!first) throw notFound('File');
    return sendRaw(c, s, s.default_branch, first, false);
  });

  route(app, 'GET', '/projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw', async function projectFileRaw(c) {
    const p = await snippetProject(c);
    const s = await projectSnippet(c, p, '404 Snippet Not Found');
    return sendFileRaw(c, s);
  });
}
