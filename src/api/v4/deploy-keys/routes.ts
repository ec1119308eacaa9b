// Deploy keys (GitLab's lib/api/deploy_keys.rb): the instance list and instance-wide keys for
// administrators; a project's keys for its Maintainers (add, reuse, enable, update, remove); the
// keys of the projects two users both maintain. Labwright has no SSH server: the keys are stored
// and managed here and open nothing.
import type { FastifyInstance } from 'fastify';
import { ApiError, forbidden, notFound } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { refuseIfModifiedSince, route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import {
  allDeployKeys,
  commonProjectDeployKeys,
  createProjectDeployKey,
  createPublicDeployKey,
  deployKeysOfProject,
  disableDeployKey,
  enableDeployKey,
  findAccessibleDeployKey,
  findProjectDeployKey,
  findProjectDeployKeyByText,
  lookupText,
  projectsOfDeployKeys,
  registerDeployKeyHooks,
  updateProjectDeployKey,
  type DeployKeyInput,
  type DeployKeyRow,
  type KeyProject,
  type ProjectDeployKey,
} from '../../../services/deploy-keys.js';
import { findProject, fullName, fullPath, type FoundProject } from '../../../services/projects/lookup.js';
import { rubyStrip } from '../../../services/ruby-text.js';
import { presentSshKey } from '../../../services/groups/ssh-keys.js';
import { integerPathParam, pathParam } from '../repository/common.js';
import { userParam } from '../projects/stars.js';

/** Entities::ProjectIdentity. */
function presentProjectIdentity(p: KeyProject) {
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: fullName(p, { full_name: p.namespaceFullName }),
    path: p.path,
    path_with_namespace: fullPath(p, { full_path: p.namespaceFullPath }),
    created_at: p.createdAt,
  };
}

/**
 * Entities::DeployKey: Entities::SSHKey's fields (`key` in SSHKey's place, the key itself), then
 * the fingerprints; the project lists only in the administrators' instance list.
 */
export function presentDeployKey(k: DeployKeyRow, projects?: KeyProject[]) {
  return {
    ...presentSshKey(k),
    fingerprint: k.fingerprint,
    fingerprint_sha256: k.fingerprint_sha256,
    ...(projects
      ? {
          projects_with_write_access: projects.filter((p) => p.canPush).map(presentProjectIdentity),
          projects_with_readonly_access: projects.filter((p) => !p.canPush).map(presentProjectIdentity),
        }
      : {}),
  };
}

/** Entities::DeployKeysProject: the key's fields merged, then the link's `can_push`. */
export function presentProjectDeployKey(k: ProjectDeployKey) {
  return { ...presentDeployKey(k), can_push: k.can_push === 1 };
}

/** `before { authenticate! }`, then `authorize_admin_project`: 401, 404 (hidden project), 403 below Maintainer. */
async function maintainedProject(c: Ctx): Promise<FoundProject> {
  c.requireUser();
  const found = await findProject(c, pathParam(c, 'id'));
  if (found.access < AccessLevel.MAINTAINER) throw forbidden();
  return found;
}

/** `key_id` is an Integer parameter (Grape's 400 `key_id is invalid`), checked after the project. */
function keyIdParam(c: Ctx): number {
  return integerPathParam(c, 'key_id');
}

/** `requires :key, :title`, `optional :expires_at, type: DateTime`. */
function keyInput(c: Ctx): DeployKeyInput {
  c.params.requireAll(['key', 'title']);
  return {
    key: rubyStrip(c.params.string('key') ?? ''),
    title: c.params.string('title') ?? '',
    expiresAt: c.params.datetime('expires_at') ?? null,
  };
}

const deployKeyNotFound = () => notFound('Deploy key');

/** The validation error of a key whose fingerprint another key holds. */
function fingerprintTakenError(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.status !== 400) return false;
  const message = (err.body as { message?: { deploy_key?: { fingerprint_sha256?: unknown } } } | null)?.message;
  return Array.isArray(message?.deploy_key?.fingerprint_sha256);
}

