// Sending a webhook (GitLab's WebHookService): a POST of the event's JSON with GitLab's headers,
// GitLab's timeout, redirects followed (each hop checked again), the outcome logged (token, custom
// header values and e-mail addresses redacted; the response cut to 8 KB) and, with auto-disabling
// on, a failing hook rested. Failed deliveries are not retried, as GitLab.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { instanceBase, type AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import { GITLAB_VERSION } from '../../version.js';
import { blockedAddressReason, guardedLookup, parseHookUrl } from './url-guard.js';
import { alertStatus, backoffMs, eventHeader, hooksChanged, hookSecrets, interpolateUrl, PERMANENT_THRESHOLD, TEMPORARY_THRESHOLD, urlHash, type HookRow, type HookScope } from './hooks.js';

const RESPONSE_BODY_LIMIT = 8 * 1024;
const RESPONSE_HEADER_LIMIT = 50;
const HEADER_VALUE_LIMIT = 1024;
const MAX_REDIRECTS = 5;
/** GitLab's REQUEST_BODY_SIZE_LIMIT. */
const REQUEST_BODY_LIMIT = 25 * 1024 * 1024;
const REDACTED = '[REDACTED]';
/**
 * A rendered custom template may not grow past this. GITLAB-COMPAT: GitLab's bound is the request
 * body's 25 MB; a template repeating a large value would otherwise take that much per delivery.
 */
const TEMPLATE_OUTPUT_LIMIT = 1024 * 1024;
/**
 * A logged payload larger than this is kept as GitLab keeps one too large for its queue:
 * `{"oversize": true}` (it then cannot be resent). GITLAB-COMPAT: GitLab's bound is Sidekiq's.
 */
const LOG_DATA_LIMIT = 32 * 1024;
export const OVERSIZE = '{"oversize":true}';
/** Log entries kept per hook (the newest); older ones go in the periodic sweep. */
const LOGS_PER_HOOK = 100;

export interface Delivery {
  scope: HookScope;
  /** The payload as JSON text: made once per event, shared by every hook it goes to. */
  body: string;
  /** One per event: every hook the event goes to sends the same. */
  eventUuid: string;
  /** One per hook and event; a resend sends the logged one again. */
  idempotencyKey?: string;
}

/** What one execution came to: the HTTP status, or 'internal error' with the reason as the body. */
export interface Outcome {
  status: number | 'internal error';
  body: string;
}

class DeliveryError extends Error {}

