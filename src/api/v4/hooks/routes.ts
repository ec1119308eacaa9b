// Project webhooks (GitLab's lib/api/project_hooks.rb and lib/api/hooks/*.rb): CRUD, test
// deliveries, the delivery log (events), resending a logged delivery, and URL variables and custom
// headers one key at a time. Maintainers and administrators only, reads included.
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, notGiven, paramError } from '../../../http/errors.js';
import { FixedWindows } from '../../../http/fixed-window.js';
import { paginateArray, paginateOffset } from '../../../http/pagination.js';
import type { ParamHash } from '../../../http/params.js';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { findProject, type FoundProject } from '../../../services/projects/lookup.js';
import { executeHook, OVERSIZE } from '../../../services/webhooks/deliver.js';
import { HOOK_FLAGS, interpolateUrl, projectHooks, scopeOfFlag, urlHash, type HookFlag, type HookRow } from '../../../services/webhooks/hooks.js';
import { testPayload } from '../../../services/webhooks/test-data.js';
import { registerIssuableEvents } from '../../../services/webhooks/issuable-events.js';
import { registerPushEvents } from '../../../services/webhooks/push-events.js';
import {
  BRANCH_FILTER_STRATEGIES,
  createHook,
  deleteHook,
  deleteProjectHooks,
  findHook,
  readableSecrets,
  setHookSecretEntry,
  unreadable,
  updateHook,
  type HookInput,
} from '../../../services/webhooks/write.js';
import { presentProjectHook, presentWebHookLog } from '../entities/hook.js';
import { pathParam } from '../repository/common.js';
import { dbId } from '../../../services/merge-requests/rows.js';
import { randomUUID } from 'node:crypto';

/** Test deliveries and resends per project and user per minute (GitLab's web_hook_test and web_hook_event_resend). */
const TEST_LIMIT = 5;
const windows = new WeakMap<object, { test: FixedWindows; resend: FixedWindows }>();

/** The counters of this app (each app, and each test server, counts its own). */
function limiter(c: Ctx, kind: 'test' | 'resend'): FixedWindows {
  let w = windows.get(c.app);
  if (!w) windows.set(c.app, (w = { test: new FixedWindows(), resend: new FixedWindows() }));
  return w[kind];
}

/** Flags a test may be asked for: every project hook trigger (GitLab's ProjectHook.triggers). */
const TEST_TRIGGERS = HOOK_FLAGS;

/** read_web_hook / admin_web_hook: Maintainers and up. */
async function maintainer(c: Ctx): Promise<FoundProject> {
  c.requireUser();
  // Grape validates the parameters before the endpoint runs.
  if (c.params.has('hook_id')) hookIdParam(c);
  const found = await findProject(c, pathParam(c, 'id'));
  if (found.access < AccessLevel.MAINTAINER && !c.user!.is_admin) throw forbidden();
  return found;
}

/** `hook_id` is an Integer parameter (Grape's 400), checked before the project is looked up. */
function hookIdParam(c: Ctx): number {
  const raw = pathParam(c, 'hook_id');
  if (!/^\d+$/.test(raw)) throw paramError('hook_id is invalid');
  return dbId(Number(raw));
}

async function hookOf(c: Ctx, found: FoundProject): Promise<HookRow> {
  const row = await findHook(c.app.db, found.project.id, hookIdParam(c));
  if (!row) throw apiError(404, '404 Not found');
  return row;
}

/** `url_variables[]` / `custom_headers[]`: entries of `{key, value}`, both required. */
function keyValueList(c: Ctx, name: string): Record<string, string> | undefined {
  if (!c.params.has(name)) return undefined;
  const raw = c.params.raw[name];
  const list = Array.isArray(raw) ? raw : raw !== null && typeof raw === 'object' ? Object.values(raw) : null;
  if (!list) throw paramError(`${name} is invalid`);
  const out: Record<string, string> = Object.create(null);
  for (const entry of list) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw paramError(`${name} is invalid`);
    const h = entry as ParamHash;
    for (const field of ['key', 'value']) {
      const v = h[field];
      if (v === undefined || v === null) throw notGiven(`${name}[${field}]`);
      if (typeof v !== 'string' && typeof v !== 'number') throw paramError(`${name}[${field}] is invalid`);
    }
    const key = String(h.key);
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') throw paramError(`${name}[key] is invalid`);
    out[key] = String(h.value);
  }
  return { ...out };
}

