// CI/CD variables of projects, groups and the instance (GitLab's Ci::Variable, Ci::GroupVariable,
// Ci::InstanceVariable with the Ci::HasVariable, Ci::Maskable and Ci::HidableVariable rules). Values
// are kept encrypted: a runner needs them in clear, so a digest will not do.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { CiVariablesTable } from '../../db/tables/ci-variables.js';
import type { DB } from '../../db/types.js';
import { apiError, validationError } from '../../http/errors.js';
import { lockOwnerRow, lockOwnerRows } from '../owner-lock.js';
import { charLength, rubyStrip } from '../ruby-text.js';
import { decryptValue, encryptValue } from '../webhooks/crypto.js';

export type VariableRow = Selectable<CiVariablesTable>;
export type VariableOwnerKind = 'Project' | 'Namespace' | 'Instance';

export interface VariableOwner {
  kind: VariableOwnerKind;
  /** 0 for the instance. */
  id: number;
}

export const VARIABLE_TYPES = ['env_var', 'file'] as const;

/** GitLab's default plan limits (instance_limits.md): project_ci_variables, group_ci_variables, ci_instance_level_variables. */
const LIMITS: Record<VariableOwnerKind, { count: number; name: string }> = {
  Project: { count: 8000, name: 'project ci variables' },
  Namespace: { count: 30000, name: 'group ci variables' },
  Instance: { count: 25, name: 'ci instance level variables' },
};

/** Ci::InstanceVariable's value length limit. */
const INSTANCE_VALUE_MAX = 10_000;
/**
 * GITLAB-COMPAT: GitLab's project and group variables have no length limit of their own (only the
 * request's size bounds them); here 256 KiB of characters, so that a page of a hundred stays a
 * response a client (and this process) can hold.
 */
export const VALUE_MAX = 262_144;

/** PostgreSQL advisory lock key of instance variable writes (forks use 7_190_019). */
const INSTANCE_VARIABLES_LOCK = 7_190_023;

const KEY_RE = /^[a-zA-Z0-9_]+$/;
/** Ci::Maskable: what a masked value may hold, unless it is raw (then anything but whitespace). */
const MASKABLE_RE = /^[a-zA-Z0-9_+=/@:.~-]{8,}$/;
/** Ruby's \S is ASCII-only: any other character counts as one, whatever its UTF-16 length. */
const MASKABLE_RAW_RE = /^[^ \t\n\v\f\r]{8,}$/u;

const SCOPE_RE = /^[a-zA-Z0-9_/${}. *-]+$/;

/** The attributes a create or an update sets (strings as given, booleans parsed). */
export interface VariableInput {
  key?: string;
  value?: string;
  variable_type?: string;
  protected?: boolean;
  masked?: boolean;
  raw?: boolean;
  hidden?: boolean;
  environment_scope?: string;
  description?: string | null;
}

/** The value in clear, or null when this instance's secret cannot read it (the secret was changed). */
export function variableValue(app: AppContext, row: VariableRow): string | null {
  try {
    return decryptValue(app.config.secret, row.encrypted_value);
  } catch {
    return null;
  }
}

function ownerQuery(db: Kysely<DB>, owner: VariableOwner) {
  return db.selectFrom('ci_variables').selectAll().where('source_type', '=', owner.kind).where('source_id', '=', owner.id);
}

/** An owner's variables, oldest first (GitLab pages them by id). */
export function variablesOf(db: Kysely<DB>, owner: VariableOwner) {
  return ownerQuery(db, owner).orderBy('id');
}

/** Variables of the owner with this key (exact, case-sensitive), in one scope when `scope` is given. */
export async function variablesByKey(db: Kysely<DB>, owner: VariableOwner, key: string, scope?: string): Promise<VariableRow[]> {
  let q = ownerQuery(db, owner).where('key', '=', key);
  if (scope !== undefined) q = q.where('environment_scope', '=', scope);
  return q.orderBy('id').limit(2).execute();
}