interface RawResponse {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

function readCapped(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size >= RESPONSE_BODY_LIMIT) return;
      chunks.push(chunk);
      size += chunk.length;
      // Enough for the log: the rest is not read.
      if (size >= RESPONSE_BODY_LIMIT) res.destroy();
    });
    res.on('end', () => resolve(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8')));
    res.on('close', () => resolve(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8')));
    res.on('error', reject);
  });
}

interface SendOptions {
  verify: boolean;
  allowLocal: boolean;
  signal: AbortSignal;
}

/** One HTTP exchange, no redirects: the caller follows them. */
function sendOnce(url: URL, method: 'POST' | 'GET', headers: Array<[string, string]>, body: Buffer | null, opts: SendOptions): Promise<RawResponse> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!opts.allowLocal && isIP(host)) {
    // A literal address is dialled without a lookup: it is checked here instead.
    const reason = blockedAddressReason(host);
    if (reason) return Promise.reject(new DeliveryError(`URL is blocked: ${reason}`));
  }
  // An object keeps the insertion order, so the headers go out in GitLab's order.
  const flat: Record<string, string> = {};
  for (const [k, v] of headers) flat[k] = v;
  if (body) flat['Content-Length'] = String(body.length);
  const auth = url.username || url.password ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: url.pathname + url.search,
        method,
        headers: flat,
        auth,
        agent: false,
        lookup: guardedLookup(opts.allowLocal) as never,
        rejectUnauthorized: opts.verify,
        signal: opts.signal,
      },
      (res) => {
        const out: Array<[string, string]> = [];
        const raw = res.rawHeaders;
        for (let i = 0; i + 1 < raw.length && out.length < RESPONSE_HEADER_LIMIT; i += 2) out.push([raw[i]!, raw[i + 1]!.slice(0, HEADER_VALUE_LIMIT)]);
        readCapped(res).then((text) => resolve({ status: res.statusCode ?? 0, headers: out, body: text }), reject);
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

/**
 * POST with redirects followed as HTTParty does: 301/302/303 become a GET without a body, 307/308
 * keep the POST. Secrets stay with the origin they were given for: on a hop to another origin the
 * token, the custom headers and the URL's credentials are left behind.
 */
async function post(url: URL, headers: Array<[string, string]>, body: Buffer, opts: SendOptions & { secretHeaders: Set<string> }): Promise<RawResponse> {
  let current = url;
  let method: 'POST' | 'GET' = 'POST';
  let sendBody: Buffer | null = body;
  for (let hop = 0; ; hop++) {
    const res = await sendOnce(current, method, method === 'POST' ? headers : headers.filter(([k]) => k.toLowerCase() !== 'content-type'), sendBody, opts);
    const location = res.headers.find(([k]) => k.toLowerCase() === 'location')?.[1];
    if (![301, 302, 303, 307, 308].includes(res.status) || !location) return res;
    if (hop >= MAX_REDIRECTS) throw new DeliveryError('redirect too deep');
    let next: URL;
    try {
      next = parseHookUrl(new URL(location, current).toString());
    } catch (err) {
      throw new DeliveryError(`URL is blocked: ${(err as Error).message}`);
    }
    // Credentials never follow a redirect to another origin.
    if (next.origin !== current.origin) {
      next.username = '';
      next.password = '';
      headers = headers.filter(([k]) => !opts.secretHeaders.has(k.toLowerCase()));
    }
    if (res.status <= 303) {
      method = 'GET';
      sendBody = null;
    }
    current = next;
  }
}

/** GitLab's headers, custom headers first (a built-in header of the same name replaces one). */
function buildHeaders(app: AppContext, scope: HookScope, custom: Record<string, string>, token: string | null, delivery: Delivery, idempotencyKey: string): Array<[string, string]> {
  const builtIn: Array<[string, string]> = [
    ['Content-Type', 'application/json'],
    ['User-Agent', `GitLab/${GITLAB_VERSION}`],
    ['Idempotency-Key', idempotencyKey],
    ['X-Gitlab-Event', eventHeader(scope)],
    ['X-Gitlab-Webhook-UUID', randomUUID()],
    ['X-Gitlab-Instance', instanceBase(app)],
  ];
  if (token) builtIn.push(['X-Gitlab-Token', token.replace(/[\r\n]/g, '')]);
  builtIn.push(['X-Gitlab-Event-UUID', delivery.eventUuid]);
  const taken = new Set(builtIn.map(([k]) => k.toLowerCase()));
  return [...Object.entries(custom).filter(([k]) => !taken.has(k.toLowerCase())), ...builtIn];
}

const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** GitLab's redact_user_emails: every value that is an e-mail address is logged as [REDACTED]. */
function redactEmails(v: unknown): unknown {
  if (typeof v === 'string') return EMAIL.test(v) ? REDACTED : v;
  if (Array.isArray(v)) return v.map(redactEmails);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = redactEmails(x);
    return out;
  }
  return v;
}

function loggedRequestHeaders(headers: Array<[string, string]>, custom: Record<string, string>): Record<string, string> {
  const customNames = new Set(Object.keys(custom).map((k) => k.toLowerCase()));
  const out: Record<string, string> = {};
  for (const [k, v] of headers) out[k] = k === 'X-Gitlab-Token' || customNames.has(k.toLowerCase()) ? REDACTED : v;
  return out;
}

/** Response headers as logged: a URL variable's value shown as its `{name}`, as GitLab's mask_response_headers. */
function loggedResponseHeaders(headers: Array<[string, string]>, variables: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of headers) {
    let value = v;
    for (const [name, secret] of Object.entries(variables)) if (secret) value = value.split(secret).join(`{${name}}`);
    out[k] = value;
  }
  return out;
}

/**
 * GitLab's custom webhook template: each `{{a.b}}` replaced by that value of the payload as JSON
 * (a string without its quotes, so it can sit inside one), the result parsed as the JSON to send.
 */
