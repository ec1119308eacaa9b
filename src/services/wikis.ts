// Project wikis (GitLab's ProjectWiki, WikiPage and WikiPages::*Service): the pages are files in the
// project's own wiki repository (<repos>/<id>.wiki.git, cloned as <full_path>.wiki.git), one commit
// per change on its default branch (main); each page also has a meta row (migration 0029) whose id
// is the API's `wiki_page_meta_id` and the target of the page's events.
//
// Titles and slugs as GitLab's Wiki.sluggified_title: each `/` segment of a title is squished, the
// path normalised (`..`, `.`, a leading `/` and `//` go), spaces become `-`; the file is the slug
// with the format's extension (`.md`, `.rdoc`, `.asciidoc`, `.org`). A page is found by its slug
// ignoring case, in any markup format. A page's `title` is its file name without the extension,
// dashes shown as spaces (GitLab's WikiPage#title).
import { posix } from 'node:path';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { UserRow } from '../db/repositories/users.js';
import { repoPathProblem } from '../git/paths.js';
import { catFileBatch, catFileCheck } from '../git/objects.js';
import { randomBytes } from 'node:crypto';
import { runGit, spawnGit } from '../git/exec.js';
import { GitRepository, initBareRepository, isGitError, isValidNewBranchName } from '../git/repository.js';
import type { FileAction } from '../git/write.js';
import { apiError, forbidden } from '../http/errors.js';
import { AccessLevel, visibleWithoutMembership } from './access.js';
import { recordEvents } from './activity.js';
import { projectDeletionHooks } from './projects/create.js';
import type { NamespaceRow, ProjectRow } from './projects/lookup.js';
import { removeReposWhenGone } from './repository/removal.js';
import { isUniqueViolation } from './projects/unique.js';
import { storedSize } from './repository/repository-size.js';
import { triggerHooks } from './webhooks/dispatch.js';
import type { HookProject } from './webhooks/payloads.js';
import { wikiPagePayload } from './webhooks/wiki-payloads.js';
import type { UserRefRow } from '../db/repositories/users.js';

/** The formats a page may be written in (GitLab's Wiki::VALID_USER_MARKUPS), and their extensions. */
export const WIKI_FORMATS = ['markdown', 'rdoc', 'asciidoc', 'org'] as const;
export type WikiFormat = (typeof WIKI_FORMATS)[number];
const DEFAULT_EXTENSION: Record<WikiFormat, string> = { markdown: 'md', rdoc: 'rdoc', asciidoc: 'asciidoc', org: 'org' };
/** Every markup GitLab reads (Wiki::MARKUPS): the extension (the whole of it) and its format. */
const EXTENSIONS: Array<[RegExp, string]> = [
  [/^(md|mkdn?|mdown|markdown)$/i, 'markdown'],
  [/^rdoc$/i, 'rdoc'],
  [/^(adoc|asciidoc)$/i, 'asciidoc'],
  [/^org$/i, 'org'],
  [/^textile$/i, 'textile'],
  [/^creole$/i, 'creole'],
  [/^re?st(\.txt)?$/i, 'rest'],
  [/^(media)?wiki$/i, 'mediawiki'],
  [/^pod$/i, 'pod'],
  [/^txt$/i, 'plaintext'],
];
const PAGE_FILE = /\.(md|mkdn?|mdown|markdown|rdoc|adoc|asciidoc|org|textile|creole|re?st(\.txt)?|(media)?wiki|pod|txt)$/i;
export const WIKI_DEFAULT_BRANCH = 'main';
/** GitLab's Gitlab::WikiPages::MAX_TITLE_BYTES and MAX_DIRECTORY_BYTES. */
const MAX_TITLE_BYTES = 245;
const MAX_DIRECTORY_BYTES = 255;
/** GitLab's wiki_page_max_content_bytes default (50 MiB). */
const MAX_CONTENT_BYTES = 50 * 1024 * 1024;
/** Titles that name the wiki's own web pages (WikiPage's reserved names). */
const RESERVED = ['pages', 'templates', 'new', 'git_access', '-'];

export interface WikiPage {
  /** The file in the wiki repository. */
  path: string;
  /** The path without its extension (url_path). */
  slug: string;
  title: string;
  format: string;
  blobId: string;
}

