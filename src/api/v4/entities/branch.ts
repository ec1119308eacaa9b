// Branch presenter named after GitLab's Entities::Branch. Field order follows GitLab.
import type { Commit } from '../../../git/index.js';
import { presentCommit } from './commit.js';
import type { RefActor, RefProtection } from '../../../services/repository/protected-refs.js';

export interface BranchPresentCtx {
  projectWebUrl: string;
  defaultBranch: string | null;
  /** Branches whose tip is reachable from the default branch (and are not it). */
  merged: Set<string>;
  protection: RefProtection;
  actor: RefActor;
}

/** `protected` and `developers_can_*` from the project's rules; `can_push` is the caller's UserAccess#can_push_to_branch?. */
export function presentBranch(name: string, commit: Commit, ctx: BranchPresentCtx) {
  return {
    name,
    commit: presentCommit(commit, ctx.projectWebUrl),
    merged: ctx.merged.has(name),
    protected: ctx.protection.isProtectedBranch(name),
    developers_can_push: ctx.protection.developersCan('push', name),
    developers_can_merge: ctx.protection.developersCan('merge', name),
    can_push: ctx.protection.canPushToBranch(ctx.actor, name),
    default: name === ctx.defaultBranch,
    web_url: `${ctx.projectWebUrl}/-/tree/${name}`,
  };
}
