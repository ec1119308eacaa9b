// Who is talking to git over HTTP (spec document 1 §5 rule 5): HTTP Basic with any username and a
// token as the password: a personal access token, or an OAuth access token with a repository
// scope; or a deploy token with its own username. Missing credentials are anonymous; wrong ones are
// refused, even for public projects.
import type { IncomingHttpHeaders } from 'node:http';
import type { AppContext } from '../context.js';
import type { UserRow } from '../db/repositories/users.js';
import { resolveToken } from '../http/auth.js';
import { ApiError } from '../http/errors.js';
import { resolveDeployToken, type DeployTokenRow } from '../services/deploy-tokens.js';

export type GitCaller =
  | { kind: 'anonymous' }
  | { kind: 'invalid' }
  | { kind: 'user'; user: UserRow; scopes: string[] }
  /** A project's or group's deploy token (read-only; GitLab's deploy_token_check). */
  | { kind: 'deploy_token'; token: DeployTokenRow; scopes: string[] };

/** Scopes that allow fetching, and those that allow pushing. */
export const READ_SCOPES = ['api', 'read_repository', 'write_repository'];
export const WRITE_SCOPES = ['api', 'write_repository'];

function basicCredentials(headers: IncomingHttpHeaders): { username: string; password: string } | null | 'malformed' {
  const header = headers.authorization;
  if (!header) return null;
  const m = /^basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return 'malformed';
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export async function identifyGitCaller(app: AppContext, headers: IncomingHttpHeaders): Promise<GitCaller> {
  const creds = basicCredentials(headers);
  if (creds === null) return { kind: 'anonymous' };
  if (creds === 'malformed' || creds.password === '') return { kind: 'invalid' };
  // Deploy tokens carry GitLab's gldt- prefix, which no personal or OAuth token has.
  const deploy = await resolveDeployToken(app, creds.username, creds.password);
  if (deploy) return { kind: 'deploy_token', token: deploy, scopes: JSON.parse(deploy.scopes) as string[] };
  try {
    // 'bearer' tries an OAuth token first, then a personal access token.
    const resolved = await resolveToken(app, creds.password, 'bearer');
    if (!resolved) return { kind: 'invalid' };
    return { kind: 'user', user: resolved.user, scopes: resolved.token.scopes };
  } catch (err) {
    // Revoked, expired, or a blocked owner: the same refusal as an unknown token.
    if (err instanceof ApiError) return { kind: 'invalid' };
    throw err;
  }
}

export function hasScope(caller: GitCaller, allowed: string[]): boolean {
  return (caller.kind === 'user' || caller.kind === 'deploy_token') && caller.scopes.some((s) => allowed.includes(s));
}
