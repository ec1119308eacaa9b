// buildApp(config) -> a ready Fastify instance (no listen; tests and main.ts call listen).
import multipart from '@fastify/multipart';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { rewriteWebAddress } from './http/web-addresses.js';
import { headAsGet } from './http/route.js';
import { registerApi } from './api/v4/index.js';
import { bootstrap } from './bootstrap.js';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { createDatabase, ping, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrations/index.js';
import { ApiError, OAuthError } from './http/errors.js';
import { hasNullByte, nestFields, parseNested, rawHasNullByte } from './http/params.js';
import { createRateLimiter } from './http/rate-limit.js';
import { ResponseCache } from './http/response-cache.js';
import { WorkerRefresher } from './http/refresher.js';
import { branchesStillAt } from './services/merge-requests/git-ops.js';
import { sendInBurst } from './http/write-burst.js';
import { extraModules } from './modules.js';

export interface BuildOptions {
  /** Use this database instead of opening one from the config (tests). */
  database?: Database;
  /** Fastify logger setting; defaults to the configured level. */
  logger?: boolean | object;
  /**
   * The response refresher's app (a worker thread, http/refresher.ts): the same routes on a
   * read-only database, no store of its own, nothing run at start-up (the server's app did it).
   */
  refresher?: boolean;
}

const SECRET_PARAMS = new Set([
  'private_token', 'access_token', 'token', 'client_secret', 'code', 'refresh_token', 'device_code', 'password',
  // webhooks: a hook's URL, its variables' and headers' values
  'url', 'value', 'url_variables', 'custom_headers',
]);

function decodedKey(rawKey: string): string {
  try {
    return decodeURIComponent(rawKey.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return rawKey.toLowerCase();
  }
}

/**
 * Request log lines never carry secrets from the query string. Names are compared decoded, since
 * `private%5Ftoken=` authenticates exactly like `private_token=`.
 */
/** A secret's parameter, also nested (`url_variables[0][value]`: by its name or its last key). */
function secretKey(key: string): boolean {
  if (SECRET_PARAMS.has(key)) return true;
  const open = key.indexOf('[');
  if (open < 0) return false;
  const last = /\[([^\]]*)\]$/.exec(key)?.[1];
  return SECRET_PARAMS.has(key.slice(0, open)) || (last !== undefined && SECRET_PARAMS.has(last));
}

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const pairs = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    return secretKey(decodedKey(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=[FILTERED]` : pair;
  });
  return `${url.slice(0, q + 1)}${pairs.join('&')}`;
}

/** Health checks show no data: they never wait for a refresh round (a load balancer must get its answer). */
const HEALTH_PATHS = new Set(['/-/health', '/-/liveness', '/-/readiness']);

function isApiPath(url: string): boolean {
  return url.startsWith('/api/');
}

function sendApiError(err: ApiError, reply: FastifyReply): FastifyReply {
  reply.code(err.status).headers(err.headers);
  if (typeof err.body === 'string') return reply.type('text/plain; charset=utf-8').send(err.body);
  return reply.type('application/json').send(JSON.stringify(err.body));
}

function errorHandler(this: FastifyInstance, err: unknown, req: FastifyRequest, reply: FastifyReply) {
  if (err instanceof ApiError) return sendApiError(err, reply);
  if (err instanceof OAuthError) {
    reply.code(err.status).headers({ 'Cache-Control': 'no-store', Pragma: 'no-cache', ...err.headers });
    return reply.type('application/json').send(JSON.stringify({ error: err.error, error_description: err.description }));
  }
  const e = err as { statusCode?: number; code?: string; message?: string; stack?: string };
  // A malformed multipart body fails inside busboy with a plain Error: the client's fault, not ours.
  const badMultipart = !e.statusCode && /busboy|dicer/.test(e.stack ?? '') && req.isMultipart();
  const status = badMultipart ? 400 : e.statusCode && e.statusCode >= 400 && e.statusCode < 500 ? e.statusCode : 500;
  if (status === 500) {
    req.log.error({ err }, 'unhandled error');
    return sendApiError(new ApiError(500, { message: '500 Internal Server Error' }), reply);
  }
  if (status === 413) return sendApiError(new ApiError(413, { message: '413 Request Entity Too Large' }), reply);
  if (status === 415) return sendApiError(new ApiError(415, { message: '415 Unsupported Media Type' }), reply);
  if (status === 404) return sendApiError(new ApiError(404, { error: '404 Not Found' }), reply);
  // Body parse failures and other client errors, worded as Grape does.
  const detail = (e.message ?? 'Bad request').replace(/^Body is not valid JSON but content-type is set to 'application\/json'/, 'Invalid JSON body');
  return sendApiError(new ApiError(status, { error: status === 400 ? `400 Bad request - ${detail}`.slice(0, 500) : detail }), reply);
}

// A Buffer, so that Fastify leaves the content type as set (it adds a charset to a JSON string).
const BAD_URL_BODY = Buffer.from(JSON.stringify({ message: '400 Bad request - the path is not valid URL encoding' }));

function badUrl(err: Error & { code?: string }, req: FastifyRequest, reply: FastifyReply) {
  if (err.code !== 'FST_ERR_BAD_URL') return reply.send(err);
  if (!isApiPath(req.url)) return reply.code(400).type('text/plain; charset=utf-8').send('Bad Request\n');
  // No route matched, so the onSend hooks in buildApp do not run: their headers are set here.
  setApiHeaders(reply);
  return reply.code(400).type('application/json').send(BAD_URL_BODY);
}

/** The headers GitLab's API sends with every response. */
function setApiHeaders(reply: FastifyReply): void {
  reply.header('X-Frame-Options', 'SAMEORIGIN');
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Cache-Control', reply.getHeader('cache-control') ?? 'max-age=0, private, must-revalidate');
}

/** Fastify's compilers for route schemas, which Labwright does not declare (see buildApp). */
function noRouteSchemas(): never {
  throw new Error('Labwright routes declare no Fastify schema: validate in the handler, present with api/v4/schemas');
}

/** Multipart bodies: fields as values, a file field as a Buffer (one file, 20 MiB at most). */
async function registerMultipart(app: FastifyInstance): Promise<void> {
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    // Every GitLab route that takes a file takes one.
    limits: { fileSize: 20 * 1024 * 1024, files: 1 },
    async onFile(this: FastifyRequest, part) {
      await part.toBuffer();
      (this.lwUploadNames ??= {})[part.fieldname] = part.filename;
    },
  });
}

export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<FastifyInstance & { lw: AppContext }> {
  const refresher = opts.refresher === true;
  // The refresher reads PostgreSQL in pinned snapshots, which a cache of results from other moments would defeat.
  const database =
    opts.database ??
    createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, readCache: config.readCache && !(refresher && config.databaseUrl), readOnly: refresher });
  const reposDir = join(config.dataDir, 'repositories');
  mkdirSync(reposDir, { recursive: true });

  const app = Fastify({
    logger: opts.logger ?? {
      level: config.logLevel,
      serializers: {
        req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
      },
    },
    trustProxy: config.trustProxy,
    bodyLimit: 50 * 1024 * 1024,
    // Addresses under a project's full path (git over HTTP, web archives, older upload links) are
    // routed at fixed prefixes (http/web-addresses.ts). HEAD goes to the GET route (http/route.ts).
    rewriteUrl: (req: IncomingMessage) => {
      headAsGet(req);
      return req.url ? (rewriteWebAddress(req.url) ?? req.url) : '/';
    },
    exposeHeadRoutes: false,
    // A path whose percent-encoding does not decode (`%FF`, `%zz`) fails in the router, before any
    // hook: answer it as the null-byte check does rather than with Fastify's own body.
    frameworkErrors: badUrl,
    // Long URL-encoded ids must reach the router; the 414 check below bounds the query string.
    routerOptions: { maxParamLength: 4096, ignoreDuplicateSlashes: false, querystringParser: (s: string) => parseNested(s) },
    serverFactory: (handler: Parameters<typeof createServer>[1]) => createServer({ maxHeaderSize: 256 * 1024 }, handler),
    logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' }),
    // No route gives Fastify a schema (api/v4/schemas/registry.ts says why), so its validator and
    // serializer compilers (ajv, fast-json-stringify: about 60 ms of start-up to load) are never
    // needed; these stand in for them and say so if a route ever declares one.
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
  } as never) as unknown as FastifyInstance;

  const rateLimiter = await createRateLimiter(config.rateLimit, refresher ? null : config.redisUrl);
  const worker = config.responseCache && !refresher && config.responseRefresh !== 'off' ? new WorkerRefresher(config, app.log, config.responseRefresh) : null;
  const responses = config.responseCache && !refresher ? new ResponseCache(database, { refresher: worker, checkBranches: (branches) => () => branchesStillAt(branches) }) : null;
  const ctx: AppContext = { config, database, db: database.db, rateLimiter, responses, reposDir, log: app.log, onClose: [], routes: [], lastBase: null };
  if (refresher) ctx.refresh = { made: new Map() };
  if (worker) {
    ctx.refresher = worker;
    ctx.onClose.push(() => worker.close());
  }
  app.decorate('lw', ctx);
  // printRoutes loses the static part before a wildcard (`/:tag/downloads/*` prints as `/:tag*`).
  app.addHook('onRoute', function recordRoute(r) {
    for (const method of [r.method].flat()) ctx.routes.push({ method, url: r.url });
  });

  // An empty JSON body is an empty hash, as Rack reads it (clients send `Content-Type: application/json`
  // on body-less POSTs such as block/unblock); prototype poisoning is still refused.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, function jsonOrEmpty(req, body, done) {
    if (typeof body === 'string' && body.trim() === '') return done(null, {});
    return defaultJson(req, body as string, done);
  });

  // Form bodies are parsed like query strings (Rack's nested forms).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseNested(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // File fields become Buffers in the body; their names are kept on the request (wiki attachments).
  // @fastify/multipart reads globalThis.FormData as it is registered (for req.formData(), which
  // nothing here uses), and Node's first read of it loads its fetch implementation: about 30 ms of
  // start-up. It is hidden for that moment only.
  const formData = Object.getOwnPropertyDescriptor(globalThis, 'FormData');
  Object.defineProperty(globalThis, 'FormData', { value: undefined, configurable: true, writable: true });
  try {
    await registerMultipart(app);
  } finally {
    if (formData) Object.defineProperty(globalThis, 'FormData', formData);
  }
  // One preValidation hook for every request (callback-style: an async hook costs a promise per
  // request). Multipart fields get the same Rack nesting as query strings and form bodies
  // (`scopes[]`). GITLAB-COMPAT: GitLab's HandleNullBytes middleware refuses NUL in any query, form
  // or multipart parameter with a plain-text 400 on every route; we answer it in JSON, and refuse
  // it in JSON bodies too (GitLab lets those through; binary file content goes as base64 in both).
  // NUL cannot be stored in PostgreSQL text, so it stops here for the API, OAuth, the pages and git
  // alike.
  app.addHook('preValidation', function prepareParams(req, _reply, done) {
    if (req.body && typeof req.body === 'object' && req.isMultipart()) req.body = nestFields(req.body as Record<string, unknown>);
    const q = req.url.indexOf('?');
    const rawNul = (q >= 0 && rawHasNullByte(req.url.slice(q + 1))) || (req.lwRawForm !== undefined && rawHasNullByte(req.lwRawForm));
    if (rawNul || hasNullByte(req.query) || hasNullByte(req.params) || hasNullByte(req.body)) {
      done(new ApiError(400, { message: '400 Bad request - parameters must not contain null bytes' }));
      return;
    }
    done();
  });

  app.addHook('onRequest', function guardQueryLength(req, reply, done) {
    const q = req.url.indexOf('?');
    if (q >= 0 && req.url.length - q - 1 > config.maxQueryLength) {
      // Answered here: done() is not called, so the request goes no further.
      reply.code(414).type('application/json').send(JSON.stringify({ message: '414 Request-URI Too Large' }));
      return;
    }
    done();
  });

  // Exactly `application/json` on every JSON response (python-gitlab and gitbeaker compare it). The
  // response then leaves, with others in a burst while responses come quickly (src/http/write-burst.ts).
  app.addHook('onSend', function exactJsonType(req, reply, payload, done) {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json') && type !== 'application/json') {
      reply.header('content-type', 'application/json');
    }
    if (isApiPath(req.url)) setApiHeaders(reply);
    // Nothing but a response from the store as it is may tell of a write the store does not show
    // yet: the others wait for the refresh round (http/response-cache.ts, covered).
    const wait = responses && !req.lwFromStore && !HEALTH_PATHS.has(req.url) ? responses.covered() : null;
    if (wait) wait.then(() => sendInBurst(req, done, payload), (err: Error) => done(err));
    else sendInBurst(req, done, payload);
  });

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(function notFoundRoute(req, reply) {
    if (req.url.startsWith('/api/v3/')) {
      return sendApiError(new ApiError(410, { error: 'API V3 is no longer supported. Use API V4 instead.' }), reply);
    }
    return sendApiError(new ApiError(404, { error: '404 Not Found' }), reply);
  });

  // GET /-/health, /-/liveness, /-/readiness
  app.get('/-/health', async (_req, reply) => reply.type('text/plain; charset=utf-8').send('GitLab OK'));
  app.get('/-/liveness', async () => ({ status: 'ok' }));
  app.get('/-/readiness', async (_req, reply) => {
    const ok = await ping(database);
    reply.code(ok ? 200 : 503);
    return { status: ok ? 'ok' : 'failed', master_check: [{ status: ok ? 'ok' : 'failed' }], db_check: [{ status: ok ? 'ok' : 'failed' }] };
  });

  await registerApi(app);
  for (const mod of extraModules) await mod(app);

  app.addHook('onClose', async () => {
    // LABWRIGHT_QUERY_STATS=1 (profiling): what the response store did, beside the SQL statistics.
    if (process.env.LABWRIGHT_QUERY_STATS && responses) process.stderr.write(`[responses] ${JSON.stringify(responses.stats())}\n`);
    responses?.close();
    for (const fn of ctx.onClose) await fn();
    await rateLimiter.close();
    if (!opts.database) await database.close();
  });

  if (!refresher) {
    await migrateToLatest(database);
    await bootstrap(ctx);
  }
  worker?.serverReady();
  return app as FastifyInstance & { lw: AppContext };
}
