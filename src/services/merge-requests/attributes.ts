// Labels, milestones, assignees and reviewers as merge requests set them: labels are created on the
// fly as project labels; milestones resolve in the project and its ancestor groups.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.js';
import { nowIso } from '../../db/database.js';
import { prepared } from '../../db/prepared.js';
import { notFound } from '../../http/errors.js';
import { ancestorIds } from '../access.js';
import type { LabelRow, MilestoneRow, ProjectInfo } from './rows.js';

export const DEFAULT_LABEL_COLOR = '#6699cc';

/** Values per statement when looking many up (SQLite and PostgreSQL bound a statement's parameters). */
const CHUNK = 500;

type Db = Kysely<DB> | Transaction<DB>;

/** Group ids whose labels and milestones a project sees (its namespace and ancestors, groups only). */
export function groupScopeIds(info: ProjectInfo): number[] {
  return info.namespace.kind === 'group' ? ancestorIds(info.namespace) : [];
}

/** The most label titles one parameter may name (more is a 400: every title is looked up, and may be created). */
export const MAX_LABELS = 1000;

/** Splits a comma list into trimmed, unique, non-empty titles. */
export function splitLabels(raw: string[] | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const out: string[] = [];
  for (const part of raw.flatMap((s) => s.split(','))) {
    const t = part.trim();
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

/** Labels visible in the project with these titles (exact match); missing ones when `create`. */
export async function resolveLabels(db: Db, info: ProjectInfo, titles: string[], create: boolean): Promise<LabelRow[]> {
  if (!titles.length) return [];
  const groups = groupScopeIds(info);
  // In chunks: a statement takes a bounded number of parameters.
  const existing: LabelRow[] = [];
  for (let i = 0; i < titles.length; i += CHUNK) {
    const chunk = titles.slice(i, i + CHUNK);
    existing.push(...(groups.length ? await labelsInScope(db, chunk, info.project.id, groups) : await projectLabelsTitled(db, chunk, info.project.id)));
  }
  existing.sort((a, b) => a.id - b.id);
  const byTitle = new Map<string, LabelRow>();
  // Project labels win over group labels of the same title.
  for (const l of existing) if (!byTitle.has(l.title) || l.project_id !== null) byTitle.set(l.title, l);
  const out: LabelRow[] = [];
  for (const title of titles) {
    let label = byTitle.get(title);
    if (!label && create) {
      const now = nowIso();
      const row = { project_id: info.project.id, group_id: null, title, title_lower: title.toLowerCase(), color: DEFAULT_LABEL_COLOR, description: null, priority: null, archived: 0, created_at: now, updated_at: now };
      const ins = await db.insertInto('labels').values(row).returning('id').executeTakeFirstOrThrow();
      label = Object.assign({}, row, { id: ins.id });
      byTitle.set(title, label);
    }
    if (label) out.push(label);
  }
  return out;
}

/**
 * setLabels, setAssignees and setReviewers replace a merge request's list. `created`: the merge
 * request was inserted in this transaction, so there is nothing to delete (ids are never reused);
 * skipping the delete shortens the creation's hold on the project row.
 */
export async function setLabels(db: Db, mrId: number, labelIds: number[], created = false): Promise<void> {
  if (!created) await db.deleteFrom('merge_request_labels').where('merge_request_id', '=', mrId).execute();
  const unique = [...new Set(labelIds)];
  if (unique.length) await insertLabelLinks(db, mrId, unique);
}

// Compiled once per length of their lists (db/prepared.ts): merge request creation runs them.
const projectLabelsTitled = prepared((db, titles: readonly string[], projectId: number) =>
  db.selectFrom('labels').selectAll().where('title', 'in', titles).where('project_id', '=', projectId),
);
const labelsInScope = prepared((db, titles: readonly string[], projectId: number, groupIds: readonly number[]) =>
  db
    .selectFrom('labels')
    .selectAll()
    .where('title', 'in', titles)
    .where((eb) => eb.or([eb('project_id', '=', projectId), eb('group_id', 'in', groupIds)])),
);
const insertLabelLinks = prepared((db, mrId: number, labelIds: readonly number[]) =>
  db.insertInto('merge_request_labels').values(labelIds.map((label_id) => ({ merge_request_id: mrId, label_id }))),
);

export async function currentLabelIds(db: Db, mrId: number): Promise<number[]> {
  const rows = await db.selectFrom('merge_request_labels').select('label_id').where('merge_request_id', '=', mrId).execute();
  return rows.map((r) => r.label_id);
}

/** A milestone by title in the project or its ancestor groups: exact, case-sensitive (404 otherwise). */
export async function milestoneByTitle(db: Db, info: ProjectInfo, title: string): Promise<MilestoneRow> {
  const groups = groupScopeIds(info);
  const row = await db
    .selectFrom('milestones')
    .selectAll()
    .where('title', '=', title)
    .where((eb) => eb.or([eb('project_id', '=', info.project.id), ...(groups.length ? [eb('group_id', 'in', groups)] : [])]))
    .orderBy('id')
    .executeTakeFirst();
  if (!row) throw notFound('Milestone');
  return row;
}

/** A milestone by global id, only when it belongs to the project or an ancestor group; else null. */
export async function milestoneById(db: Db, info: ProjectInfo, id: number): Promise<MilestoneRow | null> {
  const row = await db.selectFrom('milestones').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return null;
  if (row.project_id === info.project.id) return row;
  if (row.group_id !== null && groupScopeIds(info).includes(row.group_id)) return row;
  return null;
}

/** Existing users among the ids (unknown ids are dropped, as GitLab drops users it cannot assign). */
export async function existingUserIds(db: Db, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids.filter((id) => id > 0 && id <= 2_147_483_647))];
  if (!unique.length) return [];
  const found = new Set<number>();
  for (let i = 0; i < unique.length; i += CHUNK) {
    for (const r of await db.selectFrom('users').select('id').where('id', 'in', unique.slice(i, i + CHUNK)).execute()) found.add(r.id);
  }
  return unique.filter((id) => found.has(id));
}

export async function setAssignees(db: Db, mrId: number, userIds: number[], created = false): Promise<void> {
  if (!created) await db.deleteFrom('merge_request_assignees').where('merge_request_id', '=', mrId).execute();
  if (userIds.length) {
    await db.insertInto('merge_request_assignees').values(userIds.map((user_id, position) => ({ merge_request_id: mrId, user_id, position }))).execute();
  }
}

export async function setReviewers(db: Db, mrId: number, userIds: number[], created = false): Promise<void> {
  const now = nowIso();
  if (!created) await db.deleteFrom('merge_request_reviewers').where('merge_request_id', '=', mrId).execute();
  if (userIds.length) {
    await db.insertInto('merge_request_reviewers').values(userIds.map((user_id) => ({ merge_request_id: mrId, user_id, state: 'unreviewed', created_at: now }))).execute();
  }
}
