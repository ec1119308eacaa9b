// Project wikis (GitLab's lib/api/wikis.rb): list, read, create, update and delete pages, and
// upload attachments into the wiki repository. A slug may come URL-encoded (`dir%2Fpage`, as the
// clients send it) or with its slashes as they are.
import type { FastifyInstance } from 'fastify';
import { isGitError } from '../../../git/repository.js';
import { apiError, notFound, paramError } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { findProject } from '../../../services/projects/lookup.js';
import { renderMarkdown } from '../../../services/merge-requests/markdown.js';
import { uploadedFile } from '../../../services/groups/avatar.js';
import {
  assertCan,
  canAdminWiki,
  canReadWiki,
  canWriteWiki,
  createPage,
  deletePage,
  findPage,
  frontMatterOf,
  listPages,
  metaIds,
  pageContents,
  registerWikiHooks,
  updatePage,
  uploadAttachment,
  WIKI_FORMATS,
  wikiRepository,
  type WikiChangeContext,
  type WikiPage,
  type WikiProject,
} from '../../../services/wikis.js';
import { pathParam } from '../repository/common.js';

/** The project, visible to the caller (404 otherwise), and whether its wiki is readable (403). */
async function readableWiki(c: Ctx): Promise<WikiProject> {
  const found = await findProject(c, pathParam(c, 'id'));
  const p: WikiProject = { project: found.project, namespace: found.namespace, access: found.access };
  assertCan(canReadWiki(c.user, p));
  return p;
}

function slugParam(c: Ctx): string {
  const slug = pathParam(c, '*');
  if (!slug) throw notFound('Wiki Page');
  return slug;
}

const RENDER_LIMIT = 1024 * 1024;

/** Entities::WikiPageBasic. */
function basic(page: WikiPage, metaId: number | undefined): Record<string, unknown> {
  return { format: page.format, slug: page.slug, title: page.title, wiki_page_meta_id: metaId ?? null };
}

/** Entities::WikiPage: the basic fields, then the content (or its HTML), its encoding and front matter. */
function full(page: WikiPage, metaId: number | undefined, content: string, html = false): Record<string, unknown> {
  return {
    ...basic(page, metaId),
    // GITLAB-COMPAT: only a page's first MiB is rendered (the rendering runs on the request's thread).
    content: html ? renderMarkdown(content.length > RENDER_LIMIT ? content.slice(0, RENDER_LIMIT) : content) : content,
    encoding: 'UTF-8',
    front_matter: frontMatterOf(content),
  };
}

function formatParam(c: Ctx) {
  return c.params.enum('format', WIKI_FORMATS);
}

function frontMatterParam(c: Ctx): Record<string, unknown> | undefined {
  const h = c.params.hash('front_matter');
  if (!h) return undefined;
  // As GitLab, only the title is taken from the parameter.
  if (h.title === undefined) return {};
  if (typeof h.title !== 'string') throw paramError('front_matter[title] is invalid');
  return { title: h.title };
}

function changeContext(c: Ctx, wiki: WikiProject): WikiChangeContext {
  return { app: c.app, base: c.base, user: c.requireUser(), wiki };
}