export interface WikiProject {
  project: ProjectRow;
  namespace: NamespaceRow;
  access: number;
}

export function wikiRepoPath(app: AppContext, projectId: number): string {
  return join(app.reposDir, `${projectId}.wiki.git`);
}

// --- who may do what (ProjectPolicy's wiki abilities; the project is visible to the caller) ---

function featureOpen(user: UserRow | null, p: WikiProject): boolean {
  const level = p.project.wiki_access_level;
  if (level === 'disabled') return false;
  if (user?.is_admin) return true;
  if (level === 'private') return p.access >= AccessLevel.GUEST;
  return true;
}

/** read_wiki: Guests and up, and whoever sees a public or internal project without membership. */
export function canReadWiki(user: UserRow | null, p: WikiProject): boolean {
  if (!featureOpen(user, p)) return false;
  if (user?.is_admin || p.access >= AccessLevel.GUEST) return true;
  return visibleWithoutMembership(p.project.visibility, user);
}

/** download_wiki_code (cloning): Planners, Reporters and up, and public access where the wiki is open to all. */
export function canDownloadWiki(user: UserRow | null, p: WikiProject): boolean {
  if (!featureOpen(user, p)) return false;
  if (user?.is_admin || p.access >= AccessLevel.PLANNER) return true;
  return p.project.wiki_access_level === 'enabled' && visibleWithoutMembership(p.project.visibility, user);
}

/** create_wiki (create, edit, upload, push): Developers and up, and Planners; never in an archived project. */
export function canWriteWiki(user: UserRow | null, p: WikiProject): boolean {
  if (!user || p.project.archived || !featureOpen(user, p)) return false;
  return Boolean(user.is_admin) || p.access >= AccessLevel.DEVELOPER || p.access === AccessLevel.PLANNER;
}

/** admin_wiki (delete): Maintainers and up, and Planners. */
export function canAdminWiki(user: UserRow | null, p: WikiProject): boolean {
  if (!user || p.project.archived || !featureOpen(user, p)) return false;
  return Boolean(user.is_admin) || p.access >= AccessLevel.MAINTAINER || p.access === AccessLevel.PLANNER;
}

// --- titles, slugs and pages ---

function formatOfExtension(ext: string): string {
  for (const [re, format] of EXTENSIONS) if (re.test(ext)) return format;
  return 'markdown';
}

/** A page for a file of the repository, or null when the file is not a page. */
export function pageOfFile(path: string, blobId: string): WikiPage | null {
  const m = PAGE_FILE.exec(path);
  // A file only a push can name (a newline, control characters) is no page: the API could not address it.
  if (!m || /[\x00-\x1f\x7f]/.test(path) || repoPathProblem(path)) return null;
  const base = posix.basename(path);
  const lastDot = base.lastIndexOf('.');
  return {
    path,
    slug: path.replace(/\.[^./]+$/, ''),
    title: (lastDot > 0 ? base.slice(0, lastDot) : base).replace(/-/g, ' '),
    format: formatOfExtension(m[1]!),
    blobId,
  };
}

/** WikiPage#process_title: each segment squished. */
function squish(title: string): string {
  return title
    .split('/')
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .join('/');
}

/** Wiki.sluggified_title: the normalised path with spaces as dashes. */
export function sluggify(title: string): string {
  return posix.resolve('/', title.trim()).slice(1).replace(/ /g, '-');
}

/** Whether `path` is the page file of `stem` (any markup extension), ignoring case. */
function fileOfStem(path: string, stem: string): boolean {
  if (path.length <= stem.length + 1) return false;
  if (path.slice(0, stem.length).toLowerCase() !== stem.toLowerCase() || path[stem.length] !== '.') return false;
  return EXTENSIONS.some(([re]) => re.test(path.slice(stem.length + 1)));
}

/** Wiki#find_page: the slug as given, then sluggified, ignoring case and format. */
export function findPage(pages: WikiPage[], slug: string): WikiPage | null {
  if (!slug.trim()) return null;
  for (const stem of [slug, sluggify(slug)]) {
    const found = pages.find((p) => fileOfStem(p.path, stem));
    if (found) return found;
  }
  return null;
}

function pageExists(pages: WikiPage[], stem: string, except?: WikiPage): WikiPage | undefined {
  return pages.find((p) => p !== except && fileOfStem(p.path, stem));
}

