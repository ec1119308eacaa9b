// What a pusher may do to protected refs, worked out before git runs and handed to the
// pre-receive hook (src/git/pre-receive-hook.ts), which applies it to the refs the push moves.
import type { AppContext } from '../context.js';
import type { UserRow } from '../db/repositories/users.js';
import type { PushPolicy } from '../git/pre-receive-hook.js';
import { fullPath, type NamespaceRow, type ProjectRow } from '../services/projects/lookup.js';
import { defaultsProtect, loadRefProtection, refActor, ruleAllows } from '../services/repository/protected-refs.js';

export async function pushPolicy(
  app: AppContext,
  base: string,
  target: { project: ProjectRow; namespace: NamespaceRow; access: number; collaboration?: string[] },
  user: UserRow | null,
  refsBefore: Map<string, string>,
): Promise<PushPolicy> {
  const { project, namespace } = target;
  const protection = await loadRefProtection(app, project, namespace);
  const actor = refActor(user, target.access, project.archived);
  const path = fullPath(project, namespace);
  return {
    defaultBranch: project.default_branch,
    empty: ![...refsBefore.keys()].some((ref) => ref.startsWith('refs/heads/')),
    emptyProtected: defaultsProtect(protection.defaults),
    emptyPush: protection.emptyRepoAllows(actor),
    emptyMessage: `\nA default branch (e.g. main) does not yet exist for ${path}\nAsk a project Owner or Maintainer to create a default branch:\n\n  ${base}/${path}/-/project_members\n\n`,
    canDeleteProtected: protection.canDeleteProtectedBranch(actor),
    onlyBranches: target.collaboration ?? null,
    branches: protection.rules
      .filter((r) => r.kind === 'branch')
      .map((r) => ({ p: r.name, push: ruleAllows(r, 'push', actor), merge: ruleAllows(r, 'merge', actor), force: r.allowForcePush })),
    tags: protection.rules.filter((r) => r.kind === 'tag').map((r) => ({ p: r.name, create: ruleAllows(r, 'create', actor) })),
  };
}
