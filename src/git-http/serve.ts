// Streams one smart-HTTP exchange through `git http-backend`, like serveGitHttp in src/git, but
// holds the end of the response until `beforeEnd` ran: after a push, the default branch and the
// ref listeners are updated before the client sees the push finish, so its next request (an API
// call, a clone) sees them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { finished } from 'node:stream/promises';
import { gitHttpBackend, type GitHttpOptions } from '../git/index.js';

export interface ServeOptions {
  repoPath: string;
  pathInfo: string;
  remoteUser?: string;
  /** Extra environment for git (the pre-receive hook's configuration and policy on a push). */
  env?: Record<string, string>;
  /** Runs after git exited, before the response ends; only when git exited 0. */
  beforeEnd?: () => Promise<void>;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export async function serveGit(req: IncomingMessage, res: ServerResponse, opts: ServeOptions): Promise<{ status: number; exitCode: number | null; stderr: string }> {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const options: GitHttpOptions = {
    repoPath: opts.repoPath,
    pathInfo: opts.pathInfo,
    method: req.method ?? 'GET',
    query: q === -1 ? '' : url.slice(q + 1),
    body: hasBody ? req : null,
    enableReceivePack: true,
  };
  const optional: Partial<GitHttpOptions> = {
    contentType: header(req, 'content-type'),
    contentEncoding: header(req, 'content-encoding'),
    protocol: header(req, 'git-protocol'),
    remoteAddr: req.socket.remoteAddress,
    remoteUser: opts.remoteUser,
    env: opts.env,
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (options as unknown as Record<string, unknown>)[key] = value;
  }
  const backend = gitHttpBackend(options);
  res.on('close', () => {
    if (!res.writableFinished) backend.abort();
  });
  // A client gone before git started (its 'close' already past, while the request was being
  // authorised): git would wait for a body that never ends.
  if (res.destroyed || req.destroyed) backend.abort();
  const status = await backend.status;
  const headers = await backend.headers;
  if (!res.headersSent && !res.destroyed) res.writeHead(status, headers);
  backend.stream.pipe(res, { end: false });
  const [result] = await Promise.all([backend.done, finished(backend.stream).catch(() => undefined)]);
  if (result.code === 0 && opts.beforeEnd) await opts.beforeEnd();
  if (!res.destroyed) res.end();
  await finished(res).catch(() => undefined);
  return { status, exitCode: result.code, stderr: result.stderr };
}