function renderTemplate(template: string, payload: unknown): unknown {
  let arrayTouched = false;
  let size = template.length;
  const rendered = template.replace(/{{(.+?)}}/g, (_whole, path: string) => {
    if (size > TEMPLATE_OUTPUT_LIMIT) return '';
    let value: unknown = payload;
    for (const key of path.split('.')) {
      if (Array.isArray(value)) {
        arrayTouched = true;
        break;
      }
      value = value !== null && typeof value === 'object' && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : null;
    }
    const json = JSON.stringify(value ?? null);
    const out = typeof value === 'string' ? json.slice(1, -1) : json;
    size += out.length;
    return out;
  });
  const fail = (message: string) => new DeliveryError(`Error while parsing rendered custom webhook template: ${message}`);
  if (arrayTouched) throw fail('You may be trying to access an array value, which is not supported.');
  if (size > TEMPLATE_OUTPUT_LIMIT) throw new DeliveryError('The data is too large');
  try {
    return JSON.parse(rendered) as unknown;
  } catch (err) {
    throw fail((err as Error).message);
  }
}

interface Running {
  controllers: Set<AbortController>;
  closed: boolean;
  logWrites: number;
  /** Hooks logged since the last sweep. */
  loggedHooks: Set<number>;
}

const running = new WeakMap<AppContext, Running>();

function stateOf(app: AppContext): Running {
  let s = running.get(app);
  if (!s) {
    s = { controllers: new Set(), closed: false, logWrites: 0, loggedHooks: new Set() };
    running.set(app, s);
    const state = s;
    app.onClose.push(function stopWebhookDeliveries() {
      state.closed = true;
      for (const c of state.controllers) c.abort();
    });
  }
  return s;
}

const LOG_RETENTION_MS = 7 * 86_400_000;

/**
 * Runs one hook for one event now: sends, logs, and (unless `force`, GitLab's test path, which
 * also runs a resting hook) records the outcome for auto-disabling.
 */
export async function executeHook(app: AppContext, row: HookRow, delivery: Delivery, opts: { force?: boolean } = {}): Promise<Outcome | 'disabled'> {
  if (!opts.force && alertStatus(app, row) !== 'executable') return 'disabled';
  const state = stateOf(app);
  // The app is closing: what is still queued is dropped (see dispatch.ts).
  if (state.closed) return { status: 'internal error', body: 'shutting down' };
  const started = performance.now();
  const idempotencyKey = delivery.idempotencyKey ?? randomUUID();
  let secrets;
  let requestHeaders: Array<[string, string]> = [];
  let target = '';
  let outcome: Outcome;
  let response: RawResponse | null = null;
  const controller = new AbortController();
  state.controllers.add(controller);
  const timer = setTimeout(() => controller.abort(new DeliveryError('execution expired')), app.config.webhooks.timeoutSeconds * 1000);
  try {
    secrets = hookSecrets(app, row);
    requestHeaders = buildHeaders(app, delivery.scope, secrets.customHeaders, secrets.token, delivery, idempotencyKey);
    const filled = interpolateUrl(secrets.url, secrets.urlVariables);
    if ('missing' in filled) throw new DeliveryError(`Invalid URL template. Missing keys: ${JSON.stringify(filled.missing)}`);
    target = filled.url;
    const body = Buffer.from(row.custom_webhook_template ? JSON.stringify(renderTemplate(row.custom_webhook_template, JSON.parse(delivery.body))) : delivery.body);
    if (body.length > REQUEST_BODY_LIMIT) throw new DeliveryError('The data is too large');
    let url: URL;
    try {
      url = parseHookUrl(target);
    } catch (err) {
      throw new DeliveryError(`URL is blocked: ${(err as Error).message}`);
    }
    const secretHeaders = new Set(['x-gitlab-token', ...Object.keys(secrets.customHeaders).map((k) => k.toLowerCase())]);
    response = await post(url, requestHeaders, body, { verify: row.enable_ssl_verification === 1, allowLocal: app.config.webhooks.allowLocal, signal: controller.signal, secretHeaders });
    outcome = { status: response.status, body: response.body };
  } catch (err) {
    const reason = controller.signal.aborted && controller.signal.reason instanceof Error ? controller.signal.reason : (err as Error);
    outcome = { status: 'internal error', body: reason.message || String(reason) };
  } finally {
    clearTimeout(timer);
    state.controllers.delete(controller);
  }
  const duration = (performance.now() - started) / 1000;
  if (state.closed) return outcome;
  await writeLog(app, state, row, delivery, {
    requestHeaders: loggedRequestHeaders(requestHeaders, secrets?.customHeaders ?? {}),
    responseHeaders: response ? loggedResponseHeaders(response.headers, secrets?.urlVariables ?? {}) : {},
    responseBody: outcome.status === 'internal error' ? '' : outcome.body,
    status: String(outcome.status),
    internalError: outcome.status === 'internal error' ? outcome.body : null,
    duration,
    urlHash: urlHash(app.config.secret, target),
  }).catch((err) => app.log.error({ err, hookId: row.id }, 'webhook log not written'));
  await recordOutcome(app, row.id, outcome).catch((err) => app.log.error({ err, hookId: row.id }, 'webhook state not updated'));
  return outcome;
}

