// Deploy keys (GitLab's DeployKey and DeployKeysProject): SSH public keys enabled in projects,
// read-only or with push (`can_push`). A key belongs to no project by itself: its links do. A
// private key (added to a project) may be enabled in the other projects of whoever can see it in a
// project of theirs; a public key (added by an administrator, instance-wide) in any project.
// Labwright has no SSH server: the keys are kept and managed, and open nothing.
import type { ExpressionBuilder, Expression, Kysely, Selectable, SqlBool, Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { UserRow } from '../db/repositories/users.js';
import type { DeployKeysTable } from '../db/tables/deploy-keys.js';
import type { DB } from '../db/types.js';
import { validationError } from '../http/errors.js';
import { AccessLevel } from './access.js';
import { fingerprints, fingerprintTaken, lockKeyFingerprints, parsePublicKey } from './groups/ssh-keys.js';
import { lockOwnerRow, lockOwnerRows } from './owner-lock.js';
import { projectDeletionHooks } from './projects/create.js';
import { membershipCondition } from './projects/list.js';
import { charLength } from './ruby-text.js';
import { userDeletionHooks } from './users.js';

export type DeployKeyRow = Selectable<DeployKeysTable>;
/** A key as enabled in one project (GitLab's DeployKeysProject): the key's columns and the link's. */
export type ProjectDeployKey = DeployKeyRow & { can_push: number; link_updated_at: string };

/** Key#key's length limit. */
const MAX_KEY_LENGTH = 5000;

export interface DeployKeyInput {
  title: string;
  /** As given; stripped here (the API's `params[:key].strip!`). */
  key: string;
  expiresAt: string | null;
}

interface ValidKey {
  title: string;
  key: string;
  keyType: string;
  md5: string;
  sha256: string;
  expiresAt: string | null;
}

/**
 * Key's validations, in its order (title, key, fingerprint_sha256, then the expiry, named on key),
 * all reported at once. `embed` names the entity the errors are nested in: a key created through a
 * project link is validated as the link's embedded deploy_key, so its errors appear as
 * `{"deploy_key":{"title":[…]}}` (spec document 1 §7.2: embedded entities as nested objects; Rails
 * itself names them `deploy_key.title`); the instance-wide POST /deploy_keys validates the key
 * itself (`{"title":[…]}`). The fingerprint is looked up under the fingerprint lock, so this runs in
 * the creating transaction.
 */
async function validate(app: AppContext, trx: Transaction<DB>, input: DeployKeyInput, embed: string | null): Promise<ValidKey> {
  const errors: Record<string, string[]> = {};
  const add = (attr: string, message: string) => (errors[attr] ??= []).push(message);
  if (input.title.trim() === '') add('title', "can't be blank");
  else if (charLength(input.title) > 255) add('title', 'is too long (maximum is 255 characters)');
  const text = input.key.trim();
  const parsed = text === '' ? null : parsePublicKey(text);
  if (text === '') add('key', "can't be blank");
  if (charLength(text) > MAX_KEY_LENGTH) add('key', `is too long (maximum is ${MAX_KEY_LENGTH} characters)`);
  if (text !== '' && !parsed) add('key', 'is invalid');
  const fp = parsed ? fingerprints(parsed.blob) : null;
  await lockKeyFingerprints(app, trx);
  if (!fp) add('fingerprint_sha256', 'cannot be generated');
  else if (await fingerprintTaken(trx, fp.sha256)) add('fingerprint_sha256', 'has already been taken');
  // Key#expiration (on create): a key whose time has passed is refused, named on `key`.
  if (input.expiresAt !== null && Date.parse(input.expiresAt) <= Date.now()) add('key', 'has expired');
  if (Object.keys(errors).length) throw validationError(embed ? { [embed]: errors } : errors);
  return { title: input.title, key: parsed!.normalised, keyType: parsed!.type, md5: fp!.md5, sha256: fp!.sha256, expiresAt: input.expiresAt };
}

/** The text a key is looked up by: normalised as it is stored, or as given when it does not parse. */
export function lookupText(key: string): string {
  const text = key.trim();
  return parsePublicKey(text)?.normalised ?? text;
}

async function insertKey(app: AppContext, trx: Transaction<DB>, input: DeployKeyInput, userId: number, isPublic: boolean, embed: string | null): Promise<DeployKeyRow> {
  const valid = await validate(app, trx, input, embed);
  const now = nowIso();
  return trx
    .insertInto('deploy_keys')
    .values({
      user_id: userId,
      title: valid.title,
      key: valid.key,
      key_type: valid.keyType,
      fingerprint: valid.md5,
      fingerprint_sha256: valid.sha256,
      usage_type: 'auth_and_signing',
      public: isPublic ? 1 : 0,
      expires_at: valid.expiresAt,
      last_used_at: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** POST /deploy_keys: an instance-wide (public) key, in no project yet. */
export async function createPublicDeployKey(app: AppContext, userId: number, input: DeployKeyInput): Promise<DeployKeyRow> {
  return app.database.transaction((trx) => insertKey(app, trx, input, userId, true, null));
}

/** A new private key, enabled in the project at once (the API's deploy_key_attributes). */
export async function createProjectDeployKey(app: AppContext, projectId: number, userId: number, input: DeployKeyInput, canPush: boolean): Promise<ProjectDeployKey> {
  return app.database.transaction(async (trx) => {
    await lockOwnerRow(app, trx, 'projects', projectId);
    const key = await insertKey(app, trx, input, userId, false, 'deploy_key');
    const link = await insertLink(trx, key.id, projectId, canPush);
    return { ...key, can_push: link.can_push, link_updated_at: link.updated_at };
  });
}

async function insertLink(trx: Transaction<DB>, keyId: number, projectId: number, canPush: boolean) {
  const now = nowIso();
  return trx
    .insertInto('deploy_keys_projects')
    .values({ deploy_key_id: keyId, project_id: projectId, can_push: canPush ? 1 : 0, created_at: now, updated_at: now })
    .returning(['can_push', 'updated_at'])
    .executeTakeFirstOrThrow();
}

/**
 * Enables a key in a project (the link is made once; when it is there already it is left as it
 * is). The project's row is locked, so two enables of one key cannot both insert, and a project
 * being deleted gets no new link (404 Project Not Found).
 */
export async function enableDeployKey(app: AppContext, projectId: number, keyId: number, canPush: boolean): Promise<ProjectDeployKey | null> {
  return app.database.transaction(async (trx) => {
    await lockOwnerRow(app, trx, 'projects', projectId);
    // The key's row is locked too: a removal deleting it as an orphan cannot leave this link dangling.
    const key = await app.database.forUpdate(trx.selectFrom('deploy_keys').selectAll().where('id', '=', keyId)).executeTakeFirst();
    if (!key) return null;
    const link =
      (await trx.selectFrom('deploy_keys_projects').select(['can_push', 'updated_at']).where('project_id', '=', projectId).where('deploy_key_id', '=', keyId).executeTakeFirst()) ??
      (await insertLink(trx, keyId, projectId, canPush));
    return { ...key, can_push: link.can_push, link_updated_at: link.updated_at };
  });
}

function projectKeysQuery(db: Kysely<DB>, projectId: number) {
  return db
    .selectFrom('deploy_keys_projects')
    .innerJoin('deploy_keys', 'deploy_keys.id', 'deploy_keys_projects.deploy_key_id')
    .selectAll('deploy_keys')
    .select(['deploy_keys_projects.can_push', 'deploy_keys_projects.updated_at as link_updated_at'])
    .where('deploy_keys_projects.project_id', '=', projectId);
}

/** A project's keys, in the order they were enabled. */
export function deployKeysOfProject(db: Kysely<DB>, projectId: number) {
  return projectKeysQuery(db, projectId).orderBy('deploy_keys_projects.id');
}

export async function findProjectDeployKey(db: Kysely<DB>, projectId: number, keyId: number): Promise<ProjectDeployKey | undefined> {
  return projectKeysQuery(db, projectId).where('deploy_keys.id', '=', keyId).executeTakeFirst();
}

/** The project's key with exactly this text (POST /projects/:id/deploy_keys gives it back). */
export async function findProjectDeployKeyByText(db: Kysely<DB>, projectId: number, text: string): Promise<ProjectDeployKey | undefined> {
  const parsed = parsePublicKey(text);
  if (!parsed) return undefined;
  // By fingerprint (indexed), then the text itself: a key with another comment is another key.
  const row = await projectKeysQuery(db, projectId).where('deploy_keys.fingerprint_sha256', '=', fingerprints(parsed.blob).sha256).executeTakeFirst();
  return row && row.key === text ? row : undefined;
}

type KeyEB = ExpressionBuilder<DB, 'deploy_keys'>;

/** Keys enabled in a project the user is authorized for (User#project_deploy_keys: any membership level). */
async function inUsersProjects(db: Kysely<DB>, user: UserRow, minLevel: number): Promise<(eb: KeyEB) => Expression<SqlBool>> {
  const member = await membershipCondition(db, user, minLevel);
  return (eb) =>
    eb(
      'deploy_keys.id',
      'in',
      eb
        .selectFrom('deploy_keys_projects as dkp')
        .innerJoin('projects', 'projects.id', 'dkp.project_id')
        .select('dkp.deploy_key_id')
        .where((p) => member(p as unknown as ExpressionBuilder<DB, 'projects'>)),
    );
}

/**
 * User#accessible_deploy_keys: the keys of the projects the user is a member of, and public keys.
 * Administrators are not special here (GitLab's authorized projects are memberships).
 */
export async function findAccessibleDeployKey(db: Kysely<DB>, user: UserRow, by: { id: number } | { text: string }): Promise<DeployKeyRow | undefined> {
  let q = db.selectFrom('deploy_keys').selectAll();
  if ('id' in by) q = q.where('id', '=', by.id);
  else {
    const parsed = parsePublicKey(by.text);
    if (!parsed) return undefined;
    q = q.where('fingerprint_sha256', '=', fingerprints(parsed.blob).sha256).where('key', '=', by.text);
  }
  const mine = await inUsersProjects(db, user, AccessLevel.GUEST);
  return q.where((eb) => eb.or([eb('public', '=', 1), mine(eb)])).executeTakeFirst();
}

/** DeployKeyPolicy's has_deploy_key: the key is enabled in a project the user is a member of. */
async function userHasDeployKey(db: Kysely<DB>, user: UserRow, keyId: number): Promise<boolean> {
  const mine = await inUsersProjects(db, user, AccessLevel.GUEST);
  return (await db.selectFrom('deploy_keys').select('id').where('id', '=', keyId).where((eb) => mine(eb)).executeTakeFirst()) !== undefined;
}

export interface DeployKeyUpdate {
  title?: string;
  canPush?: boolean;
}

/**
 * PUT /projects/:id/deploy_keys/:key_id, for a Maintainer of the project (or an administrator).
 * DeployKeyPolicy and DeployKeysProjectPolicy: an administrator, or a member of a project the
 * key is in when the key is private, may update the key; a public key's link may be updated by
 * the project's Maintainers. The title changes only for administrators, or when the key is in
 * this project alone; otherwise a given title is left as it was (GitLab ignores it, 200).
 * Returns null when neither may be updated (403).
 */
export async function updateProjectDeployKey(app: AppContext, user: UserRow, projectId: number, current: ProjectDeployKey, change: DeployKeyUpdate): Promise<ProjectDeployKey | null> {
  const db = app.db;
  const admin = Boolean(user.is_admin);
  const mayUpdateKey = admin || (current.public === 0 && (await userHasDeployKey(db, user, current.id)));
  const mayUpdateLink = current.public === 1;
  if (!mayUpdateKey && !mayUpdateLink) return null;
  let title: string | undefined;
  if (change.title !== undefined && mayUpdateKey) {
    const links = await db.selectFrom('deploy_keys_projects').select('project_id').where('deploy_key_id', '=', current.id).limit(2).execute();
    // orphaned, or almost orphaned (its one project is this one, which the caller maintains).
    if (admin || links.length <= 1) title = change.title;
  }
  if (title !== undefined) {
    if (title.trim() === '') throw validationError({ deploy_key: { title: ["can't be blank"] } });
    if (charLength(title) > 255) throw validationError({ deploy_key: { title: ['is too long (maximum is 255 characters)'] } });
  }
  await app.database.transaction(async (trx) => {
    const now = nowIso();
    if (title !== undefined) await trx.updateTable('deploy_keys').set({ title, updated_at: now }).where('id', '=', current.id).execute();
    const link: { updated_at: string; can_push?: number } = { updated_at: now };
    if (change.canPush !== undefined) link.can_push = change.canPush ? 1 : 0;
    await trx.updateTable('deploy_keys_projects').set(link).where('project_id', '=', projectId).where('deploy_key_id', '=', current.id).execute();
  });
  return (await findProjectDeployKey(db, projectId, current.id)) ?? null;
}

/**
 * Removes a key from a project. DeployKeysProject#destroy_orphaned_deploy_key: a private key in no
 * other project goes with its last link; a public key stays. False when the key is not enabled here.
 */
export async function disableDeployKey(app: AppContext, projectId: number, keyId: number): Promise<boolean> {
  return app.database.transaction(async (trx) => {
    // Locked first: two removals of a key's last two links see each other's, and the key goes.
    await app.database.forUpdate(trx.selectFrom('deploy_keys').select('id').where('id', '=', keyId)).execute();
    const gone = await trx.deleteFrom('deploy_keys_projects').where('project_id', '=', projectId).where('deploy_key_id', '=', keyId).returning('id').executeTakeFirst();
    if (!gone) return false;
    const other = await trx.selectFrom('deploy_keys_projects').select('id').where('deploy_key_id', '=', keyId).limit(1).executeTakeFirst();
    if (!other) await trx.deleteFrom('deploy_keys').where('id', '=', keyId).where('public', '=', 0).execute();
    return true;
  });
}

/** GET /deploy_keys: every key (or the public ones), by id. */
export function allDeployKeys(db: Kysely<DB>, publicOnly: boolean) {
  let q = db.selectFrom('deploy_keys').selectAll();
  if (publicOnly) q = q.where('public', '=', 1);
  return q.orderBy('id');
}

export interface KeyProject {
  deployKeyId: number;
  canPush: boolean;
  id: number;
  description: string | null;
  name: string;
  path: string;
  createdAt: string;
  namespaceFullName: string;
  namespaceFullPath: string;
}

/** The projects the given keys are enabled in, in the order they were enabled (ProjectIdentity's fields). */
export async function projectsOfDeployKeys(db: Kysely<DB>, keyIds: number[]): Promise<KeyProject[]> {
  if (keyIds.length === 0) return [];
  const rows = await db
    .selectFrom('deploy_keys_projects as dkp')
    .innerJoin('projects', 'projects.id', 'dkp.project_id')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select([
      'dkp.deploy_key_id',
      'dkp.can_push',
      'projects.id',
      'projects.description',
      'projects.name',
      'projects.path',
      'projects.created_at',
      'namespaces.full_name',
      'namespaces.full_path',
    ])
    .where('dkp.deploy_key_id', 'in', keyIds)
    .orderBy('dkp.id')
    .execute();
  return rows.map((r) => ({
    deployKeyId: r.deploy_key_id,
    canPush: r.can_push === 1,
    id: r.id,
    description: r.description,
    name: r.name,
    path: r.path,
    createdAt: r.created_at,
    namespaceFullName: r.full_name,
    namespaceFullPath: r.full_path,
  }));
}

/**
 * GET /users/:id/project_deploy_keys: the keys of the projects both users maintain (the caller's
 * own when they are the same user); null when they maintain no project in common (403).
 */
export async function commonProjectDeployKeys(db: Kysely<DB>, caller: UserRow, target: UserRow) {
  const users = caller.id === target.id ? [caller] : [caller, target];
  const conditions = await Promise.all(users.map((u) => membershipCondition(db, u, AccessLevel.MAINTAINER)));
  const common = db
    .selectFrom('projects')
    .select('projects.id')
    .where((eb) => eb.and(conditions.map((cond) => cond(eb))));
  const any = await common.limit(1).executeTakeFirst();
  if (!any) return null;
  return db
    .selectFrom('deploy_keys')
    .selectAll()
    .where('id', 'in', db.selectFrom('deploy_keys_projects').select('deploy_key_id').where('project_id', 'in', common))
    .orderBy('id');
}

let hooked = false;

/** A deleted project's links go with it; its keys stay (GitLab's foreign key cascade runs no callbacks). */
export function registerDeployKeyHooks(): void {
  if (hooked) return;
  hooked = true;
  projectDeletionHooks.push(async function unlinkProjectDeployKeys(app, trx, projectId) {
    await lockOwnerRows(app, trx, 'projects', [projectId]);
    await trx.deleteFrom('deploy_keys_projects').where('project_id', '=', projectId).execute();
  });
  // User#deploy_keys, dependent: :nullify: the keys stay, with no owner.
  userDeletionHooks.push(async function keepDeletedUsersDeployKeys(_app, trx, user) {
    await trx.updateTable('deploy_keys').set({ user_id: null }).where('user_id', '=', user.id).execute();
  });
}
