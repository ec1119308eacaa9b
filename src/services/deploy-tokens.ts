// Deploy tokens (GitLab's DeployToken, ProjectDeployToken, GroupDeployToken): read-only credentials
// of a project, or of a group and every project below it, for git over HTTP. Labwright has no
// container or package registry: the registry scopes are kept and shown, and grant nothing here.
// Tokens are stored as keyed digests; the token itself is shown once, in the creation response.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { DeployTokensTable } from '../db/tables/deploy-tokens.js';
import type { DB } from '../db/types.js';
import { apiError } from '../http/errors.js';
import { lockOwnerRow, lockOwnerRows } from './owner-lock.js';
import { charLength, toSentence } from './ruby-text.js';
import { tokenDigest } from './secrets.js';
import { randomBytes } from 'node:crypto';

export type DeployTokenRow = Selectable<DeployTokensTable>;

/** DeployToken::AVAILABLE_SCOPES, in GitLab's order (scopes are shown in this order). */
export const DEPLOY_TOKEN_SCOPES = [
  'read_repository',
  'read_registry',
  'write_registry',
  'read_package_registry',
  'write_package_registry',
  'read_virtual_registry',
  'write_virtual_registry',
] as const;

export const DEPLOY_TOKEN_PREFIX = 'gldt-';

export type DeployTokenOwner = { kind: 'project'; id: number } | { kind: 'group'; id: number };

export interface DeployTokenInput {
  name: string;
  scopes: string[];
  expiresAt: string | null;
  username: string | null;
}

const USERNAME_RE = /^[a-zA-Z0-9.+_-]+$/;

/** The username git clients authenticate with: the custom one, or GitLab's default. */
export function deployTokenUsername(row: Pick<DeployTokenRow, 'id' | 'username'>): string {
  return row.username ?? `gitlab+deploy-token-${row.id}`;
}

export function deployTokenScopes(row: Pick<DeployTokenRow, 'scopes'>): string[] {
  return JSON.parse(row.scopes) as string[];
}

/** DeployToken#expired?: by date, so a token whose time passed earlier today is not yet shown as expired. */
export function deployTokenExpired(row: Pick<DeployTokenRow, 'expires_at'>, now = new Date()): boolean {
  return row.expires_at !== null && row.expires_at.slice(0, 10) < now.toISOString().slice(0, 10);
}

/** DeployToken.active: not revoked and not past its expiry time. */
export function deployTokenActive(row: Pick<DeployTokenRow, 'revoked' | 'expires_at'>, now = new Date()): boolean {
  return row.revoked === 0 && (row.expires_at === null || Date.parse(row.expires_at) >= now.getTime());
}

/** The model's validations; GitLab renders their full messages as one sentence: 400 `{"message":"…"}`. */
function validate(input: DeployTokenInput): void {
  const errors: string[] = [];
  if (charLength(input.name) > 255) errors.push('Name is too long (maximum is 255 characters)');
  if (input.username !== null) {
    if (charLength(input.username) > 255) errors.push('Username is too long (maximum is 255 characters)');
    if (!USERNAME_RE.test(input.username)) errors.push("Username can contain only letters, digits, '_', '-', '+', and '.'");
  }
  if (input.scopes.length === 0) errors.push("Scopes can't be blank");
  if (errors.length) throw apiError(400, toSentence(errors));
}

function ownerColumns(owner: DeployTokenOwner) {
  return owner.kind === 'project'
    ? { deploy_token_type: 'project_type', project_id: owner.id, group_id: null }
    : { deploy_token_type: 'group_type', project_id: null, group_id: owner.id };
}

