// Project and group labels (GitLab's labels API). Merge requests also create project labels on the fly.
import type { FastifyInstance } from 'fastify';
import type { Selectable } from 'kysely';
import type { Ctx } from '../../../http/route.js';
import { route } from '../../../http/route.js';
import { conflict, forbidden, missingAttributes, notFound, paramError, validationError } from '../../../http/errors.js';
import { resolveId } from '../../../http/ids.js';
import { paginateOffset } from '../../../http/pagination.js';
import { nowIso } from '../../../db/database.js';
import type { LabelsTable } from '../../../db/tables/merge-requests.js';
import { AccessLevel, ancestorIds, namespaceAccess, visibleWithoutMembership } from '../../../services/access.js';
import { findProject } from '../../../services/projects/lookup.js';
import { pathId } from '../../../services/merge-requests/rows.js';
import { textColor } from '../entities/merge-request.js';
import { renderMarkdown } from '../../../services/merge-requests/markdown.js';
import { containsCi } from '../../../db/sql-helpers.js';
import { lockOwnerRow } from '../../../services/owner-lock.js';

/** Whose labels: a project or a group, the caller's access, and the groups above it whose labels it sees (itself included for a group). */
type Owner = { kind: 'project'; id: number; access: number; ancestors: number[] } | { kind: 'group'; id: number; access: number; ancestors: number[] };

const NAMED_COLORS: Record<string, string> = { red: '#FF0000', green: '#008000', blue: '#0000FF', black: '#000000', white: '#FFFFFF', yellow: '#FFFF00', orange: '#FFA500', purple: '#800080', gray: '#808080', grey: '#808080' };

function parseColor(raw: string): string {
  const v = raw.trim();
  if (/^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(v)) return v;
  const named = NAMED_COLORS[v.toLowerCase()];
  if (named) return named;
  throw validationError({ color: ['must be a valid color code'] });
}

function presentLabel(l: Selectable<LabelsTable>) {
  return {
    id: l.id,
    name: l.title,
    description: l.description,
    description_html: l.description ? renderMarkdown(l.description) : '',
    text_color: textColor(l.color),
    color: l.color,
    archived: l.archived === 1,
    subscribed: false,
    priority: l.priority,
    is_project_label: l.project_id !== null,
  };
}

async function projectOwner(c: Ctx): Promise<Owner> {
  const found = await findProject(c, String(c.params.raw.id));
  return { kind: 'project', id: found.project.id, access: found.access, ancestors: found.namespace.kind === 'group' ? ancestorIds(found.namespace) : [] };
}

async function groupOwner(c: Ctx): Promise<Owner> {
  const id = await resolveId(c, 'Namespace', String(c.params.raw.id), { allowTopLevelPath: true });
  const ns = id === null ? undefined : await c.app.db.selectFrom('namespaces').selectAll().where('id', '=', id).where('kind', '=', 'group').executeTakeFirst();
  if (!ns) throw notFound('Group');
  const access = c.user?.is_admin ? AccessLevel.OWNER : await namespaceAccess(c.app.db, c.user, ns);
  if (!c.user?.is_admin && !visibleWithoutMembership(ns.visibility, c.user) && access < AccessLevel.GUEST) throw notFound('Group');
  return { kind: 'group', id: ns.id, access, ancestors: ancestorIds(ns) };
}

/**
 * The owner's labels; with `ancestors` (GitLab's include_ancestor_groups, its default on reads)
 * also those of the groups above it, as LabelsFinder's available labels.
 */
function scoped(c: Ctx, owner: Owner, opts: { ancestors?: boolean } = {}) {
  const q = c.app.db.selectFrom('labels').selectAll();
  const groups = opts.ancestors ? owner.ancestors.filter((id) => owner.kind === 'project' || id !== owner.id) : [];
  if (owner.kind === 'project') {
    return q.where((eb) => eb.or([eb('project_id', '=', owner.id), ...(groups.length ? [eb('group_id', 'in', groups)] : [])]));
  }
  return q.where('group_id', 'in', [owner.id, ...groups]);
}

/** A label by id or title: reads see the groups' labels above too, writes only the owner's own (GitLab's find_label). */
async function findLabel(c: Ctx, owner: Owner, opts: { ancestors?: boolean } = {}) {
  const raw = String(c.params.raw.label_id ?? '');
  let q = scoped(c, owner, opts);
  q = /^\d+$/.test(raw) ? q.where('id', '=', pathId(raw)) : q.where('title', '=', raw);
  const label = await q.executeTakeFirst();
  if (!label) throw notFound('Label');
  return label;
}

function requireWrite(c: Ctx, owner: Owner): void {
  c.requireUser();
  if (owner.access < AccessLevel.REPORTER) throw forbidden();
}

