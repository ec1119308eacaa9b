// The permission matrix of docs/permissions.md, row by row: every kind of caller against public,
// internal and private projects, for each action, through the real HTTP app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

type Actor = 'anonymous' | 'outsider' | 'external' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
type Vis = 'public' | 'internal' | 'private';
type Action = 'read' | 'list' | 'members' | 'read_repo' | 'push' | 'update' | 'rename' | 'add_member' | 'add_owner' | 'archive' | 'delete';

const ACTORS: Actor[] = ['anonymous', 'outsider', 'external', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const VISIBILITIES: Vis[] = ['public', 'internal', 'private'];
const ACTIONS: Action[] = ['read', 'list', 'members', 'read_repo', 'push', 'update', 'rename', 'add_member', 'add_owner', 'archive', 'delete'];
const LEVEL: Partial<Record<Actor, number>> = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50, admin: 50 };

/** docs/permissions.md, "Visibility: who may see a project". */
function canSee(actor: Actor, vis: Vis): boolean {
  if (LEVEL[actor]) return true;
  if (vis === 'public') return true;
  if (vis === 'internal') return actor === 'outsider';
  return false;
}

/** docs/permissions.md, "What each level may do": the level each action needs. */
const NEEDS: Record<Action, number> = {
  read: 0,
  list: 0,
  members: 0,
  read_repo: 0,
  push: 30,
  update: 40,
  rename: 50,
  add_member: 40,
  add_owner: 50,
  archive: 50,
  delete: 50,
};

function expected(actor: Actor, vis: Vis, action: Action): number | 'listed' | 'not listed' {
  const visible = canSee(actor, vis);
  if (action === 'list') return visible ? 'listed' : 'not listed';
  if (!visible) return 404;
  const level = LEVEL[actor] ?? 0;
  // GitLab's read_code: Reporter+ everywhere, others only where visibility alone shows the project.
  const readsCode = level >= 20 || vis !== 'private';
  if ((action === 'read_repo' || action === 'push') && !readsCode) return 403;
  if (level < NEEDS[action]) return actor === 'anonymous' ? 401 : 403;
  return { read: 200, members: 200, read_repo: 200, push: 201, update: 200, rename: 200, add_member: 201, add_owner: 201, archive: 201, delete: 202, list: 200 }[action];
}

let s: TestServer;
const tokens: Partial<Record<Actor, string | null>> = {};
const projects: Partial<Record<Vis, { id: number; path: string }>> = {};
let newbie: { id: number; token: string };

beforeAll(async () => {
  s = await startServer();
  const owner = await s.createUser('powner');
  tokens.owner = owner.token;
  tokens.anonymous = null;
  tokens.admin = s.rootToken;
  tokens.outsider = (await s.createUser('poutsider')).token;
  const ext = await s.request('POST', '/users', { json: { username: 'pexternal', email: 'pexternal@example.com', name: 'ext', password: 'password-1234', external: true } });
  tokens.external = (await s.request('POST', `/users/${ext.body.id}/personal_access_tokens`, { json: { name: 't', scopes: ['api'] } })).body.token;
  newbie = await s.createUser('pnewbie');
  const members: Record<string, { id: number; token: string }> = {};
  for (const a of ['guest', 'reporter', 'developer', 'maintainer'] as const) {
    members[a] = await s.createUser(`p${a}`);
    tokens[a] = members[a].token;
  }
  for (const vis of VISIBILITIES) {
    const p = (await s.request('POST', '/projects', { token: owner.token, json: { name: `m-${vis}`, visibility: vis, initialize_with_readme: true } })).body;
    projects[vis] = { id: p.id, path: p.path };
    for (const a of ['guest', 'reporter', 'developer', 'maintainer'] as const) {
      const r = await s.request('POST', `/projects/${p.id}/members`, { token: owner.token, json: { user_id: members[a].id, access_level: LEVEL[a] } });
      if (r.status !== 201) throw new Error(`member: ${r.status} ${r.text}`);
    }
  }
});
afterAll(async () => {
  await s?.close();
});

