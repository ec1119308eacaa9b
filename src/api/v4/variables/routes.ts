// CI/CD variables (GitLab's lib/api/ci/variables.rb, lib/api/group_variables.rb and
// lib/api/admin/ci/variables.rb): project variables for Maintainers, group variables for Owners,
// instance variables for administrators. Labwright runs no jobs: the variables are kept (values
// encrypted) and served to the tools that manage them.
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import { AccessLevel, ancestorIds } from '../../../services/access.js';
import {
  createVariable,
  deleteOwnerVariables,
  deleteVariable,
  findVariable,
  notFoundName,
  updateVariable,
  VARIABLE_TYPES,
  variablesByKey,
  variablesOf,
  variableValue,
  type VariableInput,
  type VariableOwner,
  type VariableRow,
} from '../../../services/ci-variables/variables.js';
import { findGroup } from '../../../services/groups/lookup.js';
import { tierAvailable } from '../../../services/groups/tiers.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { findProject } from '../../../services/projects/lookup.js';
import { pathParam } from '../repository/common.js';

/** Entities::Ci::Variable in GitLab's order; instance variables have no `hidden` nor `environment_scope`. */
export function presentVariable(c: Ctx, row: VariableRow) {
  const instance = row.source_type === 'Instance';
  return {
    variable_type: row.variable_type,
    key: row.key,
    // A hidden variable's value is never shown again (Ci::VariableValue).
    value: row.hidden === 1 ? null : variableValue(c.app, row),
    ...(instance ? {} : { hidden: row.hidden === 1 }),
    protected: row.protected === 1,
    masked: row.masked === 1,
    raw: row.raw === 1,
    ...(instance ? {} : { environment_scope: row.environment_scope }),
    description: row.description,
  };
}

/**
 * admin_cicd_variables on a project: Maintainers and administrators, unless CI/CD or the repository
 * is turned off (GitLab's project policy then takes it from everyone).
 */
async function projectOwner(c: Ctx): Promise<VariableOwner> {
  c.requireUser();
  const found = await findProject(c, pathParam(c, 'id'));
  if (found.access < AccessLevel.MAINTAINER && !c.user!.is_admin) throw forbidden();
  if (found.project.builds_access_level === 'disabled' || found.project.repository_access_level === 'disabled') throw forbidden();
  return { kind: 'Project', id: found.project.id };
}

/** admin_cicd_variables on a group: Owners and administrators, not while the group or an ancestor is archived. */
async function groupOwner(c: Ctx): Promise<VariableOwner> {
  c.requireUser();
  const found = await findGroup(c, pathParam(c, 'id'), { minAccess: AccessLevel.OWNER });
  if (await groupArchived(c.app.db, found.group)) throw forbidden();
  return { kind: 'Namespace', id: found.group.id };
}

async function instanceOwner(c: Ctx): Promise<VariableOwner> {
  c.requireAdmin();
  return { kind: 'Instance', id: 0 };
}

/** `filter[environment_scope]`: a non-blank scope, or undefined (a blank one is ignored, as Ci::VariablesFinder). */
function scopeFilter(c: Ctx): string | undefined {
  const filter = c.params.hash('filter');
  if (!filter) return undefined;
  const scope = filter.environment_scope;
  if (scope === undefined || scope === null) return undefined;
  if (typeof scope !== 'string' && typeof scope !== 'number') throw paramError('filter[environment_scope] is invalid');
  const s = String(scope);
  return s.trim() === '' ? undefined : s;
}

/** The attributes of a create or update as Grape declares and coerces them. */
function readInput(c: Ctx, owner: VariableOwner, creating: boolean): VariableInput {
  if (creating) {
    c.params.requireAll(['key', 'value']);
  }
  const input: VariableInput = {
    key: c.params.string('key'),
    value: c.params.string('value'),
    variable_type: c.params.enum('variable_type', VARIABLE_TYPES),
    protected: c.params.bool('protected'),
    masked: c.params.bool('masked'),
    raw: c.params.bool('raw'),
    description: c.params.has('description') ? (c.params.nullableString('description') ?? null) : undefined,
  };
  if (owner.kind !== 'Instance') {
    const scope = c.params.string('environment_scope');
    // Scoped group variables are a Premium feature: GitLab drops the scope silently without it.
    if (owner.kind === 'Project' || tierAvailable(c.app.config, 'PU')) input.environment_scope = scope;
    // masked_and_hidden exists on creation only; updates ignore it (Grape does not declare it there).
    if (creating && c.params.bool('masked_and_hidden')) {
      input.masked = true;
      input.hidden = true;
    }
  }
  return input;
}

