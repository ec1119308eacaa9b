/**
 * Git smart HTTP through `git http-backend` (CGI). The server authenticates
 * and authorises; this module only maps a request onto the CGI environment,
 * streams the body in, parses the CGI response headers and streams the
 * rest out. gzip request bodies are handed to git as-is (http-backend
 * inflates them itself when HTTP_CONTENT_ENCODING says gzip).
 *
 * With Fastify: register a pass-through content type parser for
 * `application/x-git-upload-pack-request` and
 * `application/x-git-receive-pack-request` (so the body stays unread), then
 * `reply.hijack()` and call `serveGitHttp(request.raw, reply.raw, ...)`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basename, dirname, resolve } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { GitError } from './errors.js';
import { spawnGit } from './exec.js';

export { readRefs, diffRefs, type RefChange } from './refs.js';

export type GitService = 'info-refs' | 'upload-pack' | 'receive-pack';

export interface ParsedGitPath {
  /** 'group/sub/project', without '.git' */
  repoPath: string;
  service: GitService;
  /** What to pass as `pathInfo`: '/info/refs', '/git-upload-pack' or '/git-receive-pack'. */
  pathInfo: string;
  /**
   * The RPC the request serves: for info/refs the `?service=` asked for
   * (null = dumb protocol, which we do not serve), else the service itself.
   * Authorisation hinges on it: 'receive-pack' needs write access.
   */
  rpc: 'upload-pack' | 'receive-pack' | null;
}

const SUFFIXES: Array<[string, GitService]> = [
  ['/info/refs', 'info-refs'],
  ['/git-upload-pack', 'upload-pack'],
  ['/git-receive-pack', 'receive-pack'],
];

// GitLab namespace/project path rules: letters, digits, '_', '-', '.'; no leading '-'.
const SEGMENT_RE = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;

function rpcFromQuery(query: string): 'upload-pack' | 'receive-pack' | null {
  // Exactly one: URLSearchParams reads the first value but git http-backend (CGI) the last, so
  // `?service=git-upload-pack&service=git-receive-pack` would be authorised as one and run as the other.
  const services = new URLSearchParams(query).getAll('service');
  if (services.length !== 1) return null;
  const service = services[0];
  if (service === 'git-upload-pack') return 'upload-pack';
  if (service === 'git-receive-pack') return 'receive-pack';
  return null;
}

/**
 * Recognises smart-HTTP URLs: `/<ns>/.../<project>[.git]/info/refs`,
 * `/…/git-upload-pack`, `/…/git-receive-pack` (query string allowed).
 */
export function parseGitPath(urlPath: string): ParsedGitPath | null {
  const q = urlPath.indexOf('?');
  const path = q === -1 ? urlPath : urlPath.slice(0, q);
  const query = q === -1 ? '' : urlPath.slice(q + 1);
  const match = SUFFIXES.find(([suffix]) => path.endsWith(suffix));
  if (!match) return null;
  const [suffix, service] = match;
  let repo = path.slice(0, path.length - suffix.length);
  if (!repo.startsWith('/')) return null;
  repo = repo.slice(1);
  if (repo.endsWith('.git')) repo = repo.slice(0, -4);
  if (repo.length === 0) return null;
  const segments: string[] = [];
  for (const raw of repo.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (!SEGMENT_RE.test(segment) || segment === '.' || segment === '..') return null;
    if (segment.endsWith('.git') || segment.endsWith('.atom')) return null;
    segments.push(segment);
  }
  const rpc = service === 'info-refs' ? rpcFromQuery(query) : service;
  return { repoPath: segments.join('/'), service, pathInfo: suffix, rpc };
}

