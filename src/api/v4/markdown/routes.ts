// POST /markdown (GitLab's lib/api/markdown.rb): Markdown rendered as HTML, in a project's context
// when `project` names one the caller may read; signed-in callers only, as GitLab. GITLAB-COMPAT: the small renderer of
// `description_html` (paragraphs, line breaks, emphasis, code, http(s) links), not GitLab Flavored
// Markdown; references are not linked.
import type { FastifyInstance } from 'fastify';
import { paramError } from '../../../http/errors.js';
import { route } from '../../../http/route.js';
import { renderMarkdown } from '../../../services/merge-requests/markdown.js';
import { findProject } from '../../../services/projects/lookup.js';

/** Rendering more than this is refused (the rendering runs on the request's thread). */
const MAX_TEXT = 256 * 1024;

export function registerMarkdownRoutes(app: FastifyInstance): void {
  route(app, 'POST', '/markdown', async function renderText(c) {
    // GitLab's authenticate_markdown_api: signed-in callers only.
    c.requireUser();
    c.params.requireAll(['text']);
    const text = c.params.string('text')!;
    c.params.bool('gfm');
    const project = c.params.string('project');
    if (project !== undefined) await findProject(c, project);
    if (text.length > MAX_TEXT) throw paramError(`text is too long (maximum is ${MAX_TEXT} characters)`);
    return { html: renderMarkdown(text) };
  });
}
