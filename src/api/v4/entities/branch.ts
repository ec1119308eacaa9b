// Branch presenter named after GitLab's Entities::Branch. Field order follows GitLab.
import type { Commit } from '../../../git/index.js';
import { presentCommit } from './commit.js';

export interface BranchPresentCtx {
  projectWebUrl: string;
  defaultBranch: string | null;
  /** Branches whose tip is reachable from the default branch (and are not it). */
  merged: Set<string>;
  /** Whether the caller may push to the project (Developer and above, not archived). */
  canPush: boolean;
}

/**
 * GITLAB-COMPAT: Labwright has no protected branches yet (listed as left in docs/compatibility.md), so `protected`,
 * `developers_can_push` and `developers_can_merge` are false for every branch (GitLab shows them
 * false too for unprotected branches), and `can_push` is the project-wide push permission.
 */
export function presentBranch(name: string, commit: Commit, ctx: BranchPresentCtx) {
  return {
    name,
    commit: presentCommit(commit, ctx.projectWebUrl),
    merged: ctx.merged.has(name),
    protected: false,
    developers_can_push: false,
    developers_can_merge: false,
    can_push: ctx.canPush,
    default: name === ctx.defaultBranch,
    web_url: `${ctx.projectWebUrl}/-/tree/${name}`,
  };
}
