// The permission matrix of docs/permissions.md, row by row: every kind of caller against public,
// internal and private projects, for each action, through the real HTTP app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

type Actor = 'anonymous' | 'outsider' | 'external' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
type Vis = 'public' | 'internal' | 'private';
type Action = 'read' | 'list' | 'members' | 'update' | 'rename' | 'add_member' | 'add_owner' | 'archive' | 'delete';

const ACTORS: Actor[] = ['anonymous', 'outsider', 'external', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const VISIBILITIES: Vis[] = ['public', 'internal', 'private'];
const ACTIONS: Action[] = ['read', 'list', 'members', 'update', 'rename', 'add_member', 'add_owner', 'archive', 'delete'];
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
  if (level < NEEDS[action]) return actor === 'anonymous' ? 401 : 403;
  return { read: 200, members: 200, update: 200, rename: 200, add_member: 201, add_owner: 201, archive: 201, delete: 202, list: 200 }[action];
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
    const p = (await s.request('POST', '/projects', { token: owner.token, json: { name: `m-${vis}`, visibility: vis } })).body;
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

  it('404 bodies for hidden projects are identical to those of missing ids', async () => {
    const hidden = await s.request('GET', `/projects/${projects.private!.id}`, { token: tokens.outsider! });
    const missing = await s.request('GET', '/projects/99999999', { token: tokens.outsider! });
    expect(hidden.status).toBe(missing.status);
    expect(hidden.text).toBe(missing.text);
  });
});