/** The parameters both creation and update take (GitLab's common_hook_parameters). */
function hookInput(c: Ctx): HookInput {
  const flags: Partial<Record<HookFlag, boolean>> = {};
  for (const f of HOOK_FLAGS) {
    const v = c.params.bool(f);
    if (v !== undefined) flags[f] = v;
  }
  const input: HookInput = { flags };
  const url = c.params.string('url');
  if (url !== undefined) input.url = url;
  for (const [param, key] of [
    ['token', 'token'],
    ['name', 'name'],
    ['description', 'description'],
    ['push_events_branch_filter', 'pushEventsBranchFilter'],
    ['custom_webhook_template', 'customWebhookTemplate'],
  ] as const) {
    const v = c.params.nullableString(param);
    if (v !== undefined) input[key] = v;
  }
  const ssl = c.params.bool('enable_ssl_verification');
  if (ssl !== undefined) input.enableSslVerification = ssl;
  const strategy = c.params.enum('branch_filter_strategy', BRANCH_FILTER_STRATEGIES);
  if (strategy !== undefined) input.branchFilterStrategy = strategy;
  const variables = keyValueList(c, 'url_variables');
  if (variables) input.urlVariables = variables;
  const headers = keyValueList(c, 'custom_headers');
  if (headers) input.customHeaders = headers;
  return input;
}

const HOOK_PARAMS = ['url', 'token', 'name', 'description', 'push_events_branch_filter', 'custom_webhook_template', 'enable_ssl_verification', 'branch_filter_strategy', 'url_variables', 'custom_headers', ...HOOK_FLAGS];

// GET /projects/:id/hooks
async function listHooks(c: Ctx) {
  const found = await maintainer(c);
  return paginateArray(c, await projectHooks(c.app, found.project.id)).map((r) => presentProjectHook(c.app, r, false));
}

// GET /projects/:id/hooks/:hook_id
async function showHook(c: Ctx) {
  const found = await maintainer(c);
  return presentProjectHook(c.app, await hookOf(c, found), true);
}

// POST /projects/:id/hooks
async function addHook(c: Ctx) {
  const found = await maintainer(c);
  if (c.params.string('url') === undefined) throw notGiven('url');
  const row = await createHook(c.app, found.project.id, hookInput(c));
  c.status(201);
  return presentProjectHook(c.app, row, true);
}

// PUT /projects/:id/hooks/:hook_id
async function editHook(c: Ctx) {
  const found = await maintainer(c);
  const row = await hookOf(c, found);
  if (!HOOK_PARAMS.some((p) => c.params.has(p))) throw paramError('No parameters provided');
  return presentProjectHook(c.app, await updateHook(c.app, row, hookInput(c)), true);
}

// DELETE /projects/:id/hooks/:hook_id
async function removeHook(c: Ctx) {
  const found = await maintainer(c);
  const row = await hookOf(c, found);
  refuseIfModifiedSince(c, row.updated_at);
  await deleteHook(c.app, row);
  c.status(204);
  return undefined;
}

// POST /projects/:id/hooks/:hook_id/test/:trigger
async function testHook(c: Ctx) {
  const trigger = pathParam(c, 'trigger');
  if (!(TEST_TRIGGERS as readonly string[]).includes(trigger)) throw paramError('trigger does not have a valid value');
  const found = await maintainer(c);
  const row = await hookOf(c, found);
  limiter(c, 'test').hit(`${found.project.id}:${c.user!.id}`, TEST_LIMIT);
  const scope = scopeOfFlag(trigger as HookFlag);
  const data = await testPayload(c.app, found, c.user!, scope);
  if ('error' in data) throw apiError(422, data.error);
  const outcome = await executeHook(c.app, row, { scope, body: JSON.stringify(data.payload), eventUuid: randomUUID() }, { force: true });
  // force: a resting hook runs too, so the outcome is never 'disabled'.
  if (outcome !== 'disabled' && typeof outcome.status === 'number' && outcome.status >= 200 && outcome.status < 300) {
    c.status(201);
    return { message: '201 Created' };
  }
  throw apiError(422, outcome === 'disabled' ? 'Hook disabled' : outcome.body);
}

/** GitLab's status filter of the events list: codes and the three named groups. */
function statusFilter(c: Ctx): string[] | null {
  const items = c.params.stringArray('status', { comma: true });
  if (!items || items.length === 0) return null;
  const out = new Set<string>();
  for (const s of items) {
    if (s === 'successful') for (let i = 200; i < 300; i++) out.add(String(i));
    else if (s === 'client_failure') for (let i = 400; i < 500; i++) out.add(String(i));
    else if (s === 'server_failure') {
      for (let i = 500; i < 600; i++) out.add(String(i));
      out.add('internal error');
    } else if (/^\d{3}$/.test(s)) out.add(s);
    else throw paramError('status does not have a valid value');
  }
  return [...out];
}

// GET /projects/:id/hooks/:hook_id/events
async function hookEvents(c: Ctx) {
  const found = await maintainer(c);
  const row = await hookOf(c, found);
  const perPage = c.params.int('per_page');
  if (perPage !== undefined && (perPage < 1 || perPage > 20)) throw paramError('per_page does not have a valid value');
  const statuses = statusFilter(c);
  const since = new Date(Date.now() - 7 * 86_400_000).toISOString();
  let q = c.app.db.selectFrom('web_hook_logs').selectAll().where('web_hook_id', '=', row.id).where('created_at', '>=', since);
  if (statuses) q = q.where('response_status', 'in', statuses);
  const rows = await paginateOffset(c, q.orderBy('id', 'desc'));
  return rows.map(presentWebHookLog);
}