/** Performs one action; successful writes are undone by the administrator so rows stay independent. */
async function perform(actor: Actor, vis: Vis, action: Action): Promise<number | 'listed' | 'not listed'> {
  const token = tokens[actor] ?? null;
  const { id, path } = projects[vis]!;
  switch (action) {
    case 'read':
      return (await s.request('GET', `/projects/${id}`, { token })).status;
    case 'members':
      return (await s.request('GET', `/projects/${id}/members`, { token })).status;
    case 'list': {
      const r = await s.request('GET', '/projects', { token, query: { per_page: 100 } });
      expect(r.status).toBe(200);
      return r.body.some((p: any) => p.id === id) ? 'listed' : 'not listed';
    }
    case 'read_repo':
      return (await s.request('GET', `/projects/${id}/repository/files/README.md`, { token, query: { ref: 'main' } })).status;
    case 'push': {
      const r = await s.request('POST', `/projects/${id}/repository/branches`, { token, json: { branch: `b-${actor}`, ref: 'main' } });
      if (r.status === 201) await s.request('DELETE', `/projects/${id}/repository/branches/b-${actor}`);
      return r.status;
    }
    case 'update':
      return (await s.request('PUT', `/projects/${id}`, { token, json: { description: `by ${actor}` } })).status;
    case 'rename': {
      const r = await s.request('PUT', `/projects/${id}`, { token, json: { path: `${path}-renamed` } });
      if (r.status === 200) await s.request('PUT', `/projects/${id}`, { json: { path } });
      return r.status;
    }
    case 'add_member':
    case 'add_owner': {
      const r = await s.request('POST', `/projects/${id}/members`, { token, json: { user_id: newbie.id, access_level: action === 'add_owner' ? 50 : 10 } });
      if (r.status === 201) await s.request('DELETE', `/projects/${id}/members/${newbie.id}`);
      return r.status;
    }
    case 'archive': {
      const r = await s.request('POST', `/projects/${id}/archive`, { token });
      if (r.status === 201) await s.request('POST', `/projects/${id}/unarchive`);
      return r.status;
    }
    case 'delete': {
      // A throwaway project of the same visibility and membership, so the matrix project survives.
      const throwaway = (await s.request('POST', `/projects/user/${await ownerId()}`, { json: { name: `del-${vis}-${actor}`, visibility: vis } })).body;
      for (const [a, level] of Object.entries(LEVEL)) {
        if (a === 'owner' || a === 'admin') continue;
        const u = await s.request('GET', '/user', { token: tokens[a as Actor]! });
        await s.request('POST', `/projects/${throwaway.id}/members`, { json: { user_id: u.body.id, access_level: level } });
      }
      const r = await s.request('DELETE', `/projects/${throwaway.id}`, { token });
      if (r.status !== 202) await s.request('DELETE', `/projects/${throwaway.id}`);
      return r.status;
    }
  }
}

let cachedOwnerId: number | undefined;
async function ownerId(): Promise<number> {
  cachedOwnerId ??= (await s.request('GET', '/user', { token: tokens.owner! })).body.id;
  return cachedOwnerId!;
}

const rows = VISIBILITIES.flatMap((vis) => ACTORS.flatMap((actor) => ACTIONS.map((action) => ({ vis, actor, action, want: expected(actor, vis, action) }))));

