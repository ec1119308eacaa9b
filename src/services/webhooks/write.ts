// Saving project webhooks (GitLab's WebHooks::CreateService, the API's update_hook and the model's
// validations and callbacks). Validation failures are ApiErrors with GitLab's bodies: creation
// answers `{"error": …}`, updates answer the same for the URL, branch filter and custom headers and
// the model's `{"message": {field: [...]}}` for the rest.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { DB } from '../../db/types.js';
import { isValidBranchName } from '../../git/refname.js';
import { apiError, paramError, type ApiError } from '../../http/errors.js';
import { regexFilterValid } from './branch-regex.js';
import { encryptValue } from './crypto.js';
import { defaultFlags, flagsOf, hooksChanged, hookSecrets, interpolateUrl, maskUrl, VARIABLE_KEY, type HookFlag, type HookRow, type HookSecrets } from './hooks.js';
import { BlockedUrlError, checkHookUrl } from './url-guard.js';

/** GitLab's plan limit `project_hooks`. */
const MAX_PROJECT_HOOKS = 100;
const MAX_MAP_ENTRIES = 20;
const MAX_MAP_VALUE = 2048;
const MAX_TEMPLATE = 4096;
const MAX_BRANCH_FILTER = 4000;
const MAX_NAME = 255;
const MAX_DESCRIPTION = 2048;
/** Longest URL kept: no real endpoint needs more, and the URL is sent with every event. */
const MAX_URL = 8192;

export const BRANCH_FILTER_STRATEGIES = ['wildcard', 'regex', 'all_branches'] as const;
export type BranchFilterStrategy = (typeof BRANCH_FILTER_STRATEGIES)[number];

export interface HookInput {
  url?: string;
  token?: string | null;
  name?: string | null;
  description?: string | null;
  flags: Partial<Record<HookFlag, boolean>>;
  enableSslVerification?: boolean;
  pushEventsBranchFilter?: string | null;
  branchFilterStrategy?: BranchFilterStrategy;
  customWebhookTemplate?: string | null;
  urlVariables?: Record<string, string>;
  customHeaders?: Record<string, string>;
}

type Mode = 'create' | 'update';

/** The model's error for `field`: create's sentence, or update's validation hash. */
function modelError(mode: Mode, field: string, message: string): ApiError {
  if (mode === 'create') return paramError(`${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} ${message}`, 422);
  return apiError(422, { [field]: [message] });
}

function validMap(map: Record<string, string>): boolean {
  const entries = Object.entries(map);
  return entries.length <= MAX_MAP_ENTRIES && entries.every(([k, v]) => VARIABLE_KEY.test(k) && typeof v === 'string' && v.length >= 1 && v.length <= MAX_MAP_VALUE);
}

/**
 * Headers a hook may add. GITLAB-COMPAT: the ones that frame the request or steer proxies (Host,
 * Content-Length, Transfer-Encoding, Connection, Expect, Proxy-*, …) are refused: with them a hook
 * could send a request an egress proxy reads differently than its receiver.
 */
const RESERVED_HEADERS = /^(host|content-length|transfer-encoding|connection|keep-alive|te|trailer|upgrade|expect|proxy-.*)$/i;

/** Names and values that can go on the wire as they are (no line breaks or other bytes Node refuses). */
function sendableHeaders(map: Record<string, string>): boolean {
  return Object.entries(map).every(([k, v]) => {
    if (RESERVED_HEADERS.test(k)) return false;
    try {
      validateHeaderName(k);
      validateHeaderValue(k, v);
      return true;
    } catch {
      return false;
    }
  });
}

/** GitLab's branch filter validators: a wildcard must make a valid ref name (`*` read as `x`), a regex must compile in RE2. */
function branchFilterValid(filter: string, strategy: BranchFilterStrategy): boolean {
  if (strategy === 'all_branches') return true;
  if (filter.length > MAX_BRANCH_FILTER) return false;
  if (strategy === 'regex') return regexFilterValid(filter);
  return isValidBranchName(filter.replace(/\*/g, 'x'));
}

interface Resolved {
  url: string;
  token: string | null;
  urlVariables: Record<string, string>;
  customHeaders: Record<string, string>;
  branchFilter: string | null;
  strategy: BranchFilterStrategy;
  template: string | null;
}

