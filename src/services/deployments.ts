// Environments (GitLab's Environment model): rows of their own since migration 0025, made by the
// environments API or found-or-created by a deployment to a new name. Labwright runs no jobs, so an
// environment has no stop actions: stopping it stops it at once.
import { createHash } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { nowIso } from '../db/database.js';
import type { EnvironmentsTable } from '../db/tables/environments.js';
import type { DB } from '../db/types.js';
import { validationError } from '../http/errors.js';
import { charLength } from './ruby-text.js';

export type EnvironmentRow = Selectable<EnvironmentsTable>;

export const TIERS = ['production', 'staging', 'testing', 'development', 'other'] as const;
export const AUTO_STOP_SETTINGS = ['always', 'with_action'] as const;

/**
 * Gitlab::Slug::Environment: lower-cased, other characters as '-', a letter first, no runs of '-';
 * when that changed the name or is over 24 characters, its first 17 characters and a 6-character
 * suffix from the name's SHA-256.
 */
export function environmentSlug(name: string): string {
  let s = name.toLowerCase().replace(/[^a-z0-9]/g, '-');
  if (!/^[a-z]/.test(s)) s = `env-${s}`;
  s = s.replace(/-+/g, '-');
  if (s.length > 24 || s !== name) {
    s = s.slice(0, 17);
    if (!s.endsWith('-')) s += '-';
    const suffix = BigInt(`0x${createHash('sha256').update(name).digest('hex')}`).toString(36).slice(-6);
    return s + suffix;
  }
  return s.replace(/-$/, '');
}

/** GitLab's Environment#guess_tier: the tier an environment's name suggests (first match wins). */
export function environmentTier(name: string): string {
  if (/(dev|review|trunk)/i.test(name)) return 'development';
  if (/(test|tst|int|ac(ce|)pt|qa|qc|control|quality)/i.test(name)) return 'testing';
  if (/(st(a|)g|mod(e|)l|pre|demo|non)/i.test(name)) return 'staging';
  if (/(pr(o|)d|live)/i.test(name)) return 'production';
  return 'other';
}

const NAME_RE = /^[a-zA-Z0-9_${}. -]([a-zA-Z0-9_/${}. -]*[a-zA-Z0-9_${}. -])?$/;
const NAME_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'";

export interface EnvironmentInput {
  external_url?: string | null;
  tier?: string;
  description?: string | null;
  auto_stop_setting?: string;
}

/** Blank text is stored as null (GitLab's nullify_if_blank). */
function nullIfBlank(v: string | null | undefined): string | null | undefined {
  if (v === undefined) return undefined;
  return v === null || v.trim() === '' ? null : v;
}

function validateAttrs(errors: Record<string, string[]>, attrs: EnvironmentInput): void {
  const add = (attr: string, msg: string) => (errors[attr] ??= []).push(msg);
  const url = attrs.external_url;
  if (url) {
    if (charLength(url) > 255) add('external_url', 'is too long (maximum is 255 characters)');
    // Browsers drop tabs and line breaks inside a URL and leading control characters and spaces:
    // `java\tscript:` is `javascript:` to them.
    const seen = url.replace(/[\t\n\r]/g, '').replace(/^[\x00-\x20]+/, '');
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(seen)?.[1]?.toLowerCase();
    if (scheme && ['data', 'javascript', 'vbscript'].includes(scheme)) add('external_url', `${scheme} scheme is not allowed`);
  }
  if (attrs.description && charLength(attrs.description) > 10_000) add('description', 'is too long (maximum is 10000 characters)');
}

function nameErrors(name: string): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (msg: string) => (errors.name ??= []).push(msg);
  if (name === '') add("can't be blank");
  if (charLength(name) > 255) add('is too long (maximum is 255 characters)');
  if (!NAME_RE.test(name)) add(NAME_MESSAGE);
  return errors;
}

async function taken(db: Kysely<DB> | Transaction<DB>, projectId: number, name: string, slug: string): Promise<Record<string, string[]>> {
  const rows = await db
    .selectFrom('environments')
    .select(['name', 'slug'])
    .where('project_id', '=', projectId)
    .where((eb) => eb.or([eb('name', '=', name), eb('slug', '=', slug)]))
    .execute();
  const errors: Record<string, string[]> = {};
  if (rows.some((r) => r.name === name)) errors.name = ['has already been taken'];
  if (rows.some((r) => r.slug === slug)) errors.slug = ['has already been taken'];
  return errors;
}

/** Creates an environment in `trx` (the caller holds the project's row lock); 400 with the model's errors. */
export async function insertEnvironment(trx: Transaction<DB>, projectId: number, name: string, attrs: EnvironmentInput): Promise<EnvironmentRow> {
  const slug = environmentSlug(name);
  const errors = mergeErrors(nameErrors(name), await taken(trx, projectId, name, slug));
  validateAttrs(errors, attrs);
  if (Object.keys(errors).length) throw validationError(errors);
  const now = nowIso();
  const row = {
    project_id: projectId,
    name,
    slug,
    external_url: nullIfBlank(attrs.external_url) ?? null,
    description: nullIfBlank(attrs.description) ?? null,
    tier: attrs.tier ?? environmentTier(name),
    state: 'available',
    auto_stop_at: null,
    auto_stop_setting: attrs.auto_stop_setting ?? 'always',
    created_at: now,
    updated_at: now,
  };
  const { id } = await trx.insertInto('environments').values(row).returning('id').executeTakeFirstOrThrow();
  return { ...row, id };
}

function mergeErrors(a: Record<string, string[]>, b: Record<string, string[]>): Record<string, string[]> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = [...(out[k] ?? []), ...v];
  return out;
}

/** The environment of this name, made when missing (a deployment's find_or_create_by). */
export async function findOrCreateEnvironment(trx: Transaction<DB>, projectId: number, name: string): Promise<EnvironmentRow> {
  const found = await trx.selectFrom('environments').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
  return found ?? insertEnvironment(trx, projectId, name, {});
}

/** Applies an update's attributes; 400 with the model's errors. */
export async function updateEnvironment(db: Kysely<DB>, env: EnvironmentRow, attrs: EnvironmentInput): Promise<EnvironmentRow> {
  const errors: Record<string, string[]> = {};
  validateAttrs(errors, attrs);
  if (Object.keys(errors).length) throw validationError(errors);
  const set: Partial<EnvironmentRow> = { updated_at: nowIso() };
  if (attrs.external_url !== undefined) set.external_url = nullIfBlank(attrs.external_url) ?? null;
  if (attrs.description !== undefined) set.description = nullIfBlank(attrs.description) ?? null;
  if (attrs.tier !== undefined) set.tier = attrs.tier;
  if (attrs.auto_stop_setting !== undefined) set.auto_stop_setting = attrs.auto_stop_setting;
  await db.updateTable('environments').set(set).where('id', '=', env.id).execute();
  return { ...env, ...set };
}

/** A successful deployment starts its environment again (GitLab's UpdateEnvironmentWorker `start`). */
export async function startEnvironment(db: Kysely<DB> | Transaction<DB>, projectId: number, name: string): Promise<void> {
  await db
    .updateTable('environments')
    .set({ state: 'available', updated_at: nowIso() })
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .where('state', '!=', 'available')
    .execute();
}

/** Environments by name for a page of deployments (one query). */
export async function environmentsByName(db: Kysely<DB>, projectId: number, names: string[]): Promise<Map<string, EnvironmentRow>> {
  const unique = [...new Set(names)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('environments').selectAll().where('project_id', '=', projectId).where('name', 'in', unique).execute();
  return new Map(rows.map((r) => [r.name, r]));
}