/** The model's title rules (400 {"message":{"title":[…]}}). */
function validateTitle(title: string, slug: string): void {
  const problems: string[] = [];
  if (!slug) problems.push("can't be blank");
  else {
    const segments = slug.split('/');
    const name = segments.pop()!;
    if (Buffer.byteLength(name) > MAX_TITLE_BYTES) problems.push(`exceeds the limit of ${MAX_TITLE_BYTES} bytes`);
    for (const dir of segments) if (Buffer.byteLength(dir) > MAX_DIRECTORY_BYTES) problems.push(`exceeds the limit of ${MAX_DIRECTORY_BYTES} bytes for directory name "${dir}"`);
    if (RESERVED.includes(title.trim().toLowerCase())) problems.push(`'${title.trim()}' is a reserved name`);
    // Control characters make file names no tool shows well: refused with what git itself refuses.
    if (!problems.length && (repoPathProblem(`${slug}.md`) || /[\x00-\x1f\x7f]/.test(slug))) problems.push('is invalid');
  }
  if (problems.length) throw apiError(400, { title: problems });
}

function validateContent(content: string): void {
  if (Buffer.byteLength(content) > MAX_CONTENT_BYTES) throw apiError(400, { content: ['is too long (50 MiB). The maximum size is 50 MiB.'] });
}

// --- front matter (Gitlab::WikiPages::FrontMatterParser) ---

const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** The YAML block a page starts with: a hash, or null when there is a block that is not one (too long, not YAML). */
function parseFrontMatter(content: string): Record<string, unknown> | null {
  const m = FRONT_MATTER.exec(content);
  if (!m) return {};
  if (m[1]!.length > 5000) return null;
  try {
    const parsed = parseYaml(m[1]!, { schema: 'core', maxAliasCount: 10 }) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The YAML block a page starts with, as a hash ({} when there is none or it is not a hash). */
export function frontMatterOf(content: string): Record<string, unknown> {
  return parseFrontMatter(content) ?? {};
}

/** The content with `front` merged into its front matter; a block that cannot be read is not overwritten (400). */
function withFrontMatter(content: string, front: Record<string, unknown>): string {
  const m = FRONT_MATTER.exec(content);
  const current = parseFrontMatter(content);
  if (current === null) throw apiError(400, { front_matter: ["cannot be merged: the page's front matter is not a YAML hash"] });
  const body = m ? content.slice(m[0].length) : content;
  return `---\n${stringifyYaml({ ...current, ...front })}---\n${body}`;
}

// --- the repository ---

/** The wiki repository, created (empty, HEAD at main) when `create` and missing; null when missing otherwise. */
export async function wikiRepository(app: AppContext, projectId: number, create: boolean): Promise<GitRepository | null> {
  const repo = new GitRepository(wikiRepoPath(app, projectId));
  if (await repo.exists()) return repo;
  if (!create) return null;
  try {
    await initBareRepository(repo.path, { defaultBranch: WIKI_DEFAULT_BRANCH });
  } catch (err) {
    if (!isGitError(err, 'exists')) throw err;
  }
  return repo;
}

async function branchOf(repo: GitRepository): Promise<string> {
  return (await repo.headBranch()) ?? WIKI_DEFAULT_BRANCH;
}

/** The pages at a revision (the default branch by default), sorted by path as GitLab lists them. */
export async function listPages(repo: GitRepository | null, ref?: string): Promise<WikiPage[]> {
  if (!repo) return [];
  const rev = ref ?? (await branchOf(repo));
  if (!(await repo.resolveRef(rev))) return [];
  const items = await repo.listTree({ ref: rev, recursive: true });
  const pages: WikiPage[] = [];
  for (const i of items) {
    if (i.type !== 'blob') continue;
    const page = pageOfFile(i.path, i.id);
    if (page) pages.push(page);
  }
  return pages.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
}

/** GitLab's Gitlab::Git::Blob::MAX_DATA_DISPLAY_SIZE: a page's content is cut there. */
export const MAX_PAGE_DISPLAY = 10 * 1024 * 1024;
/** What one response reads of pages at most; later pages' contents are cut (GITLAB-COMPAT: GitLab sets no total). */
export const CONTENT_BUDGET = 64 * 1024 * 1024;
const BATCH_BYTES = 16 * 1024 * 1024;

/** The first `limit` bytes of a blob, without reading the rest. */
function blobPrefix(gitDir: string, oid: string, limit: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const child = spawnGit(['cat-file', 'blob', oid], { gitDir });
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      child.kill();
      resolve(Buffer.concat(chunks).subarray(0, limit));
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) finish();
    });
    child.on('close', finish);
    child.on('error', finish);
  });
}