export interface GitHttpOptions {
  /** Absolute path of the bare repository on disk. */
  repoPath: string;
  pathInfo: string;
  method: string;
  query: string;
  contentType?: string;
  contentEncoding?: string;
  remoteUser?: string;
  remoteAddr?: string;
  /** The request body (the raw request); null/undefined for GET. */
  body?: NodeJS.ReadableStream | null;
  /** Value of the Git-Protocol request header (protocol v2). */
  protocol?: string;
  /** Force-enable receive-pack even if the repository config does not. */
  enableReceivePack?: boolean;
  /** Extra environment for git (e.g. GIT_HTTP_MAX_REQUEST_BUFFER). */
  env?: Record<string, string>;
}

export interface GitHttpResponse {
  /** CGI status (200 unless git said otherwise; 500 if git died before sending headers). */
  status: Promise<number>;
  headers: Promise<Record<string, string>>;
  /** The response body after the CGI headers. */
  stream: Readable;
  /** Resolves when git exited: exit code (null if killed) and the tail of its stderr (for logs). */
  done: Promise<{ code: number | null; stderr: string }>;
  /** Kills git, e.g. when the client went away. */
  abort(): void;
}

const ALLOWED_PATH_INFO = new Set(SUFFIXES.map(([suffix]) => suffix));
const HEADER_LIMIT = 64 * 1024;
const STDERR_TAIL = 8 * 1024;

/** The Git-Protocol header ends up in git's environment: keep it to its documented charset. */
function sanitizeProtocol(value: string | undefined): string | undefined {
  if (!value || value.length > 256 || !/^[A-Za-z0-9=:._-]+$/.test(value)) return undefined;
  return value;
}

function parseCgiHeaders(block: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (key.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[key] = value;
  }
  return { status, headers };
}