/** Whether the group or one of its ancestors is archived (GitLab 18 refuses variable changes in archived groups). */
async function groupArchived(db: Kysely<DB>, group: { id: number; traversal: string }): Promise<boolean> {
  const row = await db
    .selectFrom('group_settings')
    .select('namespace_id')
    .where('namespace_id', 'in', ancestorIds(group))
    .where('archived', '=', 1)
    .executeTakeFirst();
  return row !== undefined;
}

/** `:key`, without the `.json` format suffix Grape strips (keys never contain dots). */
function keyParam(c: Ctx): string {
  const key = pathParam(c, 'key');
  return key.endsWith('.json') ? key.slice(0, -'.json'.length) : key;
}

function notFound(owner: VariableOwner) {
  return apiError(404, `404 ${notFoundName(owner)} Not Found`);
}

/** The variable named by `:key` (and `filter[environment_scope]`), as GET and DELETE find it. */
async function variableOf(c: Ctx, owner: VariableOwner): Promise<VariableRow> {
  const key = keyParam(c);
  // Instance keys are unique: admin/ci/variables has neither filter nor 409.
  const row = owner.kind === 'Instance' ? (await variablesByKey(c.app.db, owner, key))[0] : await findVariable(c.app.db, owner, key, scopeFilter(c));
  if (!row) throw notFound(owner);
  return row;
}

/**
 * The variable a PUT changes. Group updates keep GitLab's older rule for compatibility: without a
 * `filter` the first variable of the key, never 409; a filter that matches nothing falls back to it.
 */
async function variableToUpdate(c: Ctx, owner: VariableOwner): Promise<VariableRow> {
  if (owner.kind !== 'Namespace') return variableOf(c, owner);
  const key = keyParam(c);
  const filtered = c.params.has('filter') ? await findVariable(c.app.db, owner, key, scopeFilter(c)) : undefined;
  const row = filtered ?? (await variablesByKey(c.app.db, owner, key))[0];
  if (!row) throw notFound(owner);
  return row;
}

function register(app: FastifyInstance, prefix: string, ownerOf: (c: Ctx) => Promise<VariableOwner>): void {
  // GET /projects/:id/variables, /groups/:id/variables, /admin/ci/variables
  route(app, 'GET', `${prefix}`, async function listVariables(c) {
    const owner = await ownerOf(c);
    const rows = await paginateOffset(c, variablesOf(c.app.db, owner));
    return rows.map((r) => presentVariable(c, r));
  });

  // GET …/variables/:key
  route(app, 'GET', `${prefix}/:key`, async function getVariable(c) {
    const owner = await ownerOf(c);
    return presentVariable(c, await variableOf(c, owner));
  });

  // POST …/variables
  route(app, 'POST', `${prefix}`, async function createVariableRoute(c) {
    const owner = await ownerOf(c);
    const input = readInput(c, owner, true);
    return presentVariable(c, await createVariable(c.app, owner, input as VariableInput & { key: string; value: string }));
  });

  // PUT …/variables/:key
  route(app, 'PUT', `${prefix}/:key`, async function updateVariableRoute(c) {
    const owner = await ownerOf(c);
    const input = readInput(c, owner, false);
    const row = await variableToUpdate(c, owner);
    return presentVariable(c, await updateVariable(c.app, owner, row, input));
  });

  // DELETE …/variables/:key
  route(app, 'DELETE', `${prefix}/:key`, async function deleteVariableRoute(c) {
    const owner = await ownerOf(c);
    const row = await variableOf(c, owner);
    // Group deletions go through destroy_conditionally! (412 on If-Unmodified-Since).
    if (owner.kind === 'Namespace') refuseIfModifiedSince(c, row.updated_at);
    await deleteVariable(c.app, row);
  });
}

let hooked = false;

export function registerVariableRoutes(app: FastifyInstance): void {
  register(app, '/projects/:id/variables', projectOwner);
  register(app, '/groups/:id/variables', groupOwner);
  register(app, '/admin/ci/variables', instanceOwner);
  if (hooked) return;
  hooked = true;
  projectDeletionHooks.push(async function deleteProjectVariables(hookApp, trx, projectId) {
    await deleteOwnerVariables(hookApp, trx, 'Project', [projectId]);
  });
}