/** The pages' contents, each cut at MAX_PAGE_DISPLAY and all together at CONTENT_BUDGET (few git calls). */
export async function pageContents(repo: GitRepository, pages: WikiPage[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const sizes = await catFileCheck(repo.path, pages.map((p) => p.blobId || '0000000000000000000000000000000000000000'));
  let budget = CONTENT_BUDGET;
  let batch: Array<{ page: WikiPage }> = [];
  let batchBytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    const objects = await catFileBatch(repo.path, batch.map((b) => b.page.blobId));
    batch.forEach((b, i) => out.set(b.page.path, objects[i]?.content.toString('utf8') ?? ''));
    batch = [];
    batchBytes = 0;
  };
  for (const [i, page] of pages.entries()) {
    const size = sizes[i]?.type === 'blob' ? sizes[i]!.size : 0;
    const allowed = Math.min(size, MAX_PAGE_DISPLAY, budget);
    budget -= allowed;
    if (size === 0 || allowed <= 0) out.set(page.path, '');
    else if (allowed < size) out.set(page.path, (await blobPrefix(repo.path, page.blobId, allowed)).toString('utf8'));
    else {
      if (batchBytes + size > BATCH_BYTES) await flush();
      batch.push({ page });
      batchBytes += size;
    }
  }
  await flush();
  return out;
}

/** Every extension a page may have, the ones GitLab writes first. */
const CANDIDATE_EXTENSIONS = ['md', 'asciidoc', 'rdoc', 'org', 'markdown', 'mkd', 'mkdn', 'mdown', 'adoc', 'textile', 'creole', 'rst', 'rest', 'rst.txt', 'rest.txt', 'wiki', 'mediawiki', 'pod', 'txt'];

/** The pages at exact slugs on the default branch (one git call, whatever the wiki's size). */
export async function pagesAtSlugs(repo: GitRepository | null, slugs: string[]): Promise<Map<string, WikiPage>> {
  const out = new Map<string, WikiPage>();
  const wanted = [...new Set(slugs)].filter((slug) => !repoPathProblem(`${slug}.md`) && !/[\x00-\x1f\x7f]/.test(slug));
  if (!repo || !wanted.length) return out;
  const branch = await branchOf(repo);
  const paths = wanted.flatMap((slug) => CANDIDATE_EXTENSIONS.map((ext) => `${slug}.${ext}`));
  const found = await catFileCheck(repo.path, paths.map((p) => `${branch}:${p}`));
  paths.forEach((path, i) => {
    const hit = found[i];
    if (!hit || hit.type !== 'blob') return;
    const page = pageOfFile(path, hit.oid);
    if (page && !out.has(page.slug)) out.set(page.slug, page);
  });
  return out;
}

// One writer at a time per wiki: the duplicate checks and the commit see the same branch.
const writers = new Map<number, Promise<unknown>>();

async function serialized<T>(projectId: number, work: () => Promise<T>): Promise<T> {
  const before = writers.get(projectId) ?? Promise.resolve();
  const run = before.then(work, work);
  const settled = run.catch(() => undefined);
  writers.set(projectId, settled);
  try {
    return await run;
  } finally {
    if (writers.get(projectId) === settled) writers.delete(projectId);
  }
}

/** The branch as one write sees it: its head and the pages there. */
interface WikiState {
  branch: string;
  head: string | null;
  pages: WikiPage[];
}

/**
 * Runs a write against one state of the branch: its checks read the pages at `head`, and its commit
 * lands only if the branch is still there (compare-and-swap); a push or another process that moved
 * it meanwhile makes the write start again with the new state (three times at most).
 */