/** Creates a token; the row and the token, which is never shown again. */
export async function createDeployToken(app: AppContext, owner: DeployTokenOwner, creatorId: number, input: DeployTokenInput): Promise<{ row: ShownDeployToken; token: string }> {
  validate(input);
  const scopes = DEPLOY_TOKEN_SCOPES.filter((s) => input.scopes.includes(s));
  const token = DEPLOY_TOKEN_PREFIX + randomBytes(15).toString('base64url');
  const now = nowIso();
  const values = {
    ...ownerColumns(owner),
    name: input.name,
    username: input.username,
    token_digest: tokenDigest(app.config.secret, token),
    scopes: JSON.stringify(scopes),
    expires_at: input.expiresAt,
    revoked: 0,
    creator_id: creatorId,
    created_at: now,
    updated_at: now,
  };
  const id = await app.database.transaction(async (trx) => {
    await lockOwnerRow(app, trx, owner.kind === 'project' ? 'projects' : 'namespaces', owner.id);
    return (await trx.insertInto('deploy_tokens').values(values).returning('id').executeTakeFirstOrThrow()).id;
  });
  const { token_digest: _digest, ...shown } = values;
  return { row: { ...shown, id }, token };
}

/** Every column but the digest, which only the git lookup needs. */
const SHOWN_COLUMNS = ['id', 'deploy_token_type', 'project_id', 'group_id', 'name', 'username', 'scopes', 'expires_at', 'revoked', 'creator_id', 'created_at', 'updated_at'] as const;

export type ShownDeployToken = Omit<DeployTokenRow, 'token_digest'>;

function ownerQuery(db: Kysely<DB>, owner: DeployTokenOwner) {
  const q = db.selectFrom('deploy_tokens').select(SHOWN_COLUMNS);
  return owner.kind === 'project' ? q.where('project_id', '=', owner.id) : q.where('group_id', '=', owner.id);
}

/** A project's or group's tokens by id (revoked and expired ones too, unless `active`). */
export function deployTokensOf(db: Kysely<DB>, owner: DeployTokenOwner | null, active: boolean) {
  let q = owner ? ownerQuery(db, owner) : db.selectFrom('deploy_tokens').select(SHOWN_COLUMNS);
  if (active) q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>=', nowIso())]));
  return q.orderBy('id');
}

export async function findDeployToken(db: Kysely<DB>, owner: DeployTokenOwner, id: number): Promise<ShownDeployToken | undefined> {
  return ownerQuery(db, owner).where('id', '=', id).executeTakeFirst();
}

/** The API deletes the row (GitLab's DestroyService; revoking is the web UI's). */
export async function deleteDeployToken(app: AppContext, owner: DeployTokenOwner, id: number): Promise<boolean> {
  const col = owner.kind === 'project' ? 'project_id' : 'group_id';
  const gone = await app.db.deleteFrom('deploy_tokens').where(col, '=', owner.id).where('id', '=', id).returning('id').executeTakeFirst();
  return gone !== undefined;
}

/** A deleted project's or groups' tokens go with them (their rows locked first, as for variables). */
export async function deleteOwnerDeployTokens(app: AppContext, trx: Transaction<DB>, kind: 'project' | 'group', ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await lockOwnerRows(app, trx, kind === 'project' ? 'projects' : 'namespaces', ids);
  await trx.deleteFrom('deploy_tokens').where(kind === 'project' ? 'project_id' : 'group_id', 'in', ids).execute();
}

/**
 * GitLab's deploy_token_check for git over HTTP: an active token with this digest whose username
 * is exactly the one given; anything else is no deploy token.
 */
export async function resolveDeployToken(app: AppContext, username: string, token: string): Promise<DeployTokenRow | null> {
  if (!token.startsWith(DEPLOY_TOKEN_PREFIX)) return null;
  const row = await app.db.selectFrom('deploy_tokens').selectAll().where('token_digest', '=', tokenDigest(app.config.secret, token)).executeTakeFirst();
  if (!row || !deployTokenActive(row) || deployTokenUsername(row) !== username) return null;
  return row;
}

/** GroupDeployToken#has_access_to?: the group's projects and those of every subgroup; a project token, its project. */
export async function deployTokenReaches(db: Kysely<DB>, row: DeployTokenRow, project: { id: number; namespace_id: number }, namespaceTraversal: string): Promise<boolean> {
  if (row.project_id !== null) return row.project_id === project.id;
  if (row.group_id === null) return false;
  const group = await db.selectFrom('namespaces').select('traversal').where('id', '=', row.group_id).where('kind', '=', 'group').executeTakeFirst();
  return group !== undefined && namespaceTraversal.startsWith(group.traversal);
}
