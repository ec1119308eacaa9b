// Push and tag push events: every ref change, whatever moved it (git push, the files and commits
// APIs, branch and tag creation and deletion, merges), reaches the project's hooks through the ref
// change listeners (repository/ref-hooks.ts).
import type { AppContext } from '../../context.js';
import { instanceBase } from '../../context.js';
import { findUserRefsByIds } from '../../db/repositories/users.js';
import type { RefChange } from '../../git/index.js';
import { refMatcher } from '../../git/ref-matcher.js';
import { emitEvent, eventsWanted } from '../events.js';
import { refreshMergeStatus, repoFor } from '../merge-requests/git-ops.js';
import { loadProjectById } from '../projects/lookup.js';
import { loadRefProtection } from '../repository/protected-refs.js';
import { refChangeListeners } from '../repository/ref-hooks.js';
import { regexFilterMatches } from './branch-regex.js';
import { triggerHooks } from './dispatch.js';
import { projectHooks, type HookRow } from './hooks.js';
import { pushPayload, type PushContext } from './payloads.js';

/** GitLab's push_event_hooks_limit: more refs of one kind moved the same way in one push send no push events. */
const PUSH_EVENT_HOOKS_LIMIT = 3;

/** GitLab's ActiveHookFilter: whether a hook takes a push to `branch`. */
function branchFilterAccepts(row: Pick<HookRow, 'push_events_branch_filter' | 'branch_filter_strategy'>, branch: string): boolean {
  const filter = row.push_events_branch_filter;
  if (!filter || row.branch_filter_strategy === 'all_branches') return true;
  if (row.branch_filter_strategy === 'regex') return regexFilterMatches(filter, branch);
  return refMatcher(filter)(branch);
}

async function pushHooks(app: AppContext, projectId: number, changes: RefChange[], userId: number | null): Promise<void> {
  // GitLab's ProcessRefChangesService counts branches and tags, created, removed and updated,
  // each apart: a group larger than the limit sends nothing, the others still do.
  const groups = new Map<string, RefChange[]>();
  for (const c of changes) {
    const type = c.ref.startsWith('refs/heads/') ? 'branch' : c.ref.startsWith('refs/tags/') ? 'tag' : null;
    if (!type) continue;
    const key = `${type}:${c.before === null ? 'created' : c.after === null ? 'removed' : 'pushed'}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const refs = [...groups.values()].filter((g) => g.length <= PUSH_EVENT_HOOKS_LIMIT).flat();
  if (refs.length === 0) return;
  // Most projects have no hooks: this is all a push costs them.
  if ((await projectHooks(app, projectId)).length === 0) return;
  let ctx: Promise<PushContext | null> | null = null;
  const context = () =>
    (ctx ??= (async () => {
      const project = await loadProjectById(app.db, projectId);
      if (!project) return null;
      const users = userId === null ? new Map() : await findUserRefsByIds(app.db, [userId]);
      return {
        base: instanceBase(app),
        project,
        repo: repoFor(app, projectId),
        user: userId === null ? null : (users.get(userId) ?? null),
        protection: await loadRefProtection(app, project.project, project.namespace),
      };
    })());
  for (const change of refs) {
    const tag = change.ref.startsWith('refs/tags/');
    const branch = change.ref.slice('refs/heads/'.length);
    await triggerHooks(app, projectId, {
      scope: tag ? 'tag_push_hooks' : 'push_hooks',
      ...(tag ? {} : { accept: (row: HookRow) => branchFilterAccepts(row, branch) }),
      payload: async () => {
        const c = await context();
        return c ? pushPayload(c, change) : null;
      },
    });
  }
}

/**
 * A push to the source branch of open merge requests updates them: GitLab's RefreshService sends
 * each an `update` event with `oldrev` (none for a branch made anew), whatever the push limit.
 */
async function sourceBranchPushes(app: AppContext, projectId: number, changes: RefChange[], userId: number | null): Promise<void> {
  if (userId === null) return;
  const moved = changes.filter((c) => c.ref.startsWith('refs/heads/') && c.after !== null);
  if (moved.length === 0) return;
  // Merge requests from this project into others (a fork's) are the other projects' to announce.
  const here = await eventsWanted(app, projectId, 'merge_request');
  const before = new Map(moved.map((c) => [c.ref.slice('refs/heads/'.length), c.before]));
  let q = app.db
    .selectFrom('merge_requests')
    .selectAll()
    .where('source_project_id', '=', projectId)
    .where('state', '=', 'opened')
    .where('source_branch', 'in', [...before.keys()]);
  if (!here) q = q.where('project_id', '!=', projectId);
  const open = await q.orderBy('id').execute();
  for (const row of open) {
    if (row.project_id !== projectId && !(await eventsWanted(app, row.project_id, 'merge_request'))) continue;
    // The merge request as the push left it (head, merge status), then the event.
    const mr = await refreshMergeStatus(app, row);
    const oldrev = before.get(row.source_branch);
    await emitEvent(app, { kind: 'merge_request', projectId: row.project_id, mr, userId, action: 'update', ...(oldrev ? { oldrev } : {}) });
  }
}

let registered = false;

export function registerPushEvents(): void {
  if (registered) return;
  registered = true;
  refChangeListeners.push(pushHooks, sourceBranchPushes);
}