async function onBranch<T>(repo: GitRepository, write: (state: WikiState) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const branch = await branchOf(repo);
    const head = await repo.branchSha(branch);
    const pages = head ? await listPages(repo, head) : [];
    try {
      return await write({ branch, head, pages });
    } catch (err) {
      if (!isGitError(err, 'cas_failed') || attempt >= 2) throw err;
    }
  }
}

async function commit(repo: GitRepository, state: WikiState, user: UserRow, message: string, actions: FileAction[]): Promise<string> {
  return repo.commitFiles({ branch: state.branch, startSha: state.head, message, author: { name: user.name, email: user.email }, actions, expectedOldSha: state.head });
}

async function blobAt(repo: GitRepository, sha: string, path: string): Promise<string> {
  const [found] = await catFileCheck(repo.path, [`${sha}:${path}`]);
  return found?.oid ?? '';
}

function gitFailure(err: unknown, message: string): never {
  if (isGitError(err) && err.code !== 'cas_failed') throw apiError(400, { base: [message] });
  throw err;
}

// --- meta rows ---

/** The meta ids of pages (found or made, GitLab's find_or_create_meta), by slug. */
export async function metaIds(app: AppContext, projectId: number, pages: Array<Pick<WikiPage, 'slug' | 'title'>>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < pages.length; i += 500) {
    const chunk = pages.slice(i, i + 500);
    const slugs = chunk.map((p) => p.slug);
    const load = async () => {
      const rows = await app.db.selectFrom('wiki_page_meta').select(['id', 'canonical_slug']).where('project_id', '=', projectId).where('canonical_slug', 'in', slugs).execute();
      for (const r of rows) out.set(r.canonical_slug!, r.id);
    };
    await load();
    const missing = chunk.filter((p) => !out.has(p.slug));
    if (!missing.length) continue;
    const now = nowIso();
    await app.db
      .insertInto('wiki_page_meta')
      .values(missing.map((p) => ({ project_id: projectId, title: p.title, canonical_slug: p.slug, created_at: now, updated_at: now })))
      .onConflict((oc) => oc.columns(['project_id', 'canonical_slug']).doNothing())
      .execute();
    await load();
  }
  return out;
}

/** After a rename: the page's meta takes the new slug (a meta left there by a deleted page lets go of it). */
async function moveMeta(app: AppContext, projectId: number, from: WikiPage, to: Pick<WikiPage, 'slug' | 'title'>): Promise<number> {
  const [id] = (await metaIds(app, projectId, [from])).values();
  // A list may insert a meta for the new slug between the two statements (PostgreSQL): once more then.
  for (let attempt = 0; ; attempt++) {
    try {
      await app.db.transaction().execute(async (trx) => {
        await trx.updateTable('wiki_page_meta').set({ canonical_slug: null }).where('project_id', '=', projectId).where('canonical_slug', '=', to.slug).where('id', '!=', id!).execute();
        await trx.updateTable('wiki_page_meta').set({ canonical_slug: to.slug, title: to.title, updated_at: nowIso() }).where('id', '=', id!).execute();
      });
      return id!;
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= 2) throw err;
    }
  }
}

// --- events and webhooks ---

export interface WikiChangeContext {
  app: AppContext;
  base: string;
  user: UserRow;
  wiki: WikiProject;
}

/** The contribution event and the Wiki Page Hook of a change (never thrown: the change stands). */
async function announce(ctx: WikiChangeContext, page: WikiPage, content: string, metaId: number, action: 'create' | 'update' | 'delete', message: string, sha: string, branch: string): Promise<void> {
  await measureWiki(ctx.app, ctx.wiki.project.id);
  const eventAction = action === 'create' ? 'created' : action === 'update' ? 'updated' : 'destroyed';
  await recordEvents(ctx.app, [{ projectId: ctx.wiki.project.id, authorId: ctx.user.id, action: eventAction, targetType: 'WikiPage::Meta', targetId: metaId }]);
  await triggerHooks(ctx.app, ctx.wiki.project.id, {
    scope: 'wiki_page_hooks',
    payload: () => wikiPagePayload({ base: ctx.base, project: ctx.wiki, user: ctx.user, page, content, action, message, sha, defaultBranch: branch }),
  });
}