export function registerDeployKeyRoutes(app: FastifyInstance): void {
  registerDeployKeyHooks();

  // GET /deploy_keys: every key of the instance with the projects it is enabled in (administrators).
  route(app, 'GET', '/deploy_keys', async function listAllDeployKeys(c) {
    c.requireUser();
    const publicOnly = c.params.bool('public') ?? false;
    c.requireAdmin();
    const rows = await paginateOffset(c, allDeployKeys(c.app.db, publicOnly));
    const byKey = new Map<number, KeyProject[]>(rows.map((r) => [r.id, []]));
    for (const p of await projectsOfDeployKeys(c.app.db, [...byKey.keys()])) byKey.get(p.deployKeyId)?.push(p);
    return rows.map((r) => presentDeployKey(r, byKey.get(r.id)));
  });

  // POST /deploy_keys: an instance-wide (public) key, in no project (administrators).
  route(app, 'POST', '/deploy_keys', async function createInstanceDeployKey(c) {
    c.requireUser();
    const input = keyInput(c);
    const admin = c.requireAdmin();
    return presentDeployKey(await createPublicDeployKey(c.app, admin.id, input));
  });

  // GET /projects/:id/deploy_keys
  route(app, 'GET', '/projects/:id/deploy_keys', async function listProjectDeployKeys(c) {
    const { project } = await maintainedProject(c);
    const rows = await paginateOffset(c, deployKeysOfProject(c.app.db, project.id));
    return rows.map(presentProjectDeployKey);
  });

  // GET /projects/:id/deploy_keys/:key_id
  route(app, 'GET', '/projects/:id/deploy_keys/:key_id', async function getProjectDeployKey(c) {
    const { project } = await maintainedProject(c);
    const row = await findProjectDeployKey(c.app.db, project.id, keyIdParam(c));
    // find_by! — ActiveRecord's 404, not the resource-named one.
    if (!row) throw notFound();
    return presentProjectDeployKey(row);
  });

  // POST /projects/:id/deploy_keys: the project's own key with this text back; else a key the
  // caller can see in another project (or a public one) enabled here; else a new private key.
  route(app, 'POST', '/projects/:id/deploy_keys', async function addProjectDeployKey(c) {
    const { project } = await maintainedProject(c);
    const input = keyInput(c);
    const canPush = c.params.bool('can_push') ?? false;
    const user = c.requireUser();
    const text = lookupText(input.key);
    const existing = async () => {
      const here = await findProjectDeployKeyByText(c.app.db, project.id, text);
      if (here) return here;
      const reachable = await findAccessibleDeployKey(c.app.db, user, { text });
      return reachable ? await enableDeployKey(c.app, project.id, reachable.id, canPush) : undefined;
    };
    const found = await existing();
    if (found) return presentProjectDeployKey(found);
    try {
      return presentProjectDeployKey(await createProjectDeployKey(c.app, project.id, user.id, input, canPush));
    } catch (err) {
      // The same key made by a request running alongside (it took the fingerprint first): found
      // now, it is returned or enabled as it would have been a moment later.
      if (!fingerprintTakenError(err)) throw err;
      const after = await existing();
      if (after) return presentProjectDeployKey(after);
      throw err;
    }
  });

  // PUT /projects/:id/deploy_keys/:key_id: `can_push` of the link, the key's `title` when the
  // caller may change the key itself.
  route(app, 'PUT', '/projects/:id/deploy_keys/:key_id', async function updateProjectDeployKeyRoute(c) {
    const { project } = await maintainedProject(c);
    const keyId = keyIdParam(c);
    c.params.requireAtLeastOne(['title', 'can_push']);
    const title = c.params.has('title') ? (c.params.raw.title === null ? '' : (c.params.string('title') ?? '')) : undefined;
    const canPush = c.params.bool('can_push');
    const current = await findProjectDeployKey(c.app.db, project.id, keyId);
    if (!current) throw notFound();
    const updated = await updateProjectDeployKey(c.app, c.requireUser(), project.id, current, { title, canPush });
    if (!updated) throw forbidden();
    return presentProjectDeployKey(updated);
  });

  // POST /projects/:id/deploy_keys/:key_id/enable (Projects::EnableDeployKeyService): 201 with the key.
  route(app, 'POST', '/projects/:id/deploy_keys/:key_id/enable', async function enableProjectDeployKey(c) {
    const { project } = await maintainedProject(c);
    const keyId = keyIdParam(c);
    const key = await findAccessibleDeployKey(c.app.db, c.requireUser(), { id: keyId });
    if (!key) throw deployKeyNotFound();
    const enabled = await enableDeployKey(c.app, project.id, key.id, false);
    if (!enabled) throw deployKeyNotFound();
    return presentDeployKey(enabled);
  });

  // DELETE /projects/:id/deploy_keys/:key_id: the link goes; a private key in no other project too.
  route(app, 'DELETE', '/projects/:id/deploy_keys/:key_id', async function removeProjectDeployKey(c) {
    const { project } = await maintainedProject(c);
    const keyId = keyIdParam(c);
    const link = await findProjectDeployKey(c.app.db, project.id, keyId);
    if (!link) throw deployKeyNotFound();
    refuseIfModifiedSince(c, link.link_updated_at);
    if (!(await disableDeployKey(c.app, project.id, keyId))) throw deployKeyNotFound();
  });

  // GET /users/:id/project_deploy_keys: the keys of the projects the caller and the user both maintain.
  route(app, 'GET', '/users/:id/project_deploy_keys', async function listUserProjectDeployKeys(c) {
    const caller = c.requireUser();
    const target = await userParam(c, 'id');
    const query = await commonProjectDeployKeys(c.app.db, caller, target);
    if (!query) throw forbidden('No common authorized project found');
    const rows = await paginateOffset(c, query);
    return rows.map((r) => presentDeployKey(r));
  });
}
