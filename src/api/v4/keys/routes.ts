// SSH keys: /user/keys, /users/:id/keys (public list; admins add and delete), /keys/:id and
// /keys?fingerprint= (admins).
import type { FastifyInstance } from 'fastify';
import { findUserById } from '../../../db/repositories/users.js';
import { notFound } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { createSshKey, deleteSshKey, presentSshKey, type SshKeyRow } from '../../../services/groups/ssh-keys.js';
import { presentUserBasic } from '../entities/user.js';
import { presentDeployKey } from '../deploy-keys/routes.js';
import { userParam } from '../projects/stars.js';

const USAGE_TYPES = ['auth', 'signing', 'auth_and_signing'] as const;

function readKey(c: Ctx) {
  return {
    title: c.params.string('title', { required: true })!,
    key: c.params.string('key', { required: true })!,
    expiresAt: c.params.datetime('expires_at') ?? null,
    usageType: c.params.enum('usage_type', USAGE_TYPES) ?? 'auth_and_signing',
  };
}

async function keyOf(c: Ctx, userId: number, param = 'key_id'): Promise<SshKeyRow> {
  const id = c.params.int(param);
  const row = id === undefined ? undefined : await c.app.db.selectFrom('ssh_keys').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (!row) throw notFound('Key');
  return row;
}

async function listKeys(c: Ctx, userId: number) {
  const rows = await paginateOffset(c, c.app.db.selectFrom('ssh_keys').selectAll().where('user_id', '=', userId).orderBy('id'));
  return rows.map(presentSshKey);
}

export function registerKeyRoutes(app: FastifyInstance): void {
  // GET /user/keys
  route(app, 'GET', '/user/keys', (c) => listKeys(c, c.requireUser().id), { extraScopes: ['read_user'] });
  // GET /user/keys/:key_id
  route(app, 'GET', '/user/keys/:key_id', async (c) => presentSshKey(await keyOf(c, c.requireUser().id)), { extraScopes: ['read_user'] });
  // POST /user/keys
  route(app, 'POST', '/user/keys', async (c) => {
    const user = c.requireUser();
    return presentSshKey(await createSshKey(c.app, user.id, readKey(c), user));
  });
  // DELETE /user/keys/:key_id
  route(app, 'DELETE', '/user/keys/:key_id', async (c) => {
    const user = c.requireUser();
    await deleteSshKey(c.app, await keyOf(c, user.id), user);
    return undefined;
  });
  // GET /users/:id/keys (public)
  route(app, 'GET', '/users/:id/keys', async (c) => listKeys(c, (await userParam(c, 'id')).id), { extraScopes: ['read_user'] });
  // GET /users/:id/keys/:key_id
  route(app, 'GET', '/users/:id/keys/:key_id', async (c) => presentSshKey(await keyOf(c, (await userParam(c, 'id')).id)), { extraScopes: ['read_user'] });
  // POST /users/:id/keys (admin)
  route(app, 'POST', '/users/:id/keys', async (c) => {
    const admin = c.requireAdmin();
    const target = await userParam(c, 'id');
    return presentSshKey(await createSshKey(c.app, target.id, readKey(c), admin));
  });
  // DELETE /users/:id/keys/:key_id (admin)
  route(app, 'DELETE', '/users/:id/keys/:key_id', async (c) => {
    const admin = c.requireAdmin();
    const target = await userParam(c, 'id');
    await deleteSshKey(c.app, await keyOf(c, target.id), admin);
    return undefined;
  });
  // GET /keys?fingerprint= (admin)
  route(app, 'GET', '/keys', async (c) => {
    c.requireAdmin();
    const fp = c.params.string('fingerprint', { required: true })!;
    // An MD5 fingerprint as it is shown, or a SHA256 one with or without its prefix.
    const sha256 = fp.startsWith('SHA256:') ? fp : `SHA256:${fp}`;
    const row = await c.app.db
      .selectFrom('ssh_keys')
      .selectAll()
      .where((eb) => eb.or([eb('fingerprint', '=', fp), eb('fingerprint_sha256', '=', sha256)]))
      .executeTakeFirst();
    if (row) return withUser(c, row);
    // GitLab keeps deploy keys in the same table: one found by its fingerprint is Entities::DeployKeyWithUser.
    const deploy = await c.app.db
      .selectFrom('deploy_keys')
      .selectAll()
      .where((eb) => eb.or([eb('fingerprint', '=', fp), eb('fingerprint_sha256', '=', sha256)]))
      .executeTakeFirst();
    if (!deploy) throw notFound();
    const [owner, links] = await Promise.all([
      deploy.user_id === null ? undefined : findUserById(c.app.db, deploy.user_id),
      c.app.db.selectFrom('deploy_keys_projects').selectAll().where('deploy_key_id', '=', deploy.id).orderBy('id').execute(),
    ]);
    return Object.assign(presentDeployKey(deploy), {
      user: owner ? presentUserBasic(owner, c) : null,
      deploy_keys_projects: links.map((l) => ({ id: l.id, deploy_key_id: l.deploy_key_id, project_id: l.project_id, created_at: l.created_at, updated_at: l.updated_at, can_push: l.can_push === 1 })),
    });
  });
  // GET /keys/:id (admin; users' SSH keys: deploy keys have ids of their own here)
  route(app, 'GET', '/keys/:id', async (c) => {
    c.requireAdmin();
    const id = c.params.int('id');
    const row = id === undefined ? undefined : await c.app.db.selectFrom('ssh_keys').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound();
    return withUser(c, row);
  });
}

async function withUser(c: Ctx, row: SshKeyRow) {
  const u = await findUserById(c.app.db, row.user_id);
  return Object.assign({}, presentSshKey(row), { user: u ? presentUserBasic(u, c) : null });
}
