// Tag presenter named after GitLab's Entities::Tag. Field order follows GitLab.
import type { Commit, Tag } from '../../../git/index.js';
import { gitlabTime, presentCommit } from './commit.js';

/**
 * `protected`: a protected tag rule covers the name. `release` is the tag's release (GitLab's
 * Entities::TagRelease: its tag name and description) or null. `commit` is null for a tag of a
 * tree or a blob.
 */
export function presentTag(tag: Tag, commit: Commit | null, projectWebUrl: string, release: { tag: string; description: string | null } | null | undefined, isProtected: boolean) {
  return {
    name: tag.name,
    // The annotation as written, without the line break git ends it with.
    message: tag.message === null ? null : tag.message.replace(/\n$/, ''),
    target: tag.sha,
    commit: commit ? presentCommit(commit, projectWebUrl) : null,
    release: release ? { tag_name: release.tag, description: release.description } : null,
    protected: isProtected,
    created_at: tag.createdAt ? gitlabTime(tag.createdAt) : null,
  };
}
