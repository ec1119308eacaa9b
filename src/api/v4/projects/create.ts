// POST /projects and POST /projects/user/:user_id.
import type { FastifyInstance } from 'fastify';
import { findUserById } from '../../../db/repositories/users.js';
import { notFound, paramError, validationError } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { readNamespaceRef, readProjectAttrs } from '../../../services/projects/attrs.js';
import { createProject } from '../../../services/projects/create.js';
import { canCreateProjectIn, findReadableNamespace } from '../../../services/projects/namespaces.js';
import type { NamespaceRow } from '../../../services/projects/lookup.js';
import type { UserRow } from '../../../db/repositories/users.js';
import { presentProjectFor } from '../entities/project.js';

/** The user's personal namespace (404 `Namespace Not Found` if it is missing). */
export async function personalNamespace(c: Ctx, user: UserRow): Promise<NamespaceRow> {
  const ns = await c.app.db.selectFrom('namespaces').selectAll().where('kind', '=', 'user').where('owner_id', '=', user.id).executeTakeFirst();
  if (!ns) throw notFound('Namespace');
  return ns;
}

async function createFor(c: Ctx, owner: UserRow, actor: UserRow) {
  c.params.requireAtLeastOne(['name', 'path']);
  const attrs = readProjectAttrs(c.params);
  // `{"name": null}` passes the presence check but names nothing: as missing as no name at all.
  if (attrs.name === undefined && attrs.path === undefined) throw paramError('name, path are missing, at least one parameter must be provided');
  const initializeWithReadme = c.params.bool('initialize_with_readme');
  const ref = readNamespaceRef(c.params) ?? readNamespaceRef(c.params, 'namespace');
  const namespace = ref === undefined ? await personalNamespace(c, owner) : await findReadableNamespace(c.app.db, actor, ref);
  if (!(await canCreateProjectIn(c.app.db, actor, namespace))) throw validationError({ namespace: ['is not valid'] });
  const { project, namespace: ns } = await createProject(c.app, owner, Object.assign({}, attrs, { namespace, initializeWithReadme }));
  return presentProjectFor(c.app.db, project, ns, { base: c.base, user: actor });
}

export function registerProjectCreateRoutes(app: FastifyInstance): void {
  // POST /projects
  route(app, 'POST', '/projects', async (c) => {
    const user = c.requireUser();
    return createFor(c, user, user);
  });

  // POST /projects/user/:user_id (administrators create a project for another user)
  route(app, 'POST', '/projects/user/:user_id', async (c) => {
    const admin = c.requireAdmin();
    const userId = c.params.int('user_id');
    const owner = userId !== undefined && userId > 0 ? await findUserById(c.app.db, userId) : undefined;
    if (!owner) throw notFound('User');
    return createFor(c, owner, admin);
  });
}