/** Ci::VariablesFinder with API::Helpers::VariablesHelpers#find_variable: one, none, or 409 when several match. */
export async function findVariable(db: Kysely<DB>, owner: VariableOwner, key: string, scope: string | undefined): Promise<VariableRow | undefined> {
  const rows = await variablesByKey(db, owner, key, scope);
  if (rows.length > 1) throw apiError(409, "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'");
  return rows[0];
}

/** The model's validations over the attributes the row will have; 400 `{"message":{attr:[…]}}`. */
function validate(owner: VariableOwner, v: Required<Omit<VariableInput, 'description'>> & { description: string | null }): void {
  const errors: Record<string, string[]> = {};
  const add = (attr: string, msg: string) => (errors[attr] ??= []).push(msg);
  if (v.key === '') add('key', "can't be blank");
  if (charLength(v.key) > 255) add('key', 'is too long (maximum is 255 characters)');
  if (!KEY_RE.test(v.key)) add('key', "can contain only letters, digits and '_'.");
  if (v.masked && !(v.raw ? MASKABLE_RAW_RE : MASKABLE_RE).test(v.value)) add('value', 'is invalid');
  if (owner.kind === 'Instance' && charLength(v.value) > INSTANCE_VALUE_MAX) add('value', `The value of the provided variable exceeds the ${INSTANCE_VALUE_MAX} character limit`);
  else if (charLength(v.value) > VALUE_MAX) add('value', `is too long (maximum is ${VALUE_MAX} characters)`);
  if (owner.kind !== 'Instance') {
    if (v.environment_scope === '') add('environment_scope', "can't be blank");
    if (!SCOPE_RE.test(v.environment_scope)) add('environment_scope', "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces");
  }
  if (v.description !== null && charLength(v.description) > 255) add('description', 'is too long (maximum is 255 characters)');
  if (Object.keys(errors).length) throw validationError(errors);
}

