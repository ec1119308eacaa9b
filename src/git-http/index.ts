// Git over HTTP (smart protocol) at `<base>/<full_path>.git/...` (the `.git` may be left out):
// info/refs, git-upload-pack and git-receive-pack through `git http-backend`. The pack bodies are
// never buffered: a pass-through content type parser leaves the request stream unread and the
// handler hijacks the reply and pipes both ways; gzip bodies are inflated by git itself.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseGitPath, readRefs, diffRefs, type ParsedGitPath } from '../git/index.js';
import { ApiError } from '../http/errors.js';
import { adoptDefaultBranch } from '../services/repository/default-branch.js';
import { openRepository } from '../services/repository/project-repo.js';
import { notifyRefChanges } from '../services/repository/ref-hooks.js';
import { authorizeGit, authorizeSnippetGit } from './authorize.js';
import { identifyGitCaller } from './credentials.js';
import { serveGit, type ServeOptions } from './serve.js';
import { pushPolicy } from './push-policy.js';
import { preparePush, type PreparedPush, type PushPolicy } from '../git/pre-receive-hook.js';
import { baseUrl } from '../http/route.js';
import { addressAsSent, GIT_HTTP_PREFIX } from '../http/web-addresses.js';
import { deployTokenUsername } from '../services/deploy-tokens.js';
import { afterWikiPush, wikiRepository } from '../services/wikis.js';
import { refreshSnippetFiles, SNIPPET_MAX_FILES, SNIPPET_SIZE_LIMIT, snippetRepoPath } from '../services/snippets.js';

const PACK_TYPES = ['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'];

function sendText(reply: FastifyReply, status: number, message: string, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(status).headers(headers).type('text/plain; charset=utf-8').send(`${message}\n`);
}

function expectedContentType(parsed: ParsedGitPath): string | null {
  if (parsed.service === 'upload-pack') return 'application/x-git-upload-pack-request';
  if (parsed.service === 'receive-pack') return 'application/x-git-receive-pack-request';
  return null;
}

/** After a push: adopt a default branch for an empty project, and tell listeners what moved. */
async function afterPush(req: FastifyRequest, projectId: number, userId: number | null, before: Map<string, string>, repoPath: string) {
  const app = req.server.lw;
  const repo = await openRepository(app, projectId);
  const after = await readRefs(repoPath);
  const changes = diffRefs(before, after);
  const created = changes.filter((ch) => ch.before === null && ch.ref.startsWith('refs/heads/')).map((ch) => ch.ref.slice('refs/heads/'.length));
  await adoptDefaultBranch(app, projectId, repo, created);
  await app.db.updateTable('projects').set({ last_activity_at: new Date().toISOString() }).where('id', '=', projectId).execute();
  // The repository is measured again by a ref change listener (services/repository/repository-size.ts).
  await notifyRefChanges(app, projectId, changes, userId);
}