describe('permission matrix (docs/permissions.md)', () => {
  it.each(rows)('$vis project, $actor, $action → $want', async ({ vis, actor, action, want }) => {
    expect(await perform(actor, vis, action)).toBe(want);
  });

  it('a denied write changes nothing', async () => {
    const r = await s.request('GET', `/projects/${projects.public!.id}`, { token: tokens.owner! });
    expect(r.body.description).toMatch(/^by (maintainer|owner|admin)$/);
    expect(r.body.path).toBe(projects.public!.path);
    expect(r.body.archived).toBe(false);
    const members = await s.request('GET', `/projects/${projects.public!.id}/members`, { token: tokens.owner! });
    expect(members.body.map((m: any) => m.username).sort()).toEqual(['pdeveloper', 'pguest', 'pmaintainer', 'powner', 'preporter']);
  });

  it('a Guest of a private project sees the project but not its code (no default_branch, 403 body)', async () => {
    const id = projects.private!.id;
    const asGuest = await s.request('GET', `/projects/${id}`, { token: tokens.guest! });
    expect(asGuest.status).toBe(200);
    expect(asGuest.body).not.toHaveProperty('default_branch');
    expect(asGuest.body).not.toHaveProperty('readme_url');
    expect(asGuest.body.permissions.project_access.access_level).toBe(10);
    const listed = await s.request('GET', '/projects', { token: tokens.guest!, query: { membership: true, simple: true } });
    expect(listed.body.find((p: any) => p.id === id)).not.toHaveProperty('default_branch');
    const asReporter = await s.request('GET', `/projects/${id}`, { token: tokens.reporter! });
    expect(asReporter.body.default_branch).toBe('main');
    const tree = await s.request('GET', `/projects/${id}/repository/tree`, { token: tokens.guest! });
    expect(tree.status).toBe(403);
    expect(tree.body).toEqual({ message: '403 Forbidden' });
    // On a public project the same Guest reads code like anyone else.
    const pub = await s.request('GET', `/projects/${projects.public!.id}`, { token: tokens.guest! });
    expect(pub.body.default_branch).toBe('main');
  });

  it('repository_access_level narrows code reading: private needs Reporter, disabled hides it from everyone', async () => {
    const p = (await s.request('POST', '/projects', { token: tokens.owner!, json: { name: 'repo-levels', visibility: 'public', initialize_with_readme: true } })).body;
    for (const [a, level] of [['guest', 10], ['reporter', 20]] as const) {
      const u = await s.request('GET', '/user', { token: tokens[a]! });
      await s.request('POST', `/projects/${p.id}/members`, { token: tokens.owner!, json: { user_id: u.body.id, access_level: level } });
    }
    const tree = async (actor: Actor) => (await s.request('GET', `/projects/${p.id}/repository/tree`, { token: tokens[actor] ?? null })).status;
    expect([await tree('anonymous'), await tree('outsider'), await tree('guest'), await tree('reporter')]).toEqual([200, 200, 200, 200]);
    await s.request('PUT', `/projects/${p.id}`, { token: tokens.owner!, json: { repository_access_level: 'private' } });
    expect([await tree('anonymous'), await tree('outsider'), await tree('guest'), await tree('reporter')]).toEqual([403, 403, 403, 200]);
    await s.request('PUT', `/projects/${p.id}`, { token: tokens.owner!, json: { repository_access_level: 'disabled' } });
    expect([await tree('reporter'), await tree('owner'), await tree('admin')]).toEqual([403, 403, 403]);
    expect((await s.request('GET', `/projects/${p.id}`, { token: null })).body).not.toHaveProperty('default_branch');
  });

  it('a Reporter through a group share reads the code and sees default_branch', async () => {
    const owner = tokens.owner!;
    const g1 = await s.request('POST', '/groups', { token: owner, json: { name: 'share-src', path: 'share-src', visibility: 'private' } });
    const g2 = await s.request('POST', '/groups', { token: owner, json: { name: 'share-dst', path: 'share-dst', visibility: 'private' } });
    expect([g1.status, g2.status]).toEqual([201, 201]);
    const p = (await s.request('POST', '/projects', { token: owner, json: { name: 'shared-code', namespace_id: g1.body.id, initialize_with_readme: true } })).body;
    const newbieToken = (await s.request('POST', `/users/${newbie.id}/personal_access_tokens`, { json: { name: 't', scopes: ['api'] } })).body.token;
    expect((await s.request('POST', `/groups/${g2.body.id}/members`, { token: owner, json: { user_id: newbie.id, access_level: 30 } })).status).toBe(201);
    expect((await s.request('POST', `/groups/${g1.body.id}/share`, { token: owner, json: { group_id: g2.body.id, group_access: 20 } })).status).toBeLessThan(300);
    const seen = await s.request('GET', `/projects/${p.id}`, { token: newbieToken });
    expect(seen.status).toBe(200);
    expect(seen.body.default_branch).toBe('main');
    expect((await s.request('GET', `/projects/${p.id}/repository/tree`, { token: newbieToken })).status).toBe(200);
    for (const simple of [false, true]) {
      const listed = await s.request('GET', '/projects', { token: newbieToken, query: { simple, per_page: 100 } });
      expect(listed.body.find((x: any) => x.id === p.id)?.default_branch, `simple=${simple}`).toBe('main');
    }
  });

  it('404 bodies for hidden projects are identical to those of missing ids', async () => {
    const hidden = await s.request('GET', `/projects/${projects.private!.id}`, { token: tokens.outsider! });
    const missing = await s.request('GET', '/projects/99999999', { token: tokens.outsider! });
    expect(hidden.status).toBe(missing.status);
    expect(hidden.text).toBe(missing.text);
  });
});
