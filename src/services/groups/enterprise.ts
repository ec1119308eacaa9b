// Enterprise users of a top-level group: users provisioned by it (SCIM) and users with a SAML
// identity for it, their identities, and the user records the SAML and provisioned lists show.
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import type { UserRow } from '../../db/repositories/users.js';
import { nowIso, rawSql } from '../../db/database.js';
import type { DB } from '../../db/types.js';
import { notGiven, paramError } from '../../http/errors.js';
import type { Params } from '../../http/params.js';
import { presentUserPublic } from '../../api/v4/entities/user.js';
import { adminUsersPresentHooks } from '../users.js';

export interface IdentityRecord {
  provider: string;
  extern_uid: string;
  saml_provider_id: number | null;
}

export async function identitiesOf(db: Kysely<DB>, userIds: number[]): Promise<Map<number, IdentityRecord[]>> {
  const map = new Map<number, IdentityRecord[]>();
  for (const id of userIds) map.set(id, []);
  if (!userIds.length) return map;
  const rows = await db.selectFrom('user_identities').selectAll().where('user_id', 'in', userIds).orderBy('id').execute();
  for (const r of rows) map.get(r.user_id)?.push({ provider: r.provider, extern_uid: r.extern_uid, saml_provider_id: r.saml_provider_id });
  return map;
}

export async function scimIdentitiesOf(db: Kysely<DB>, userIds: number[]) {
  const map = new Map<number, Array<{ extern_uid: string; group_id: number; active: boolean }>>();
  for (const id of userIds) map.set(id, []);
  if (!userIds.length) return map;
  const rows = await db.selectFrom('scim_identities').selectAll().where('user_id', 'in', userIds).orderBy('id').execute();
  for (const r of rows) map.get(r.user_id)?.push({ extern_uid: r.extern_uid, group_id: r.group_id, active: r.active === 1 });
  return map;
}

/** The user record of the SAML and provisioned user lists (spec document 3 §2.3). */
export function presentEnterpriseUser(
  u: UserRow,
  base: string,
  identities: IdentityRecord[],
  scim?: Array<{ extern_uid: string; group_id: number; active: boolean }>,
) {
  const p = presentUserPublic(u, { base }) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of [
    'id', 'username', 'name', 'state', 'avatar_url', 'web_url', 'created_at', 'bio', 'location', 'public_email', 'linkedin', 'twitter',
    'website_url', 'organization', 'job_title', 'pronouns', 'bot', 'work_information', 'followers', 'following', 'local_time',
    'last_sign_in_at', 'confirmed_at', 'last_activity_on', 'email', 'theme_id', 'color_scheme_id', 'projects_limit', 'current_sign_in_at',
  ]) {
    out[k] = p[k] ?? null;
  }
  out.identities = identities;
  for (const k of ['can_create_group', 'can_create_project', 'two_factor_enabled', 'external', 'private_profile', 'commit_email']) out[k] = p[k];
  out.shared_runners_minutes_limit = null;
  out.extra_shared_runners_minutes_limit = null;
  if (scim) out.scim_identities = scim;
  return out;
}

/** Filters shared by /saml_users and /provisioned_users. */
export function readUserFilters(p: Params) {
  return {
    username: p.string('username'),
    search: p.string('search'),
    active: p.bool('active'),
    blocked: p.bool('blocked'),
    createdAfter: p.datetime('created_after'),
    createdBefore: p.datetime('created_before'),
  };
}

/**
 * Admin user API parameters GitLab accepts for SAML: `provider`, `extern_uid`, `group_id_for_saml`;
 * and (GITLAB-COMPAT: set by SCIM on GitLab, which Labwright lacks) `provisioned_by_group_id`.
 * Validates before the user is written.
 */
export async function readEnterpriseParams(db: Kysely<DB>, p: Params) {
  const provider = p.string('provider');
  const externUid = p.string('extern_uid');
  const samlGroup = p.int('group_id_for_saml');
  const provisionedBy = p.int('provisioned_by_group_id');
  if (provider !== undefined && externUid === undefined) throw notGiven('extern_uid');
  if (externUid !== undefined && provider === undefined) throw notGiven('provider');
  for (const id of [samlGroup, provisionedBy]) {
    if (id === undefined) continue;
    const g = await db.selectFrom('namespaces').select(['id', 'parent_id']).where('id', '=', id).where('kind', '=', 'group').executeTakeFirst();
    if (!g || g.parent_id !== null) throw paramError(`${id === samlGroup ? 'group_id_for_saml' : 'provisioned_by_group_id'} is invalid`);
  }
  return { provider, externUid, samlGroup, provisionedBy };
}