// GET <base>/<full_path>.git/info/refs?service=…, POST …/git-upload-pack, POST …/git-receive-pack
async function gitHttpRoute(req: FastifyRequest, reply: FastifyReply) {
  const app = req.server.lw;
  const parsed = parseGitPath(addressAsSent(req));
  // GET (and HEAD) for info/refs, POST for the two services, as the routes per suffix had it.
  if (parsed && (req.method === 'POST') !== (parsed.service !== 'info-refs')) return sendText(reply, 404, 'Not Found');
  if (!parsed) return sendText(reply, 404, 'Not Found');
  // The dumb protocol (info/refs without ?service=) is not served.
  if (!parsed.rpc) return sendText(reply, 403, 'Dumb HTTP protocol is not supported.');
  const wanted = expectedContentType(parsed);
  if (wanted && (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() !== wanted) {
    return sendText(reply, 415, 'Unsupported Media Type');
  }
  const caller = await identifyGitCaller(app, req.headers);
  // Same buckets as the API: a clone loop or a password-guessing client is throttled alike.
  try {
    if (caller.kind === 'user') await app.rateLimiter.hit('authenticated', `user:${caller.user.id}`);
    else if (caller.kind === 'deploy_token') await app.rateLimiter.hit('authenticated', `deploy_token:${caller.token.id}`);
    else await app.rateLimiter.hit('unauthenticated', `ip:${req.ip}`);
  } catch (err) {
    if (err instanceof ApiError) return sendText(reply, err.status, 'Retry later', err.headers);
    throw err;
  }
  const snippet = await authorizeSnippetGit(app, caller, parsed.repoPath, parsed.rpc);
  const decision = snippet ?? (await authorizeGit(app, caller, parsed.repoPath, parsed.rpc));
  if (!decision.allow) {
    const headers: Record<string, string> = decision.status === 401 ? { 'WWW-Authenticate': 'Basic realm="GitLab"' } : {};
    return sendText(reply, decision.status, decision.message, headers);
  }
  const pushing = parsed.service === 'receive-pack';
  const options: ServeOptions = { repoPath: '', pathInfo: parsed.pathInfo };
  if (caller.kind === 'user') options.remoteUser = caller.user.username;
  else if (caller.kind === 'deploy_token') options.remoteUser = deployTokenUsername(caller.token);
  const userId = caller.kind === 'user' ? caller.user.id : null;
  let policy: PushPolicy | null = null;
  if ('snippet' in decision) {
    const s = decision.snippet;
    options.repoPath = snippetRepoPath(app, s.id);
    // GitLab's SnippetCheck and PushFileCountCheck: the default branch only, updated, never created or deleted; 1 to 10 files of at most 50 MiB.
    if (pushing) {
      policy = { ...NO_PROTECTION, defaultBranch: s.default_branch, onlyBranches: [s.default_branch], onlyBranchesMessage: 'You can not create or delete branches.', maxFiles: SNIPPET_MAX_FILES, maxFileBytes: SNIPPET_SIZE_LIMIT };
      options.beforeEnd = () => refreshSnippetFiles(app, s).catch((err) => req.log.error({ err }, 'after-push processing failed'));
    }
  } else if (decision.wiki) {
    const projectId = decision.project.id;
    const repo = (await wikiRepository(app, projectId, true))!;
    options.repoPath = repo.path;
    if (pushing) {
      // No protected branches in a wiki: the policy only keeps the server's hidden refs out of reach.
      policy = { ...NO_PROTECTION, defaultBranch: null };
      const before = await readRefs(repo.path);
      options.beforeEnd = () => afterWikiPush(app, projectId, userId, before).catch((err) => req.log.error({ err }, 'after-push processing failed'));
    }
  } else {
    const repo = await openRepository(app, decision.project.id);
    options.repoPath = repo.path;
    if (pushing) {
      const before = await readRefs(repo.path);
      // Protected branches and tags: the pre-receive hook applies what this pusher may do.
      const user = caller.kind === 'user' ? caller.user : null;
      policy = await pushPolicy(app, baseUrl(app, req), decision, user, before);
      const projectId = decision.project.id;
      options.beforeEnd = () => afterPush(req, projectId, userId, before, repo.path).catch((err) => req.log.error({ err }, 'after-push processing failed'));
    }
  }
  if (pushing) {
    // The push's rows (merge requests, the default branch) are told of only once kept responses
    // show them (http/response-cache.ts, covered).
    const after = options.beforeEnd;
    options.beforeEnd = async () => {
      await after?.();
      await app.responses?.covered();
    };
  }
  let prepared: PreparedPush | null = null;
  if (policy) {
    try {
      prepared = await preparePush(app.config.dataDir, policy);
    } catch (err) {
      // Without a hook that runs, a push would go in unchecked: refuse it.
      req.log.error({ err }, 'git hooks unavailable; push refused');
      return sendText(reply, 503, 'Pushes are unavailable: the server cannot run its git hooks.');
    }
    options.env = prepared.env;
  }
  reply.hijack();
  try {
    const result = await serveGit(req.raw, reply.raw, options);
    await prepared?.cleanup();
    if (result.exitCode !== 0 && result.exitCode !== null) {
      req.log.warn({ status: result.status, exitCode: result.exitCode, stderr: result.stderr }, 'git http-backend failed');
    }
  } catch (err) {
    // The reply is hijacked: Fastify's error handler cannot answer for us any more.
    await prepared?.cleanup();
    req.log.error({ err }, 'git over HTTP failed');
    const res = reply.raw;
    if (!res.headersSent && !res.destroyed) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
    if (!res.destroyed) res.end();
  }
}

/** A push policy without protected refs (wikis, snippets). */
const NO_PROTECTION: PushPolicy = { defaultBranch: null, empty: false, emptyProtected: false, emptyPush: true, emptyMessage: '', canDeleteProtected: false, branches: [], tags: [] };

async function gitHttpPlugin(scope: FastifyInstance): Promise<void> {
  // Leave pack bodies unread: the handler streams the raw request into git.
  for (const type of PACK_TYPES) {
    scope.addContentTypeParser(type, function passThrough(_req, payload, done) {
      done(null, payload);
    });
  }
  // Every depth of groups at one prefix (http/web-addresses.ts rewrites `/<full_path>.git/…` there).
  for (const method of ['GET', 'POST'] as const) scope.route({ method, url: `${GIT_HTTP_PREFIX}/*`, handler: gitHttpRoute });
}

/** Registered from src/modules.ts. */
export async function registerGitHttp(app: FastifyInstance): Promise<void> {
  await app.register(gitHttpPlugin);
}