// POST /projects/:id/hooks/:hook_id/events/:hook_log_id/resend
async function resendEvent(c: Ctx) {
  const found = await maintainer(c);
  const row = await hookOf(c, found);
  const raw = pathParam(c, 'hook_log_id');
  if (!/^\d+$/.test(raw)) throw apiError(404, '404 Not found');
  const log = await c.app.db.selectFrom('web_hook_logs').selectAll().where('web_hook_id', '=', row.id).where('id', '=', dbId(Number(raw))).executeTakeFirst();
  if (!log) throw apiError(404, '404 Not found');
  limiter(c, 'resend').hit(`${found.project.id}:${c.user!.id}`, TEST_LIMIT);
  const secrets = readableSecrets(c.app, row);
  if (!secrets) throw unreadable();
  const filled = interpolateUrl(secrets.url, secrets.urlVariables);
  if ('missing' in filled || urlHash(c.app.config.secret, filled.url) !== log.url_hash) throw apiError(422, 'The hook URL has changed, and this log entry cannot be retried');
  // GITLAB-COMPAT: GitLab would send the marker itself.
  if (log.request_data === OVERSIZE) throw apiError(422, 'The payload of this log entry was too large to be kept, and it cannot be retried');
  const headers = JSON.parse(log.request_headers) as Record<string, string>;
  const outcome = await executeHook(c.app, row, {
    scope: log.trigger as never,
    body: log.request_data,
    eventUuid: headers['X-Gitlab-Event-UUID'] ?? randomUUID(),
    ...(headers['Idempotency-Key'] ? { idempotencyKey: headers['Idempotency-Key'] } : {}),
  });
  if (outcome === 'disabled') throw apiError(422, 'Hook disabled');
  if (outcome.status === 'internal error') throw apiError(422, outcome.body);
  c.status(201);
  return { response_status: outcome.status };
}

function secretEntryRoutes(kind: 'urlVariables' | 'customHeaders', label: string) {
  // PUT /projects/:id/hooks/:hook_id/{url_variables|custom_headers}/:key
  async function setEntry(c: Ctx) {
    const found = await maintainer(c);
    const row = await hookOf(c, found);
    const value = c.params.string('value', { required: true })!;
    await setHookSecretEntry(c.app, row, kind, pathParam(c, 'key'), value);
    c.status(204);
    return undefined;
  }
  // DELETE /projects/:id/hooks/:hook_id/{url_variables|custom_headers}/:key
  async function unsetEntry(c: Ctx) {
    const found = await maintainer(c);
    const row = await hookOf(c, found);
    const removed = await setHookSecretEntry(c.app, row, kind, pathParam(c, 'key'), null);
    if (!removed) throw apiError(404, `404 ${label} Not Found`);
    c.status(204);
    return undefined;
  }
  return { setEntry, unsetEntry };
}

let hooked = false;

export function registerHookRoutes(app: FastifyInstance): void {
  if (!hooked) {
    hooked = true;
    registerPushEvents();
    registerIssuableEvents();
    projectDeletionHooks.push(async function deleteHooks(_app, trx, projectId) {
      await deleteProjectHooks(trx, projectId);
    });
  }
  const variables = secretEntryRoutes('urlVariables', 'URL variable');
  const headers = secretEntryRoutes('customHeaders', 'Custom header');
  route(app, 'GET', '/projects/:id/hooks', listHooks);
  route(app, 'POST', '/projects/:id/hooks', addHook);
  route(app, 'GET', '/projects/:id/hooks/:hook_id', showHook);
  route(app, 'PUT', '/projects/:id/hooks/:hook_id', editHook);
  route(app, 'DELETE', '/projects/:id/hooks/:hook_id', removeHook);
  route(app, 'POST', '/projects/:id/hooks/:hook_id/test/:trigger', testHook);
  route(app, 'GET', '/projects/:id/hooks/:hook_id/events', hookEvents);
  route(app, 'POST', '/projects/:id/hooks/:hook_id/events/:hook_log_id/resend', resendEvent);
  route(app, 'PUT', '/projects/:id/hooks/:hook_id/url_variables/:key', variables.setEntry);
  route(app, 'DELETE', '/projects/:id/hooks/:hook_id/url_variables/:key', variables.unsetEntry);
  route(app, 'PUT', '/projects/:id/hooks/:hook_id/custom_headers/:key', headers.setEntry);
  route(app, 'DELETE', '/projects/:id/hooks/:hook_id/custom_headers/:key', headers.unsetEntry);
}