export function registerWikiRoutes(app: FastifyInstance): void {
  registerWikiHooks();

  // GET /projects/:id/wikis: every page, sorted by path, not paginated (as GitLab).
  route(app, 'GET', '/projects/:id/wikis', async function listWikiPages(c) {
    const wiki = await readableWiki(c);
    const withContent = c.params.bool('with_content') ?? false;
    const repo = await wikiRepository(c.app, wiki.project.id, false);
    const pages = await listPages(repo);
    const ids = await metaIds(c.app, wiki.project.id, pages);
    if (!withContent || !repo) return pages.map((p) => basic(p, ids.get(p.slug)));
    const contents = await pageContents(repo, pages);
    return pages.map((p) => full(p, ids.get(p.slug), contents.get(p.path) ?? ''));
  });

  // GET /projects/:id/wikis/:slug (version: a commit of the wiki; render_html: the content as HTML)
  route(app, 'GET', '/projects/:id/wikis/*', async function getWikiPage(c) {
    const wiki = await readableWiki(c);
    const slug = slugParam(c);
    const version = c.params.string('version');
    const html = c.params.bool('render_html') ?? false;
    const repo = await wikiRepository(c.app, wiki.project.id, false);
    let ref: string | undefined;
    if (version !== undefined) {
      const sha = /^[0-9a-f]{4,64}$/i.test(version) && repo ? await repo.resolveRef(`${version}^{commit}`).catch(() => null) : null;
      if (!sha) throw notFound('Wiki Page');
      ref = sha;
    }
    const page = findPage(await listPages(repo, ref), slug);
    if (!repo || !page) throw notFound('Wiki Page');
    const [ids, contents] = await Promise.all([metaIds(c.app, wiki.project.id, [page]), pageContents(repo, [page])]);
    return full(page, ids.get(page.slug), contents.get(page.path) ?? '', html);
  });

  // POST /projects/:id/wikis
  route(app, 'POST', '/projects/:id/wikis', async function createWikiPage(c) {
    const wiki = await readableWiki(c);
    c.params.requireAll(['title', 'content']);
    const title = c.params.string('title')!;
    const content = c.params.string('content')!;
    const format = formatParam(c) ?? 'markdown';
    const message = c.params.string('message');
    const frontMatter = frontMatterParam(c);
    assertCan(canWriteWiki(c.user, wiki));
    const written = await createPage(changeContext(c, wiki), { title, content, format, ...(message !== undefined ? { message } : {}), ...(frontMatter ? { frontMatter } : {}) });
    return full(written.page, written.metaId, written.content);
  });

  // PUT /projects/:id/wikis/:slug
  route(app, 'PUT', '/projects/:id/wikis/*', async function updateWikiPage(c) {
    const wiki = await readableWiki(c);
    const slug = slugParam(c);
    c.params.requireAtLeastOne(['content', 'title', 'format']);
    const title = c.params.string('title');
    const content = c.params.string('content');
    const format = formatParam(c);
    const message = c.params.string('message');
    const frontMatter = frontMatterParam(c);
    assertCan(canWriteWiki(c.user, wiki));
    const written = await updatePage(changeContext(c, wiki), slug, {
      ...(title !== undefined ? { title } : {}),
      ...(content !== undefined ? { content } : {}),
      ...(format !== undefined ? { format } : {}),
      ...(message !== undefined ? { message } : {}),
      ...(frontMatter ? { frontMatter } : {}),
    });
    if (!written) throw notFound('Wiki Page');
    return full(written.page, written.metaId, written.content);
  });

  // DELETE /projects/:id/wikis/:slug
  route(app, 'DELETE', '/projects/:id/wikis/*', async function deleteWikiPage(c) {
    const wiki = await readableWiki(c);
    const slug = slugParam(c);
    assertCan(canAdminWiki(c.user, wiki));
    if (!(await deletePage(changeContext(c, wiki), slug))) throw notFound('Wiki Page');
    return undefined;
  });

  // POST /projects/:id/wikis/attachments (multipart `file`, optional `branch`)
  route(app, 'POST', '/projects/:id/wikis/attachments', async function uploadWikiAttachment(c) {
    const wiki = await readableWiki(c);
    c.params.requireAll(['file']);
    const data = uploadedFile(c.params.raw.file);
    const name = c.req.lwUploadNames?.file;
    if (!data || name === undefined) throw paramError('file is invalid');
    const branch = c.params.string('branch');
    assertCan(canWriteWiki(c.user, wiki));
    try {
      return await uploadAttachment(changeContext(c, wiki), { name, data }, branch);
    } catch (err) {
      if (isGitError(err)) throw apiError(400, 'Could not upload attachment');
      throw err;
    }
  });
}
