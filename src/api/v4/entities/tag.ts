// Tag presenter named after GitLab's Entities::Tag. Field order follows GitLab.
import type { Commit, Tag } from '../../../git/index.js';
import { gitlabTime, presentCommit } from './commit.js';

/**
 * GITLAB-COMPAT: Labwright has no releases and no protected tags, so `release` is null and
 * `protected` false for every tag (as GitLab shows them for a tag without either). `commit` is
 * null for a tag of a tree or a blob.
 */
export function presentTag(tag: Tag, commit: Commit | null, projectWebUrl: string) {
  return {
    name: tag.name,
    // The annotation as written, without the line break git ends it with.
    message: tag.message === null ? null : tag.message.replace(/\n$/, ''),
    target: tag.sha,
    commit: commit ? presentCommit(commit, projectWebUrl) : null,
    release: null,
    protected: false,
    created_at: tag.createdAt ? gitlabTime(tag.createdAt) : null,
  };
}
