// Namespace presenter (spec document 3 §2.1): NamespaceBasic fields, then the counts, then the
// billing fields only where the spec makes them visible.
import type { Config } from '../../../config.js';
import type { NamespaceRow } from '../../../services/projects/lookup.js';
import type { UserRefRow } from '../../../db/repositories/users.js';
import { avatarUrl } from './user.js';
import { groupAvatarUrl } from './group.js';
import { hosted } from '../../../services/groups/tiers.js';

export interface NamespacePresentCtx {
  base: string;
  config: Config;
  /** The caller administers the instance. */
  isAdmin: boolean;
  /** The caller owns this namespace (Owner of the group, or the user of a personal namespace); not looked up for administrators, who see what owners see. */
  isOwner: boolean;
  owner?: UserRefRow | null;
  counts: { projects: number; rootRepositorySize: number; membersWithDescendants: number; billableMembers: number };
}

export function presentNamespace(ns: NamespaceRow, ctx: NamespacePresentCtx) {
  const isGroup = ns.kind === 'group';
  const out: Record<string, unknown> = {
    id: ns.id,
    name: isGroup ? ns.name : ctx.owner?.name ?? ns.name,
    path: ns.path,
    kind: ns.kind,
    full_path: ns.full_path,
    parent_id: ns.parent_id,
    avatar_url: isGroup ? groupAvatarUrl(ctx.base, ns) : ctx.owner ? avatarUrl(ctx.base, ctx.owner) : null,
    web_url: isGroup ? `${ctx.base}/groups/${ns.full_path}` : `${ctx.base}/${ns.full_path}`,
  };
  const billing = ctx.isAdmin || ctx.isOwner;
  if (billing) {
    out.billable_members_count = ctx.counts.billableMembers;
    out.plan = ctx.config.plan;
    out.end_date = null;
    out.trial_ends_on = null;
    out.trial = false;
  }
  out.root_repository_size = ctx.counts.rootRepositorySize;
  out.projects_count = ctx.counts.projects;
  if (isGroup && billing) out.members_count_with_descendants = ctx.counts.membersWithDescendants;
  if (isGroup && billing) {
    out.max_seats_used = ctx.counts.billableMembers;
    out.max_seats_used_changed_at = null;
    out.seats_in_use = ctx.counts.billableMembers;
  }
  // Compute quotas are never configured on self-managed here, so usage shows on hosted only.
  if (isGroup && ns.parent_id === null && billing && hosted(ctx.config)) {
    out.ci_minutes_usage = { total_minutes_used: 0, monthly_minutes_used: 0, purchased_minutes_used: 0 };
  }
  if (ctx.isAdmin && hosted(ctx.config)) {
    out.shared_runners_minutes_limit = null;
    out.extra_shared_runners_minutes_limit = null;
    out.additional_purchased_storage_size = 0;
    out.additional_purchased_storage_ends_on = null;
  }
  return out;
}