/** Runs `git http-backend` for one request. Never throws asynchronously; failures become status 500. */
export function gitHttpBackend(opts: GitHttpOptions): GitHttpResponse {
  if (!ALLOWED_PATH_INFO.has(opts.pathInfo)) throw new GitError('invalid_path', `unsupported git HTTP path: ${opts.pathInfo}`);
  const repo = resolve(opts.repoPath);
  const env: Record<string, string | undefined> = Object.assign({}, opts.env, {
    GIT_PROJECT_ROOT: dirname(repo),
    PATH_INFO: `/${basename(repo)}${opts.pathInfo}`,
    REQUEST_METHOD: opts.method.toUpperCase(),
    QUERY_STRING: opts.query,
    CONTENT_TYPE: opts.contentType ?? '',
    GIT_HTTP_EXPORT_ALL: '1',
    REMOTE_USER: opts.remoteUser,
    REMOTE_ADDR: opts.remoteAddr ?? '127.0.0.1',
    GIT_PROTOCOL: sanitizeProtocol(opts.protocol),
    HTTP_CONTENT_ENCODING: opts.contentEncoding,
    // No CONTENT_LENGTH: git then reads the body to its end. Told a length, git 2.39's http-backend
    // loops forever at 100 % CPU on an end-of-file that comes before it (a client or a server that
    // dies in the middle of a push); without one, git fails the push and exits.
  });
  // safe.directory on the command line: the server may run as another user than the repository owner.
  const args = ['-c', `safe.directory=${repo}`];
  if (opts.enableReceivePack) args.push('-c', 'http.receivepack=true');
  args.push('http-backend');

  const stream = new PassThrough();
  let resolveHead!: (head: { status: number; headers: Record<string, string> }) => void;
  const head = new Promise<{ status: number; headers: Record<string, string> }>((r) => { resolveHead = r; });
  let resolveDone!: (result: { code: number | null; stderr: string }) => void;
  const done = new Promise<{ code: number | null; stderr: string }>((r) => { resolveDone = r; });
  let stderr = '';
  let headDone = false;
  let pending = Buffer.alloc(0);

  function finishHead(status: number, headers: Record<string, string>): void {
    if (headDone) return;
    headDone = true;
    resolveHead({ status, headers });
  }

  // cwd '/': http-backend only uses GIT_PROJECT_ROOT, and a missing repository must give its 404, not a spawn error.
  const child = spawnGit(args, { cwd: '/', env });
  child.on('error', (err) => {
    stderr += String(err.message);
    finishHead(500, {});
    stream.end();
    resolveDone({ code: null, stderr });
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  child.stdout!.on('data', (chunk: Buffer) => {
    if (headDone) {
      // Respect backpressure from the client connection.
      if (!stream.write(chunk)) {
        child.stdout!.pause();
        stream.once('drain', () => child.stdout!.resume());
      }
      return;
    }
    pending = Buffer.concat([pending, chunk]);
    let end = pending.indexOf('\r\n\r\n');
    let sepLen = 4;
    if (end === -1) {
      end = pending.indexOf('\n\n');
      sepLen = 2;
    }
    if (end === -1) {
      if (pending.length > HEADER_LIMIT) {
        finishHead(500, {});
        child.kill('SIGKILL');
      }
      return;
    }
    const parsed = parseCgiHeaders(pending.toString('latin1', 0, end));
    finishHead(parsed.status, parsed.headers);
    const rest = pending.subarray(end + sepLen);
    pending = Buffer.alloc(0);
    if (rest.length > 0) stream.write(rest);
  });
  child.on('close', (code) => {
    finishHead(500, {}); // no-op if headers were already parsed
    stream.end();
    resolveDone({ code, stderr });
  });

  // Git may stop reading early (errors, or a fetch that is already satisfied): EPIPE is expected.
  child.stdin!.on('error', () => {});
  if (opts.body) {
    opts.body.on('error', () => child.kill('SIGKILL'));
    opts.body.pipe(child.stdin!);
  } else {
    child.stdin!.end();
  }

  return {
    status: head.then((h) => h.status),
    headers: head.then((h) => h.headers),
    stream,
    done,
    abort(): void {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export interface ServeGitOptions {
  /** Absolute path of the bare repository. */
  repoPath: string;
  pathInfo: string;
  remoteUser?: string;
  enableReceivePack?: boolean;
  /** Body stream if not `req` itself (e.g. a framework's payload stream). */
  body?: NodeJS.ReadableStream;
  env?: Record<string, string>;
}

/**
 * Serves one smart-HTTP request on a node:http response. Resolves with the
 * HTTP status and git's exit code once the response is finished or the
 * client went away (git is then killed). Never rejects.
 */
export async function serveGitHttp(req: IncomingMessage, res: ServerResponse, opts: ServeGitOptions): Promise<{ status: number; exitCode: number | null; stderr: string }> {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const options: GitHttpOptions = {
    repoPath: opts.repoPath,
    pathInfo: opts.pathInfo,
    method: req.method ?? 'GET',
    query: q === -1 ? '' : url.slice(q + 1),
    body: req.method === 'GET' || req.method === 'HEAD' ? null : (opts.body ?? req),
  };
  const optional = {
    contentType: headerValue(req, 'content-type'),
    contentEncoding: headerValue(req, 'content-encoding'),
    protocol: headerValue(req, 'git-protocol'),
    remoteAddr: req.socket.remoteAddress,
    remoteUser: opts.remoteUser,
    env: opts.env,
    enableReceivePack: opts.enableReceivePack,
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (options as unknown as Record<string, unknown>)[key] = value;
  }
  let backend: GitHttpResponse;
  try {
    backend = gitHttpBackend(options);
  } catch (err) {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found\n');
    return { status: 404, exitCode: null, stderr: (err as Error).message };
  }
  res.on('close', () => {
    if (!res.writableFinished) backend.abort();
  });
  // A client gone before git started: its 'close' is past, and git would wait for the body forever.
  if (res.destroyed || req.destroyed) backend.abort();
  const status = await backend.status;
  const headers = await backend.headers;
  if (!res.headersSent && !res.destroyed) res.writeHead(status, headers);
  backend.stream.pipe(res);
  const [result] = await Promise.all([backend.done, finished(res).catch(() => undefined)]);
  return { status, exitCode: result.code, stderr: result.stderr };
}