/** The project's wiki_size statistic, measured again (never thrown: the change stands). */
export async function measureWiki(app: AppContext, projectId: number): Promise<void> {
  try {
    const repo = await wikiRepository(app, projectId, false);
    const size = repo ? await repo.repositorySize() : 0;
    await app.db.updateTable('projects').set({ wiki_size: storedSize(size) }).where('id', '=', projectId).execute();
  } catch (err) {
    app.log.warn({ err, projectId }, 'could not measure the wiki');
  }
}

/** The Wiki Page Hook test sample (TestHooks::ProjectService): the first page, as created; null without pages. */
export async function wikiTestPayload(app: AppContext, base: string, project: HookProject, user: UserRefRow): Promise<Record<string, unknown> | null> {
  const repo = await wikiRepository(app, project.project.id, false);
  const [page] = await listPages(repo);
  if (!repo || !page) return null;
  const branch = await branchOf(repo);
  const [content, last] = await Promise.all([pageContents(repo, [page]), repo.lastCommitForPath(branch, page.path).catch(() => null)]);
  return wikiPagePayload({ base, project, user, page, content: content.get(page.path) ?? '', action: 'create', message: last?.message ?? '', sha: last?.id ?? '', defaultBranch: branch });
}

// --- writes ---

export interface NewPage {
  title: string;
  content: string;
  format: WikiFormat;
  message?: string;
  frontMatter?: Record<string, unknown>;
}

export interface WrittenPage {
  page: WikiPage;
  content: string;
  metaId: number;
}

/** WikiPages::CreateService: one commit adding the page's file. */
export async function createPage(ctx: WikiChangeContext, input: NewPage): Promise<WrittenPage> {
  const title = squish(input.title);
  const slug = sluggify(title);
  validateTitle(input.title, slug);
  const content = input.frontMatter ? withFrontMatter(input.content, input.frontMatter) : input.content;
  validateContent(content);
  const path = `${slug}.${DEFAULT_EXTENSION[input.format]}`;
  const projectId = ctx.wiki.project.id;
  const repo = (await wikiRepository(ctx.app, projectId, true))!;
  const message = input.message?.trim() ? input.message : `${ctx.user.username} created page: ${title}`;
  return serialized(projectId, async () => {
    const { sha, branch } = await onBranch(repo, async (state) => {
      if (pageExists(state.pages, slug)) throw apiError(400, { base: [`Duplicate page: A page with that title already exists in the file ${path}`] });
      try {
        return { sha: await commit(repo, state, ctx.user, message, [{ action: 'create', file_path: path, content }]), branch: state.branch };
      } catch (err) {
        gitFailure(err, 'Could not create wiki page');
      }
    });
    const page = pageOfFile(path, await blobAt(repo, sha, path))!;
    const metaId = (await metaIds(ctx.app, projectId, [page])).get(page.slug)!;
    await ctx.app.db.updateTable('wiki_page_meta').set({ title: page.title, updated_at: nowIso() }).where('id', '=', metaId).execute();
    await announce(ctx, page, content, metaId, 'create', message, sha, branch);
    return { page, content, metaId };
  });
}

export interface PageChange {
  title?: string;
  content?: string;
  format?: WikiFormat;
  message?: string;
  frontMatter?: Record<string, unknown>;
}

/**
 * WikiPages::UpdateService: one commit changing the content and moving the file when the title or
 * the format changes. A title without a `/` keeps the page in its directory, one with a leading `/`
 * moves it to the root, one with directories is the new path. GITLAB-COMPAT: a change without a
 * title keeps the page where it is and one without a format keeps its format (GitLab moves a nested
 * page to the root and turns it into Markdown).
 */