export async function applyEnterpriseParams(
  trx: Kysely<DB> | Transaction<DB>,
  userId: number,
  e: Awaited<ReturnType<typeof readEnterpriseParams>>,
): Promise<void> {
  const now = nowIso();
  if (e.provider !== undefined && e.externUid !== undefined) {
    const provider = e.samlGroup !== undefined ? 'group_saml' : e.provider;
    await trx.deleteFrom('user_identities').where('user_id', '=', userId).where('provider', '=', provider).execute();
    await trx
      .insertInto('user_identities')
      .values({ user_id: userId, provider, extern_uid: e.externUid, saml_provider_id: e.samlGroup ?? null, created_at: now })
      .execute();
  }
  if (e.provisionedBy !== undefined) {
    await trx.deleteFrom('user_group_provisions').where('user_id', '=', userId).execute();
    await trx
      .insertInto('user_group_provisions')
      .values({ user_id: userId, provisioned_by_group_id: e.provisionedBy, enterprise_group_id: e.provisionedBy, created_at: now })
      .execute();
    await trx.deleteFrom('scim_identities').where('user_id', '=', userId).where('group_id', '=', e.provisionedBy).execute();
    await trx
      .insertInto('scim_identities')
      .values({ user_id: userId, group_id: e.provisionedBy, extern_uid: e.externUid ?? String(userId), active: 1, created_at: now })
      .execute();
  }
}

/** Ids of the enterprise users of a top-level group (provisioned by it or with its SAML identity). */
export function enterpriseUserIds(db: Kysely<DB>, groupId: number) {
  return db
    .selectFrom('user_group_provisions')
    .select('user_id')
    .where('enterprise_group_id', '=', groupId)
    .union(db.selectFrom('user_identities').select('user_id').where('saml_provider_id', '=', groupId));
}


let hookRegistered = false;

/** Lets the admin user API set SAML identities and the provisioning group (POST/PUT /users). */
export function registerEnterpriseUserParams(hooks: Array<(app: AppContext, params: unknown) => Promise<(userId: number) => Promise<void>>>): void {
  if (hookRegistered) return;
  hookRegistered = true;
  hooks.push(async function enterpriseUserParams(app, params) {
    const e = await readEnterpriseParams(app.db, params as Params);
    return async (userId) => {
      await app.database.transaction((trx) => applyEnterpriseParams(trx, userId, e));
    };
  });
}

let deletionRegistered = false;

/** A deleted user takes its SSH keys, identities, provisioning and bot record along. */
export function registerUserCleanup(hooks: Array<(app: AppContext, trx: Transaction<DB>, user: UserRow, ns: number | null) => Promise<void>>): void {
  if (deletionRegistered) return;
  deletionRegistered = true;
  hooks.push(async function removeGroupModuleUserRows(_app, trx, user) {
    await trx.deleteFrom('ssh_keys').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('user_identities').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('scim_identities').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('user_group_provisions').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('resource_access_bots').where('user_id', '=', user.id).execute();
  });
}

let presentRegistered = false;

const ENTERPRISE_FLAGS_SQL = rawSql(
  'select (select provisioned_by_group_id from user_group_provisions where user_id = ?) as prov, ' +
    'exists (select 1 from user_identities where user_id = ?) as ident, exists (select 1 from scim_identities where user_id = ?) as scim',
);

/** Admin user entity: `identities`, `provisioned_by_group_id`, `scim_identities` (GitLab EE fields). */
export function registerEnterpriseUserFields(hooks: Array<(app: AppContext, userId: number, out: Record<string, unknown>) => Promise<void>>): void {
  if (presentRegistered) return;
  presentRegistered = true;
  hooks.push(async function enterpriseUserFields(app, userId, out) {
    // One statement in the common case (no identities): GET /user of an administrator runs this.
    const [flags] = await app.database.read<{ prov: number | null; ident: unknown; scim: unknown }>(ENTERPRISE_FLAGS_SQL, [userId, userId, userId]);
    out.identities = flags?.ident ? ((await identitiesOf(app.db, [userId])).get(userId) ?? []) : [];
    out.provisioned_by_group_id = flags?.prov ?? null;
    out.scim_identities = flags?.scim ? ((await scimIdentitiesOf(app.db, [userId])).get(userId) ?? []) : [];
  });
  // The same fields on admin GET /users pages: three queries per page, whatever its size.
  adminUsersPresentHooks.push(async function enterpriseUsersFields(app, outs) {
    const ids = [...outs.keys()];
    const identities = await identitiesOf(app.db, ids);
    const provs = await app.db.selectFrom('user_group_provisions').select(['user_id', 'provisioned_by_group_id']).where('user_id', 'in', ids).execute();
    const provBy = new Map(provs.map((p) => [p.user_id, p.provisioned_by_group_id]));
    const scim = await scimIdentitiesOf(app.db, ids);
    for (const [id, out] of outs) {
      out.identities = identities.get(id) ?? [];
      out.provisioned_by_group_id = provBy.get(id) ?? null;
      out.scim_identities = scim.get(id) ?? [];
    }
  });
}