async function keyTaken(trx: Transaction<DB>, owner: VariableOwner, key: string, scope: string, exceptId?: number): Promise<boolean> {
  let q = trx.selectFrom('ci_variables').select('id').where('source_type', '=', owner.kind).where('source_id', '=', owner.id).where('key', '=', key);
  // Instance keys are unique across the instance; project and group keys per environment scope.
  if (owner.kind !== 'Instance') q = q.where('environment_scope', '=', scope);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

const taken = (key: string) => validationError({ key: [`(${key}) has already been taken`] });

/** Creates a variable (the caller has checked access); the new row. */
export async function createVariable(app: AppContext, owner: VariableOwner, input: VariableInput & { key: string; value: string }): Promise<VariableRow> {
  const attrs = {
    key: rubyStrip(input.key),
    value: input.value,
    variable_type: input.variable_type ?? 'env_var',
    protected: input.protected ?? false,
    masked: input.masked ?? false,
    raw: input.raw ?? false,
    hidden: input.hidden ?? false,
    environment_scope: owner.kind === 'Instance' ? '*' : rubyStrip(input.environment_scope ?? '*'),
    description: input.description ?? null,
  };
  validate(owner, attrs);
  return app.database.transaction(async (trx) => {
    // The owner's row is locked on PostgreSQL so two creations cannot both pass the count or the key check.
    await lockOwner(app, trx, owner);
    const limit = LIMITS[owner.kind];
    const { n } = await trx
      .selectFrom('ci_variables')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('source_type', '=', owner.kind)
      .where('source_id', '=', owner.id)
      .executeTakeFirstOrThrow();
    if (Number(n) >= limit.count) throw validationError({ base: [`Maximum number of ${limit.name} (${limit.count}) exceeded`] });
    if (await keyTaken(trx, owner, attrs.key, attrs.environment_scope)) throw taken(attrs.key);
    const now = nowIso();
    const row = {
      source_type: owner.kind,
      source_id: owner.id,
      key: attrs.key,
      encrypted_value: encryptValue(app.config.secret, attrs.value),
      variable_type: attrs.variable_type,
      protected: attrs.protected ? 1 : 0,
      masked: attrs.masked ? 1 : 0,
      hidden: attrs.hidden ? 1 : 0,
      raw: attrs.raw ? 1 : 0,
      environment_scope: attrs.environment_scope,
      description: attrs.description,
      created_at: now,
      updated_at: now,
    };
    const { id } = await trx.insertInto('ci_variables').values(row).returning('id').executeTakeFirstOrThrow();
    return { ...row, id };
  });
}

/** Updates a variable found by the caller; the key never changes (GitLab drops `key` from the update). */
export async function updateVariable(app: AppContext, owner: VariableOwner, found: VariableRow, input: VariableInput): Promise<VariableRow> {
  return app.database.transaction(async (trx) => {
    await lockOwner(app, trx, owner);
    const row = await trx.selectFrom('ci_variables').selectAll().where('id', '=', found.id).executeTakeFirst();
    if (!row) throw apiError(404, `404 ${notFoundName(owner)} Not Found`);
    const current = variableValue(app, row);
    if (input.value === undefined && current === null) {
      throw apiError(422, 'The value of this variable cannot be read with the instance secret: set it again');
    }
    const attrs = {
      key: row.key,
      value: input.value ?? current!,
      variable_type: input.variable_type ?? row.variable_type,
      protected: input.protected ?? row.protected === 1,
      masked: input.masked ?? row.masked === 1,
      raw: input.raw ?? row.raw === 1,
      hidden: row.hidden === 1,
      environment_scope: owner.kind === 'Instance' ? '*' : input.environment_scope !== undefined ? rubyStrip(input.environment_scope) : row.environment_scope,
      description: input.description !== undefined ? input.description : row.description,
    };
    validate(owner, attrs);
    // Ci::HidableVariable: a masked and hidden variable stays both.
    if (row.hidden === 1 && !attrs.masked) throw validationError({ base: ['The visibility setting cannot be changed for masked and hidden variables.'] });
    if (attrs.environment_scope !== row.environment_scope && (await keyTaken(trx, owner, row.key, attrs.environment_scope, row.id))) throw taken(row.key);
    const set = {
      encrypted_value: input.value !== undefined ? encryptValue(app.config.secret, attrs.value) : row.encrypted_value,
      variable_type: attrs.variable_type,
      protected: attrs.protected ? 1 : 0,
      masked: attrs.masked ? 1 : 0,
      raw: attrs.raw ? 1 : 0,
      environment_scope: attrs.environment_scope,
      description: attrs.description,
      updated_at: nowIso(),
    };
    await trx.updateTable('ci_variables').set(set).where('id', '=', row.id).execute();
    return { ...row, ...set };
  });
}

export async function deleteVariable(app: AppContext, row: VariableRow): Promise<void> {
  await app.database.transaction(async (trx) => {
    await trx.deleteFrom('ci_variables').where('id', '=', row.id).execute();
  });
}

/** The resource name of the owner's 404 (`404 Variable Not Found`, `404 GroupVariable Not Found`, …). */
export function notFoundName(owner: VariableOwner): string {
  return owner.kind === 'Project' ? 'Variable' : owner.kind === 'Namespace' ? 'GroupVariable' : 'InstanceVariable';
}

/**
 * Serialises writes to one owner's variables: the project's or group's row on PostgreSQL (SQLite's
 * BEGIN IMMEDIATE already serialises every write). The instance has no row: PostgreSQL takes a
 * transaction-scoped advisory lock instead.
 */
async function lockOwner(app: AppContext, trx: Transaction<DB>, owner: VariableOwner): Promise<void> {
  if (owner.kind === 'Instance') {
    if (app.database.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${INSTANCE_VARIABLES_LOCK})`.execute(trx);
    return;
  }
  await lockOwnerRow(app, trx, owner.kind === 'Project' ? 'projects' : 'namespaces', owner.id);
}

/** A deleted project's or group's variables go with it (the owners' rows locked first: services/owner-lock.ts). */
export async function deleteOwnerVariables(app: AppContext, trx: Transaction<DB>, kind: 'Project' | 'Namespace', ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await lockOwnerRows(app, trx, kind === 'Project' ? 'projects' : 'namespaces', ids);
  await trx.deleteFrom('ci_variables').where('source_type', '=', kind).where('source_id', 'in', ids).execute();
}