/** Checks the hook as it would be saved, in GitLab's order of errors. */
async function validate(app: AppContext, mode: Mode, r: Resolved, input: HookInput): Promise<void> {
  const invalidUrl = () => paramError('Invalid url given', 422);
  // The URL as saved starts with the scheme and `//` itself (not from a variable), so the masking
  // of logged URLs finds its credentials.
  if (r.url === '' || r.url.length > MAX_URL || !/^https?:\/\//i.test(r.url)) throw invalidUrl();
  const filled = interpolateUrl(r.url, r.urlVariables);
  if ('missing' in filled) throw invalidUrl();
  try {
    await checkHookUrl(filled.url, app.config.webhooks.allowLocal);
  } catch (err) {
    if (err instanceof BlockedUrlError) throw invalidUrl();
    throw err;
  }
  if (r.branchFilter !== null && !branchFilterValid(r.branchFilter, r.strategy)) throw paramError('Invalid branch filter given', 422);
  if (!validMap(r.customHeaders) || !sendableHeaders(r.customHeaders)) {
    throw paramError(mode === 'create' ? 'Custom headers must be a valid json schema' : 'Custom headers validation failed', 422);
  }
  if (!validMap(r.urlVariables)) throw modelError(mode, 'url_variables', 'must be a valid json schema');
  if (r.token !== null && /[\r\n]/.test(r.token)) throw modelError(mode, 'token', 'is invalid');
  if (r.template !== null && r.template.length > MAX_TEMPLATE) throw modelError(mode, 'custom_webhook_template', `is too long (maximum is ${MAX_TEMPLATE} characters)`);
  if (input.name && input.name.length > MAX_NAME) throw modelError(mode, 'name', `is too long (maximum is ${MAX_NAME} characters)`);
  if (input.description && input.description.length > MAX_DESCRIPTION) throw modelError(mode, 'description', `is too long (maximum is ${MAX_DESCRIPTION} characters)`);
}

function blankToNull(v: string | null | undefined): string | null {
  return v === undefined || v === null || v.trim() === '' ? null : v;
}

function encryptMap(app: AppContext, map: Record<string, string>): string | null {
  return Object.keys(map).length ? encryptValue(app.config.secret, JSON.stringify(map)) : null;
}

function sealed(app: AppContext, r: Resolved) {
  return {
    encrypted_url: encryptValue(app.config.secret, r.url),
    masked_url: maskUrl(r.url),
    encrypted_token: r.token ? encryptValue(app.config.secret, r.token) : null,
    encrypted_url_variables: encryptMap(app, r.urlVariables),
    encrypted_custom_headers: encryptMap(app, r.customHeaders),
    push_events_branch_filter: r.strategy === 'all_branches' ? null : r.branchFilter,
    branch_filter_strategy: r.strategy,
    custom_webhook_template: r.template,
  };
}

/** The hook's secrets, or null when they were sealed under another instance secret. */
export function readableSecrets(app: AppContext, row: HookRow): HookSecrets | null {
  try {
    return hookSecrets(app, row);
  } catch {
    return null;
  }
}

/** GITLAB-COMPAT: GitLab cannot read them either after its secrets change; it answers 500. */
export function unreadable(): ApiError {
  return paramError("The hook's URL and secrets were saved under another instance secret: save the hook again with its url (and token, URL variables and custom headers)", 422);
}

/** Creates a hook; 422 past the plan limit (counted in the transaction that inserts). */
export async function createHook(app: AppContext, projectId: number, input: HookInput): Promise<HookRow> {
  const resolved: Resolved = {
    url: (input.url ?? '').trim(),
    token: blankToNull(input.token),
    urlVariables: input.urlVariables ?? {},
    customHeaders: input.customHeaders ?? {},
    branchFilter: blankToNull(input.pushEventsBranchFilter)?.trim().replace(/\s+/g, ' ') ?? null,
    strategy: input.branchFilterStrategy ?? 'wildcard',
    template: blankToNull(input.customWebhookTemplate),
  };
  await validate(app, 'create', resolved, input);
  const flags = { ...defaultFlags(), ...input.flags };
  const now = nowIso();
  const id = await app.database.transaction(async (trx) => {
    // The project's row lock makes creations of one project count one after another (PostgreSQL).
    await app.database.forUpdate(trx.selectFrom('projects').select('id').where('id', '=', projectId)).execute();
    const count = await trx.selectFrom('web_hooks').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_PROJECT_HOOKS) throw paramError(`Maximum number of project hooks (${MAX_PROJECT_HOOKS}) exceeded`, 422);
    const row = await trx
      .insertInto('web_hooks')
      .values({
        project_id: projectId,
        ...sealed(app, resolved),
        name: blankToNull(input.name),
        description: blankToNull(input.description),
        events: JSON.stringify(flags),
        enable_ssl_verification: input.enableSslVerification === false ? 0 : 1,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
  hooksChanged();
  return (await findHook(app.db, projectId, id))!;
}

/**
 * Updates a hook. As GitLab's model: a new URL drops the token unless one is given with it, and
 * drops the URL variables and custom headers unless they are given with it; given variables and
 * headers are merged into the ones kept.
 */
export async function updateHook(app: AppContext, row: HookRow, input: HookInput): Promise<HookRow> {
  // Secrets sealed under another instance secret cannot be read: the hook is saved anew from
  // what the request gives, which must include the URL.
  const old = readableSecrets(app, row) ?? { url: '', token: null, urlVariables: {}, customHeaders: {} };
  if (old.url === '' && input.url === undefined) throw unreadable();
  const url = input.url !== undefined ? input.url.trim() : old.url;
  const urlChanged = url !== old.url;
  const strategy = input.branchFilterStrategy ?? (row.branch_filter_strategy as BranchFilterStrategy);
  const resolved: Resolved = {
    url,
    token: input.token !== undefined ? blankToNull(input.token) : urlChanged ? null : old.token,
    urlVariables: { ...(urlChanged ? {} : old.urlVariables), ...(input.urlVariables ?? {}) },
    customHeaders: { ...(urlChanged ? {} : old.customHeaders), ...(input.customHeaders ?? {}) },
    branchFilter: input.pushEventsBranchFilter !== undefined ? (blankToNull(input.pushEventsBranchFilter)?.trim().replace(/\s+/g, ' ') ?? null) : row.push_events_branch_filter,
    strategy,
    template: input.customWebhookTemplate !== undefined ? blankToNull(input.customWebhookTemplate) : row.custom_webhook_template,
  };
  await validate(app, 'update', resolved, input);
  await app.db
    .updateTable('web_hooks')
    .set({
      ...sealed(app, resolved),
      ...(input.name !== undefined ? { name: blankToNull(input.name) } : {}),
      ...(input.description !== undefined ? { description: blankToNull(input.description) } : {}),
      events: JSON.stringify({ ...flagsOf(row), ...input.flags }),
      ...(input.enableSslVerification !== undefined ? { enable_ssl_verification: input.enableSslVerification ? 1 : 0 } : {}),
      updated_at: nowIso(),
    })
    .where('id', '=', row.id)
    .execute();
  hooksChanged();
  return (await findHook(app.db, row.project_id, row.id)) ?? row;
}

/** Sets or removes one URL variable or custom header (the API's url_variables/custom_headers routes); false when removing a key that is not there. */
export async function setHookSecretEntry(app: AppContext, row: HookRow, kind: 'urlVariables' | 'customHeaders', key: string, value: string | null): Promise<boolean> {
  const secrets = readableSecrets(app, row);
  if (!secrets) throw unreadable();
  const map = { ...secrets[kind] };
  if (value === null) {
    if (!Object.hasOwn(map, key)) return false;
    delete map[key];
  } else {
    map[key] = value;
    if (!validMap(map) || (kind === 'customHeaders' && !sendableHeaders(map))) throw paramError('Illegal key or value', 422);
  }
  const column = kind === 'urlVariables' ? 'encrypted_url_variables' : 'encrypted_custom_headers';
  await app.db.updateTable('web_hooks').set({ [column]: encryptMap(app, map), updated_at: nowIso() }).where('id', '=', row.id).execute();
  hooksChanged();
  return true;
}

export function findHook(db: Kysely<DB>, projectId: number, hookId: number): Promise<HookRow | undefined> {
  return db.selectFrom('web_hooks').selectAll().where('project_id', '=', projectId).where('id', '=', hookId).executeTakeFirst();
}

export async function deleteHook(app: AppContext, row: HookRow): Promise<void> {
  await app.database.transaction(async (trx) => {
    await trx.deleteFrom('web_hook_logs').where('web_hook_id', '=', row.id).execute();
    await trx.deleteFrom('web_hooks').where('id', '=', row.id).execute();
  });
  hooksChanged();
}

/** A deleted project's hooks and their logs go in its deletion transaction. */
export async function deleteProjectHooks(trx: Transaction<DB>, projectId: number): Promise<void> {
  const ids = (await trx.selectFrom('web_hooks').select('id').where('project_id', '=', projectId).execute()).map((r) => r.id);
  if (ids.length === 0) return;
  await trx.deleteFrom('web_hook_logs').where('web_hook_id', 'in', ids).execute();
  await trx.deleteFrom('web_hooks').where('id', 'in', ids).execute();
  hooksChanged();
}
