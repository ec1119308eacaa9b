// Deploy tokens (GitLab's lib/api/deploy_tokens.rb): the instance list for administrators; a
// project's tokens for its Maintainers; a group's for its Maintainers to read and Owners to create
// and delete. Git over HTTP accepts them (src/git-http/credentials.ts); the REST API does not.
import type { FastifyInstance } from 'fastify';
import { apiError, forbidden, missingAttributes, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import {
  createDeployToken,
  DEPLOY_TOKEN_SCOPES,
  deleteDeployToken,
  deleteOwnerDeployTokens,
  deployTokenExpired,
  deployTokenScopes,
  deployTokensOf,
  deployTokenUsername,
  findDeployToken,
  type DeployTokenOwner,
  type ShownDeployToken,
} from '../../../services/deploy-tokens.js';
import { findGroup } from '../../../services/groups/lookup.js';
import { projectDeletionHooks } from '../../../services/projects/create.js';
import { findProject } from '../../../services/projects/lookup.js';
import { integerPathParam, pathParam } from '../repository/common.js';

/** Entities::DeployToken (and DeployTokenWithToken: `token` last, on creation only). */
export function presentDeployToken(row: ShownDeployToken, token?: string) {
  return {
    id: row.id,
    name: row.name,
    username: deployTokenUsername(row),
    expires_at: row.expires_at,
    scopes: deployTokenScopes(row),
    revoked: row.revoked === 1,
    expired: deployTokenExpired(row),
    ...(token === undefined ? {} : { token }),
  };
}

type Need = 'read' | 'manage';

/** read_deploy_token / create_deploy_token / destroy_deploy_token on a project: Maintainers and up. */
async function projectOwner(c: Ctx, _need: Need): Promise<DeployTokenOwner> {
  const found = await findProject(c, pathParam(c, 'id'));
  if (found.access < AccessLevel.MAINTAINER && !c.user?.is_admin) throw forbidden();
  return { kind: 'project', id: found.project.id };
}

/** On a group: Maintainers read, Owners create and delete. */
async function groupOwner(c: Ctx, need: Need): Promise<DeployTokenOwner> {
  const found = await findGroup(c, pathParam(c, 'id'));
  if (found.access < (need === 'read' ? AccessLevel.MAINTAINER : AccessLevel.OWNER)) throw forbidden();
  return { kind: 'group', id: found.group.id };
}

/** `token_id` is an Integer parameter (Grape's 400), checked before the owner is looked up. */
function tokenIdParam(c: Ctx): number {
  return integerPathParam(c, 'token_id');
}

/** `scopes`: an array, or a comma-separated string (Grape's CommaSeparatedToArray), each one of AVAILABLE_SCOPES. */
function scopesParam(c: Ctx): string[] {
  const list = c.params.stringArray('scopes', { comma: true }) ?? [];
  if (list.some((s) => !(DEPLOY_TOKEN_SCOPES as readonly string[]).includes(s))) throw paramError('scopes does not have a valid value');
  return list;
}

const notFound = () => apiError(404, '404 Not found');

function register(app: FastifyInstance, prefix: string, ownerOf: (c: Ctx, need: Need) => Promise<DeployTokenOwner>): void {
  // GET /projects/:id/deploy_tokens, GET /groups/:id/deploy_tokens
  route(app, 'GET', prefix, async function listDeployTokens(c) {
    const active = c.params.bool('active') ?? false;
    const owner = await ownerOf(c, 'read');
    const rows = await paginateOffset(c, deployTokensOf(c.app.db, owner, active));
    return rows.map((r) => presentDeployToken(r));
  });

  // GET …/deploy_tokens/:token_id
  route(app, 'GET', `${prefix}/:token_id`, async function getDeployToken(c) {
    const id = tokenIdParam(c);
    const owner = await ownerOf(c, 'read');
    const row = await findDeployToken(c.app.db, owner, id);
    if (!row) throw notFound();
    return presentDeployToken(row);
  });

  // POST …/deploy_tokens
  route(app, 'POST', prefix, async function createDeployTokenRoute(c) {
    const missing = ['name', 'scopes'].filter((n) => !c.params.has(n));
    if (missing.length) throw missingAttributes(missing);
    const name = c.params.string('name') ?? '';
    const scopes = scopesParam(c);
    const expiresAt = c.params.datetime('expires_at') ?? null;
    const username = c.params.string('username');
    const owner = await ownerOf(c, 'manage');
    const creator = c.requireUser();
    const made = await createDeployToken(c.app, owner, creator.id, {
      name,
      scopes,
      expiresAt,
      // params[:username].presence: a blank username is the default one.
      username: username === undefined || username.trim() === '' ? null : username,
    });
    return presentDeployToken(made.row, made.token);
  });

  // DELETE …/deploy_tokens/:token_id
  route(app, 'DELETE', `${prefix}/:token_id`, async function deleteDeployTokenRoute(c) {
    const id = tokenIdParam(c);
    const owner = await ownerOf(c, 'manage');
    if (!(await deleteDeployToken(c.app, owner, id))) throw notFound();
  });
}

let hooked = false;

export function registerDeployTokenRoutes(app: FastifyInstance): void {
  // GET /deploy_tokens: every token of the instance, for administrators.
  route(app, 'GET', '/deploy_tokens', async function listAllDeployTokens(c) {
    c.requireAdmin();
    const rows = await paginateOffset(c, deployTokensOf(c.app.db, null, c.params.bool('active') ?? false));
    return rows.map((r) => presentDeployToken(r));
  });
  register(app, '/projects/:id/deploy_tokens', projectOwner);
  register(app, '/groups/:id/deploy_tokens', groupOwner);
  if (hooked) return;
  hooked = true;
  projectDeletionHooks.push(async function deleteProjectDeployTokens(hookApp, trx, projectId) {
    await deleteOwnerDeployTokens(hookApp, trx, 'project', [projectId]);
  });
}
