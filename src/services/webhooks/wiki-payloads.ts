// The Wiki Page Hook payload (GitLab's Gitlab::DataBuilder::WikiPage).
import type { UserRefRow } from '../../db/repositories/users.js';
import { projectHookAttrs, userHookAttrs, type HookProject } from './payloads.js';

export interface WikiHookPage {
  title: string;
  slug: string;
  format: string;
}

export function wikiPagePayload(p: {
  base: string;
  project: HookProject;
  user: UserRefRow;
  page: WikiHookPage;
  content: string;
  action: 'create' | 'update' | 'delete';
  message: string;
  sha: string;
  defaultBranch: string;
}): Record<string, unknown> {
  const project = projectHookAttrs(p.base, p.project);
  const web = `${project.web_url}/-/wikis`;
  const url = `${web}/${p.page.slug}`;
  return {
    object_kind: 'wiki_page',
    user: userHookAttrs(p.base, p.user),
    project,
    wiki: {
      web_url: web,
      git_ssh_url: project.git_ssh_url.replace(/\.git$/, '.wiki.git'),
      git_http_url: project.git_http_url.replace(/\.git$/, '.wiki.git'),
      path_with_namespace: `${project.path_with_namespace}.wiki`,
      default_branch: p.defaultBranch,
    },
    object_attributes: {
      title: p.page.title,
      content: p.content,
      format: p.page.format,
      message: p.message,
      slug: p.page.slug,
      url,
      action: p.action,
      diff_url: `${url}/diff?version_id=${p.sha}`,
      version_id: p.sha,
    },
  };
}