export async function updatePage(ctx: WikiChangeContext, slugParam: string, change: PageChange): Promise<WrittenPage | null> {
  const projectId = ctx.wiki.project.id;
  if (change.title !== undefined && !squish(change.title).replace(/\//g, '')) throw apiError(400, { title: ["can't be blank"] });
  const repo = await wikiRepository(ctx.app, projectId, false);
  if (!repo) return null;
  return serialized(projectId, async () => {
    const written = await onBranch(repo, async (state) => {
      const page = findPage(state.pages, slugParam);
      if (!page) return null;
      let stem = page.slug;
      let title = page.title;
      if (change.title !== undefined) {
        const given = squish(change.title);
        const placed = given.startsWith('/') ? given : given.includes('/') ? given : posix.join(posix.dirname(page.path), given);
        stem = sluggify(placed);
        validateTitle(change.title, stem);
        title = given.replace(/^\/+/, '');
      }
      const ext = change.format && change.format !== page.format ? DEFAULT_EXTENSION[change.format] : page.path.slice(page.slug.length + 1);
      const path = `${stem}.${ext}`;
      if (stem.toLowerCase() !== page.slug.toLowerCase() && pageExists(state.pages, stem, page)) {
        throw apiError(400, { base: ['There is already a page with the same title in that path.'] });
      }
      // The whole page when it is kept (not the display cut): read directly.
      let content = change.content ?? (await repo.readBlob(state.head!, page.path))?.content.toString('utf8') ?? '';
      if (change.frontMatter) content = withFrontMatter(content, change.frontMatter);
      validateContent(content);
      const message = change.message?.trim() ? change.message : `${ctx.user.username} updated page: ${title}`;
      const actions: FileAction[] = path === page.path ? [{ action: 'update', file_path: path, content }] : [{ action: 'move', previous_path: page.path, file_path: path, content }];
      try {
        return { page, path, content, message, branch: state.branch, sha: await commit(repo, state, ctx.user, message, actions) };
      } catch (err) {
        gitFailure(err, 'Could not update wiki page');
      }
    });
    if (!written) return null;
    const { page, path, content, message, sha, branch } = written;
    const updated = pageOfFile(path, await blobAt(repo, sha, path))!;
    const metaId = path === page.path ? (await metaIds(ctx.app, projectId, [updated])).get(updated.slug)! : await moveMeta(ctx.app, projectId, page, updated);
    await ctx.app.db.updateTable('wiki_page_meta').set({ title: updated.title, updated_at: nowIso() }).where('id', '=', metaId).execute();
    await announce(ctx, updated, content, metaId, 'update', message, sha, branch);
    return { page: updated, content, metaId };
  });
}

/** WikiPages::DestroyService: one commit removing the file; the meta stays (its events name it). */
export async function deletePage(ctx: WikiChangeContext, slugParam: string): Promise<boolean> {
  const projectId = ctx.wiki.project.id;
  const repo = await wikiRepository(ctx.app, projectId, false);
  if (!repo) return false;
  return serialized(projectId, async () => {
    const done = await onBranch(repo, async (state) => {
      const page = findPage(state.pages, slugParam);
      if (!page) return null;
      const message = `${ctx.user.username} deleted page: ${page.title}`;
      try {
        return { page, message, branch: state.branch, sha: await commit(repo, state, ctx.user, message, [{ action: 'delete', file_path: page.path }]) };
      } catch (err) {
        if (isGitError(err) && err.code !== 'cas_failed') throw apiError(422, 'Could not delete wiki page');
        throw err;
      }
    });
    if (!done) return false;
    const metaId = (await metaIds(ctx.app, projectId, [done.page])).get(done.page.slug)!;
    await announce(ctx, done.page, '', metaId, 'delete', done.message, done.sha, done.branch);
    return true;
  });
}

/** CarrierWave's sanitising of an upload's name (anything but word characters, `.`, `-` and `+` becomes `_`), at most 255 characters keeping the extension. */
function cleanFileName(name: string): string {
  let clean = posix.basename(name.replace(/\\/g, '/')).replace(/[^\w.+-]/gu, '_');
  if (clean.length > 255) {
    const ext = posix.extname(clean);
    clean = clean.slice(0, 255 - ext.length) + ext;
  }
  return clean;
}

const MEDIA = /\.(png|jpe?g|gif|bmp|tiff?|ico|webp|svg|mp4|m4v|mov|webm|ogv|mp3|oga|ogg|spx|wav|flac|aac)$/i;

/** Wikis::CreateAttachmentService: the file committed at uploads/<32 hex>/<name>. */
export async function uploadAttachment(ctx: WikiChangeContext, file: { name: string; data: Buffer }, branch: string | undefined): Promise<Record<string, unknown>> {
  const name = cleanFileName(file.name);
  if (!name || name === '.' || name === '..') throw apiError(400, 'The file name cannot be empty');
  const path = `uploads/${randomBytes(16).toString('hex')}/${name}`;
  const projectId = ctx.wiki.project.id;
  return serialized(projectId, async () => {
    const repo = (await wikiRepository(ctx.app, projectId, true))!;
    const target = branch ?? (await branchOf(repo));
    const head = await repo.branchSha(target);
    // A new branch needs a name GitLab's GitRefValidator takes (not `refs/heads/x`, not `-x`).
    if (!head && !isValidNewBranchName(target)) throw apiError(400, 'You can only create or edit files when you are on a branch');
    const fallback = head ?? (target === (await branchOf(repo)) ? null : await repo.branchSha(await branchOf(repo)));
    try {
      await repo.commitFiles({ branch: target, startSha: fallback, message: `Upload attachment ${name}`, author: { name: ctx.user.name, email: ctx.user.email }, actions: [{ action: 'create', file_path: path, content: file.data }], expectedOldSha: head });
    } catch (err) {
      if (isGitError(err)) throw apiError(400, isGitError(err, 'invalid_ref') ? 'You can only create or edit files when you are on a branch' : 'Could not upload attachment');
      throw err;
    }
    await measureWiki(ctx.app, projectId);
    const stem = posix.basename(name, posix.extname(name)).replace(/\]/g, '\\]');
    const markdown = MEDIA.test(name) ? `![${stem}](${path})` : `[${name.replace(/\]/g, '\\]')}](${path})`;
    return { file_name: name, file_path: path, branch: target, link: { url: path, markdown } };
  });
}

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
/** Git::WikiPushService's limit of changes a push records. */
const PUSH_CHANGES_LIMIT = 100;

/**
 * After a push to the wiki repository (Git::WikiPushService): an event for each page the push
 * added (`created`), changed (`updated`) or removed (`destroyed`) on the default branch, at most
 * 100. A wiki whose HEAD names no branch yet takes `main`, or the first branch pushed.
 */
export async function afterWikiPush(app: AppContext, projectId: number, userId: number | null, before: Map<string, string>): Promise<void> {
  const repo = await wikiRepository(app, projectId, false);
  if (!repo) return;
  const after = await repo.readRefs(['refs/heads/']);
  let branch = await branchOf(repo);
  if (!after.has(`refs/heads/${branch}`)) {
    const names = [...after.keys()].map((r) => r.slice('refs/heads/'.length)).sort();
    const pick = names.includes(WIKI_DEFAULT_BRANCH) ? WIKI_DEFAULT_BRANCH : names[0];
    if (!pick) return;
    await repo.setHead(pick);
    branch = pick;
  }
  await measureWiki(app, projectId);
  const ref = `refs/heads/${branch}`;
  const from = before.get(ref) ?? EMPTY_TREE;
  const to = after.get(ref);
  if (!to || from === to || userId === null) return;
  const out = (await runGit(['diff-tree', '-r', '--no-renames', '-z', '--name-status', from, to], { gitDir: repo.path })).stdout.toString('utf8');
  const parts = out.split('\0');
  const changed: Array<{ page: WikiPage; action: 'created' | 'updated' | 'destroyed' }> = [];
  for (let i = 0; i + 1 < parts.length && changed.length < PUSH_CHANGES_LIMIT; i += 2) {
    const page = pageOfFile(parts[i + 1]!, '');
    if (!page) continue;
    const status = parts[i]![0];
    changed.push({ page, action: status === 'A' ? 'created' : status === 'D' ? 'destroyed' : 'updated' });
  }
  if (!changed.length) return;
  const ids = await metaIds(app, projectId, changed.map((c) => c.page));
  await recordEvents(
    app,
    changed.map((c) => ({ projectId, authorId: userId, action: c.action, targetType: 'WikiPage::Meta', targetId: ids.get(c.page.slug)! })),
  );
}

/** Refuses a write the caller may not make: 403 (the caller sees the project). */
export function assertCan(allowed: boolean): void {
  if (!allowed) throw forbidden();
}

let registered = false;

/** A deleted project's wiki goes with it: its meta rows and its repository. */
export function registerWikiHooks(): void {
  if (registered) return;
  registered = true;
  projectDeletionHooks.push(async function deleteWiki(app, trx, projectId) {
    await trx.deleteFrom('wiki_page_meta').where('project_id', '=', projectId).execute();
    removeReposWhenGone(app, 'projects', [projectId], (id) => wikiRepoPath(app, id));
  });
}

