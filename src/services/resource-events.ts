// Resource events (GitLab's ResourceEvents::ChangeLabelsService, ResourceEvents::ChangeStateService
// and ChangeMilestoneService): recorded in the transaction of the change they describe.
import type { Kysely, Transaction } from 'kysely';
import { nowIso } from '../db/database.js';
import type { DB } from '../db/types.js';
import { prepared } from '../db/prepared.js';

type Db = Kysely<DB> | Transaction<DB>;
export type Resource = { type: 'Issue' | 'MergeRequest'; id: number };

function base(r: Resource, userId: number | null, kind: string, now: string) {
  return { kind, resource_type: r.type, resource_id: r.id, user_id: userId, action: null, label_id: null, milestone_id: null, state: null, source_commit: null, source_merge_request_id: null, created_at: now };
}

/** Labels added to a new issue or merge request, compiled once per count (issue 7: on creation). */
const INSERT_LABELS_ADDED = prepared((db, type: string, id: number, userId: number, labelIds: readonly number[], now: string) =>
  db.insertInto('resource_events').values(labelIds.map((labelId) => ({ kind: 'label', resource_type: type, resource_id: id, user_id: userId, action: 'add', label_id: labelId, created_at: now }))),
);

/** One `add` event per label added and one `remove` per label removed (`before` → `after`). */
export async function recordLabelChanges(db: Db, r: Resource, userId: number | null, before: number[], after: number[]): Promise<void> {
  const was = new Set(before);
  const is = new Set(after);
  const now = nowIso();
  if (before.length === 0 && userId !== null && is.size <= 100) {
    if (is.size) await INSERT_LABELS_ADDED(db, r.type, r.id, userId, [...is], now);
    return;
  }
  const rows = [
    ...[...is].filter((id) => !was.has(id)).map((id) => ({ ...base(r, userId, 'label', now), action: 'add', label_id: id })),
    ...[...was].filter((id) => !is.has(id)).map((id) => ({ ...base(r, userId, 'label', now), action: 'remove', label_id: id })),
  ];
  // In chunks: SQLite takes at most 32,766 values in one statement.
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('resource_events').values(rows.slice(i, i + 500)).execute();
}

/** A milestone set, changed (the old one removed, the new one added) or cleared; `state` is the issuable's. */
export async function recordMilestoneChange(db: Db, r: Resource, userId: number | null, before: number | null, after: number | null, state: string): Promise<void> {
  if (before === after) return;
  const now = nowIso();
  const rows = [
    ...(before !== null ? [{ ...base(r, userId, 'milestone', now), action: 'remove', milestone_id: before, state }] : []),
    ...(after !== null ? [{ ...base(r, userId, 'milestone', now), action: 'add', milestone_id: after, state }] : []),
  ];
  await db.insertInto('resource_events').values(rows).execute();
}

/** A state taken: closed, reopened, merged (with what closed it, when a commit or a merge did). */
export async function recordStateChange(db: Db, r: Resource, userId: number | null, state: 'closed' | 'reopened' | 'merged', source: { commit?: string; mergeRequestId?: number } = {}): Promise<void> {
  await db
    .insertInto('resource_events')
    .values({ ...base(r, userId, 'state', nowIso()), state, source_commit: source.commit ?? null, source_merge_request_id: source.mergeRequestId ?? null })
    .execute();
}