function register(app: FastifyInstance, prefix: string, ownerOf: (c: Ctx) => Promise<Owner>): void {
  // GET /projects/:id/labels, GET /groups/:id/labels
  route(app, 'GET', `${prefix}/labels`, async function listLabels(c) {
    const owner = await ownerOf(c);
    let q = scoped(c, owner, { ancestors: c.params.bool('include_ancestor_groups') ?? true });
    const search = c.params.string('search');
    if (search) q = q.where(containsCi('title_lower', search));
    const rows = await paginateOffset(c, q.orderBy('title').orderBy('id'));
    return rows.map(presentLabel);
  });

  // GET /projects/:id/labels/:label_id
  route(app, 'GET', `${prefix}/labels/:label_id`, async function getLabel(c) {
    return presentLabel(await findLabel(c, await ownerOf(c), { ancestors: c.params.bool('include_ancestor_groups') ?? true }));
  });

  // POST /projects/:id/labels
  route(app, 'POST', `${prefix}/labels`, async function createLabel(c) {
    const owner = await ownerOf(c);
    requireWrite(c, owner);
    const missing = ['name', 'color'].filter((n) => !c.params.has(n));
    if (missing.length) throw missingAttributes(missing);
    const name = c.params.string('name', { allowBlank: false })!.trim();
    const color = parseColor(c.params.string('color', { allowBlank: false })!);
    if (name.length > 255) throw validationError({ title: ['is too long (maximum is 255 characters)'] });
    const now = nowIso();
    const row = {
      project_id: owner.kind === 'project' ? owner.id : null,
      group_id: owner.kind === 'group' ? owner.id : null,
      title: name,
      title_lower: name.toLowerCase(),
      color,
      description: c.params.string('description') ?? null,
      priority: owner.kind === 'project' ? (c.params.int('priority', { min: 0, max: 2_147_483_647 }) ?? null) : null,
      archived: 0,
      created_at: now,
      updated_at: now,
    };
    const id = await c.app.database.transaction(async (trx) => {
      // The owner's row is locked first, so that two creations of one title cannot both pass the check (PostgreSQL).
      await lockOwnerRow(c.app, trx, owner.kind === 'project' ? 'projects' : 'namespaces', owner.id);
      const col = owner.kind === 'project' ? 'project_id' : 'group_id';
      const dup = await trx.selectFrom('labels').select('id').where(col, '=', owner.id).where('title', '=', name).executeTakeFirst();
      if (dup) throw conflict('Label already exists');
      return (await trx.insertInto('labels').values(row).returning('id').executeTakeFirstOrThrow()).id;
    });
    return presentLabel(Object.assign({}, row, { id }));
  });

  // PUT /projects/:id/labels/:label_id
  route(app, 'PUT', `${prefix}/labels/:label_id`, async function updateLabel(c) {
    const owner = await ownerOf(c);
    requireWrite(c, owner);
    const label = await findLabel(c, owner);
    c.params.requireAtLeastOne(['new_name', 'color', 'description', 'priority', 'archived']);
    const set: Partial<Selectable<LabelsTable>> = { updated_at: nowIso() };
    const newName = c.params.string('new_name', { allowBlank: false });
    if (newName !== undefined) Object.assign(set, { title: newName.trim(), title_lower: newName.trim().toLowerCase() });
    const color = c.params.string('color');
    if (color !== undefined) set.color = parseColor(color);
    if (c.params.has('description')) set.description = c.params.nullableString('description') ?? null;
    if (c.params.has('priority')) set.priority = c.params.raw.priority === null || c.params.raw.priority === '' ? null : c.params.int('priority', { min: 0, max: 2_147_483_647 })!;
    const archived = c.params.bool('archived');
    if (archived !== undefined) set.archived = archived ? 1 : 0;
    await c.app.database.transaction(async (trx) => {
      // GitLab's label validation: a title is unique within its project or group.
      if (set.title !== undefined && set.title !== label.title) {
        await lockOwnerRow(c.app, trx, owner.kind === 'project' ? 'projects' : 'namespaces', owner.id);
        const col = owner.kind === 'project' ? 'project_id' : 'group_id';
        const dup = await trx.selectFrom('labels').select('id').where(col, '=', owner.id).where('title', '=', set.title).where('id', '!=', label.id).executeTakeFirst();
        if (dup) throw validationError({ title: ['has already been taken'] });
      }
      await trx.updateTable('labels').set(set).where('id', '=', label.id).execute();
    });
    return presentLabel(Object.assign({}, label, { ...set }));
  });

  // DELETE /projects/:id/labels/:label_id
  route(app, 'DELETE', `${prefix}/labels/:label_id`, async function deleteLabel(c) {
    const owner = await ownerOf(c);
    requireWrite(c, owner);
    const label = await findLabel(c, owner);
    await c.app.database.transaction(async (trx) => {
      await trx.deleteFrom('merge_request_labels').where('label_id', '=', label.id).execute();
      await trx.deleteFrom('issue_labels').where('label_id', '=', label.id).execute();
      await trx.deleteFrom('labels').where('id', '=', label.id).execute();
    });
    return undefined;
  });
}

export function registerLabelRoutes(app: FastifyInstance): void {
  register(app, '/projects/:id', projectOwner);
  register(app, '/groups/:id', groupOwner);
}
