// Group and project access tokens: each token belongs to a bot user that is a member of the
// group or project, so the token authenticates with PRIVATE-TOKEN like any personal token.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import type { DB } from '../../db/types.js';
import { paramError } from '../../http/errors.js';
import { recordAudit } from '../audit.js';
import { createPersonalAccessToken, isActive, type PatRow } from '../personal-access-tokens.js';
import { createUser } from '../users.js';

export type ResourceType = 'Namespace' | 'Project';

export const RESOURCE_TOKEN_SCOPES = [
  'api', 'read_api', 'read_repository', 'write_repository', 'read_registry', 'write_registry', 'create_runner',
  'manage_runner', 'ai_features', 'k8s_proxy', 'self_rotate', 'read_observability', 'write_observability',
  'read_virtual_registry', 'write_virtual_registry',
];

export const RESOURCE_ACCESS_LEVELS = [10, 15, 20, 30, 40, 50];

export interface ResourceRef {
  type: ResourceType;
  id: number;
  /** Full path, for the audit trail. */
  path: string;
}

export interface NewResourceToken {
  name: string;
  description: string | null;
  scopes: string[];
  accessLevel: number;
  expiresAt: string;
}

export interface ResourceToken {
  row: PatRow;
  accessLevel: number;
  resource: ResourceRef;
}

/** Creates the bot user, its membership and its token in one transaction. */
export async function createResourceToken(
  app: AppContext,
  actor: UserRow,
  resource: ResourceRef,
  input: NewResourceToken,
): Promise<{ token: string; record: ResourceToken }> {
  const kind = resource.type === 'Namespace' ? 'group' : 'project';
  return app.database.transaction(async (trx) => {
    const suffix = randomBytes(8).toString('hex');
    const username = `${kind}_${resource.id}_bot_${suffix}`;
    const bot = await createUser(
      app,
      { username, name: input.name, email: `${username}@noreply.localhost`, userType: 'project_bot', namespaceVisibility: 'private', createdById: actor.id },
      trx,
    );
    const now = nowIso();
    await trx
      .insertInto('members')
      .values({
        source_type: resource.type,
        source_id: resource.id,
        user_id: bot.id,
        access_level: input.accessLevel,
        expires_at: input.expiresAt,
        created_by_id: actor.id,
        member_role_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await trx.insertInto('resource_access_bots').values({ user_id: bot.id, source_type: resource.type, source_id: resource.id, created_at: now }).execute();
    const { row, token } = await createPersonalAccessToken(
      app,
      { userId: bot.id, name: input.name, scopes: input.scopes, expiresAt: input.expiresAt, description: input.description },
      trx,
    );
    await recordAudit(trx, {
      author: actor,
      entityType: resource.type === 'Namespace' ? 'Group' : 'Project',
      entityId: resource.id,
      entityPath: resource.path,
      eventName: `${kind}_access_token_created`,
      targetType: 'User',
      targetId: bot.id,
      targetDetails: input.name,
    });
    return { token, record: { row, accessLevel: input.accessLevel, resource } };
  });
}

/** Tokens of the bots of one group or project (newest first), with each bot's access level. */
export async function listResourceTokens(db: Kysely<DB>, resource: ResourceRef, onlyActive: boolean | undefined): Promise<ResourceToken[]> {
  const rows = await db
    .selectFrom('personal_access_tokens')
    .innerJoin('resource_access_bots', 'resource_access_bots.user_id', 'personal_access_tokens.user_id')
    .leftJoin('members', (j) =>
      j
        .onRef('members.user_id', '=', 'resource_access_bots.user_id')
        .on('members.source_type', '=', resource.type)
        .on('members.source_id', '=', resource.id),
    )
    .selectAll('personal_access_tokens')
    .select('members.access_level as member_level')
    .where('resource_access_bots.source_type', '=', resource.type)
    .where('resource_access_bots.source_id', '=', resource.id)
    .orderBy('personal_access_tokens.id', 'desc')
    .execute();
  return rows
    .filter((r) => onlyActive === undefined || isActive(r) === onlyActive)
    .map((r) => {
      const { member_level, ...row } = r as PatRow & { member_level: number | null };
      return { row: row as PatRow, accessLevel: member_level ?? 0, resource };
    });
}

export async function findResourceToken(db: Kysely<DB>, resource: ResourceRef, tokenId: number): Promise<ResourceToken | undefined> {
  return (await listResourceTokens(db, resource, undefined)).find((t) => t.row.id === tokenId);
}

/** Revokes the token and removes the bot from the resource (GitLab also schedules the bot's deletion). */
export async function revokeResourceToken(app: AppContext, actor: UserRow | null, t: ResourceToken): Promise<void> {
  const kind = t.resource.type === 'Namespace' ? 'group' : 'project';
  await app.database.transaction(async (trx) => {
    await trx.updateTable('personal_access_tokens').set({ revoked: 1, updated_at: nowIso() }).where('id', '=', t.row.id).execute();
    await trx
      .deleteFrom('members')
      .where('user_id', '=', t.row.user_id)
      .where('source_type', '=', t.resource.type)
      .where('source_id', '=', t.resource.id)
      .execute();
    await recordAudit(trx, {
      author: actor,
      entityType: t.resource.type === 'Namespace' ? 'Group' : 'Project',
      entityId: t.resource.id,
      entityPath: t.resource.path,
      eventName: `${kind}_access_token_revoked`,
      targetType: 'User',
      targetId: t.row.user_id,
      targetDetails: t.row.name,
    });
  });
}

/** GroupAccessToken / ProjectAccessToken entity (§2.5). */
export function presentResourceToken(t: ResourceToken, token?: string) {
  const r = t.row;
  const out: Record<string, unknown> = {
    id: r.id,
    name: r.name,
    revoked: r.revoked === 1,
    created_at: r.created_at,
    description: r.description,
    scopes: JSON.parse(r.scopes) as string[],
    user_id: r.user_id,
    last_used_at: r.last_used_at,
    active: isActive(r),
    expires_at: r.expires_at,
    access_level: t.accessLevel,
    resource_type: t.resource.type === 'Namespace' ? 'group' : 'project',
    resource_id: t.resource.id,
  };
  if (token !== undefined) out.token = token;
  return out;
}

export function validateResourceScopes(scopes: string[]): void {
  if (scopes.length === 0) throw paramError('scopes is empty');
  for (const s of scopes) if (!RESOURCE_TOKEN_SCOPES.includes(s)) throw paramError('scopes does not have a valid value');
}
