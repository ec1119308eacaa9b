// Release presenters named after GitLab's Entities::Release, Entities::Releases::Link and
// Entities::Releases::Source. Field order follows GitLab.
import type { Commit } from '../../../git/index.js';
import type { UserRefRow } from '../../../db/repositories/users.js';
import { releaseSources, SOURCE_FORMATS, type ReleaseLinkRow, type ReleaseRow } from '../../../services/releases.js';
import { renderMarkdown } from '../../../services/merge-requests/markdown.js';
import { noteTimeFlip } from '../../../http/kept-response.js';
import { presentCommit } from './commit.js';
import { presentUserBasic } from './user.js';

export interface ReleasePresentCtx {
  base: string;
  /** The project's web URL and path (`group/project`, and `project`, its last segment). */
  webUrl: string;
  fullPath: string;
  projectPath: string;
  /** download_code: tag names, commits and source archives are shown only to callers who may read the code. */
  canDownload: boolean;
  canUpdate: boolean;
  includeHtml: boolean;
  users: Map<number, UserRefRow>;
  commits: Map<string, Commit>;
  links: Map<number, ReleaseLinkRow[]>;
  /** Presented milestones (with issue_stats) by release id. */
  milestones: Map<number, Array<Record<string, unknown>>>;
}

function releaseUrl(ctx: Pick<ReleasePresentCtx, 'webUrl'>, tag: string): string {
  return `${ctx.webUrl}/-/releases/${encodeURIComponent(tag)}`;
}

export function presentLink(l: ReleaseLinkRow, release: Pick<ReleaseRow, 'tag'>, ctx: Pick<ReleasePresentCtx, 'webUrl'>) {
  return {
    id: l.id,
    name: l.name,
    url: l.url,
    // A link with a direct asset path is reached through the release's downloads path.
    direct_asset_url: l.filepath ? `${releaseUrl(ctx, release.tag)}/downloads${l.filepath}` : l.url,
    link_type: l.link_type,
  };
}

/**
 * GitLab 18's Entities::Release: name and tag for everyone who reads releases; the commit, its and
 * the tag's paths, source archives and evidences only for callers who may read the code.
 * GITLAB-COMPAT: no evidences are collected (`evidences` is empty); `_links` has no issue or merge
 * request list URLs.
 */
export function presentRelease(r: ReleaseRow, ctx: ReleasePresentCtx): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: r.name ?? r.tag,
    tag_name: r.tag,
    description: r.description,
    created_at: r.created_at,
    released_at: r.released_at,
  };
  const releasedAt = Date.parse(r.released_at);
  const upcoming = releasedAt > Date.now();
  // A kept response that says "upcoming" must end when the release time passes.
  if (upcoming) noteTimeFlip(releasedAt);
  out.upcoming_release = upcoming;
  if (ctx.includeHtml) out.description_html = renderMarkdown(r.description ?? '');
  const author = r.author_id === null ? undefined : ctx.users.get(r.author_id);
  if (author) out.author = presentUserBasic(author, { base: ctx.base });
  const commit = r.sha ? (ctx.commits.get(r.sha) ?? null) : null;
  if (ctx.canDownload) out.commit = commit ? presentCommit(commit, ctx.webUrl) : null;
  const milestones = ctx.milestones.get(r.id) ?? [];
  if (milestones.length) out.milestones = milestones;
  if (ctx.canDownload && commit) out.commit_path = `/${ctx.fullPath}/-/commit/${commit.id}`;
  if (ctx.canDownload) out.tag_path = `/${ctx.fullPath}/-/tags/${encodeURIComponent(r.tag)}`;
  const links = (ctx.links.get(r.id) ?? []).map((l) => presentLink(l, r, ctx));
  const assets: Record<string, unknown> = { count: links.length + (ctx.canDownload ? SOURCE_FORMATS.length : 0) };
  if (ctx.canDownload) {
    assets.sources = releaseSources(ctx.webUrl, ctx.projectPath, r.tag);
  }
  assets.links = links;
  out.assets = assets;
  if (ctx.canDownload) out.evidences = [];
  const self = releaseUrl(ctx, r.tag);
  out._links = ctx.canUpdate ? { edit_url: `${self}/edit`, self } : { self };
  return out;
}