interface LogEntry {
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string>;
  responseBody: string;
  status: string;
  internalError: string | null;
  duration: number;
  urlHash: string;
}

async function writeLog(app: AppContext, state: Running, row: HookRow, delivery: Delivery, e: LogEntry): Promise<void> {
  const now = nowIso();
  await app.db
    .insertInto('web_hook_logs')
    .values({
      web_hook_id: row.id,
      trigger: delivery.scope,
      url: row.masked_url,
      url_hash: e.urlHash,
      request_headers: JSON.stringify(e.requestHeaders),
      request_data: delivery.body.length > LOG_DATA_LIMIT ? OVERSIZE : JSON.stringify(redactEmails(JSON.parse(delivery.body))),
      response_headers: JSON.stringify(e.responseHeaders),
      response_body: e.responseBody,
      response_status: e.status,
      execution_duration: e.duration,
      internal_error_message: e.internalError,
      created_at: now,
      updated_at: now,
    })
    .execute();
  // The log keeps a week (what the events API shows) and the newest entries of each hook; the
  // rest goes now and then.
  state.loggedHooks.add(row.id);
  if (state.logWrites++ % 200 === 0) {
    await app.db.deleteFrom('web_hook_logs').where('created_at', '<', new Date(Date.now() - LOG_RETENTION_MS).toISOString()).execute();
    const hooks = [...state.loggedHooks];
    state.loggedHooks.clear();
    for (const id of hooks) {
      const edge = await app.db.selectFrom('web_hook_logs').select('id').where('web_hook_id', '=', id).orderBy('id', 'desc').limit(1).offset(LOGS_PER_HOOK).executeTakeFirst();
      if (edge) await app.db.deleteFrom('web_hook_logs').where('web_hook_id', '=', id).where('id', '<=', edge.id).execute();
    }
  }
}

/** 2xx and 3xx count as success (GitLab's response.success? || redirection?). */
export function succeeded(o: Outcome): boolean {
  return typeof o.status === 'number' && o.status >= 200 && o.status < 400;
}

/** GitLab 18's enable! and backoff!: success clears the failures, a failure counts and from the 4th rests the hook. */
async function recordOutcome(app: AppContext, hookId: number, o: Outcome): Promise<void> {
  const row = await app.db.selectFrom('web_hooks').select(['recent_failures', 'disabled_until']).where('id', '=', hookId).executeTakeFirst();
  if (!row) return;
  if (succeeded(o)) {
    if (row.recent_failures === 0 && row.disabled_until === null) return;
    await app.db.updateTable('web_hooks').set({ recent_failures: 0, backoff_count: 0, disabled_until: null }).where('id', '=', hookId).execute();
  } else {
    if (row.recent_failures > PERMANENT_THRESHOLD) return;
    if (app.config.webhooks.autoDisable && alertStatus(app, row) !== 'executable') return;
    const failures = Math.min(row.recent_failures + 1, PERMANENT_THRESHOLD + 1);
    const disabledUntil = failures > TEMPORARY_THRESHOLD ? new Date(Date.now() + backoffMs(row.recent_failures)).toISOString() : row.disabled_until;
    await app.db.updateTable('web_hooks').set({ recent_failures: failures, disabled_until: disabledUntil }).where('id', '=', hookId).execute();
  }
  hooksChanged();
}

