import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };
let carol: { id: number; username: string; token: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  carol = await s.createUser('carol');
});
afterAll(async () => {
  await s?.close();
});

async function mk(token: string, body: Record<string, unknown>) {
  const r = await s.request('POST', '/groups', { token, json: body });
  if (r.status !== 201) throw new Error(`create ${JSON.stringify(body)}: ${r.status} ${r.text}`);
  return r.body;
}

describe('POST /groups', () => {
  it('creates a group whose creator is Owner, with GitLab field order', async () => {
    const r = await s.request('POST', '/groups', { token: alice.token, json: { name: 'Alpha Team', path: 'alpha' } });
    expect(r.status).toBe(201);
    expect(r.body.full_path).toBe('alpha');
    expect(r.body.visibility).toBe('private');
    expect(r.body.web_url).toBe(`${s.url}/groups/alpha`);
    expect(Object.keys(r.body).slice(0, 6)).toEqual(['id', 'web_url', 'name', 'path', 'description', 'visibility']);
    expect(r.body.runners_token).toMatch(/^GR1348941/);
    expect(r.body.shared_with_groups).toEqual([]);
    expect(r.body.projects).toEqual([]);
    const keys = Object.keys(r.body);
    expect(keys.indexOf('avatar_url')).toBeLessThan(keys.indexOf('full_name'));
    expect(keys.indexOf('parent_id')).toBeLessThan(keys.indexOf('shared_runners_setting'));
    const members = await s.request('GET', '/groups/alpha', { token: alice.token });
    expect(members.status).toBe(200);
  });

  it('takes arguments in the query string of a POST (python-gitlab style)', async () => {
    const r = await s.request('POST', '/groups?name=Query%20Made&path=query-made&visibility=public', { token: alice.token });
    expect(r.status).toBe(201);
    expect(r.body.visibility).toBe('public');
  });

  it('refuses a taken path with GitLab\'s message, and bad input', async () => {
    const r = await s.request('POST', '/groups', { token: bob.token, json: { name: 'x', path: 'alpha' } });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('Failed to save group {:path=>["has already been taken"]}');
    const missing = await s.request('POST', '/groups', { token: bob.token, json: { name: 'x' } });
    expect(missing.status).toBe(400);
    const badPath = await s.request('POST', '/groups', { token: bob.token, json: { name: 'x', path: '-bad' } });
    expect(badPath.status).toBe(400);
    expect(badPath.body.message).toMatch(/^Failed to save group \{:path=>/);
    const reserved = await s.request('POST', '/groups', { token: bob.token, json: { name: 'x', path: 'api' } });
    expect(reserved.status).toBe(400);
    const badVis = await s.request('POST', '/groups', { token: bob.token, json: { name: 'x', path: 'xx', visibility: 'secret' } });
    expect(badVis.status).toBe(400);
    expect(badVis.body.error).toBe('visibility does not have a valid value');
    const anon = await s.request('POST', '/groups', { token: null, json: { name: 'x', path: 'yy' } });
    expect(anon.status).toBe(401);
  });

  it('creates subgroups only with the right on the parent', async () => {
    const parent = await mk(alice.token, { name: 'Parent', path: 'parent', visibility: 'public' });
    const denied = await s.request('POST', '/groups', { token: bob.token, json: { name: 'Sub', path: 'sub', parent_id: parent.id } });
    expect(denied.status).toBe(403);
    const sub = await s.request('POST', '/groups', { token: alice.token, json: { name: 'Sub', path: 'sub', parent_id: parent.id, visibility: 'internal' } });
    expect(sub.status).toBe(201);
    expect(sub.body.full_path).toBe('parent/sub');
    expect(sub.body.full_name).toBe('Parent / Sub');
    expect(sub.body.parent_id).toBe(parent.id);
    const byPath = await s.request('GET', '/groups/parent%2Fsub', { token: bob.token });
    expect(byPath.status).toBe(200);
    expect(byPath.body.id).toBe(sub.body.id);
    const privParent = await mk(alice.token, { name: 'Closed', path: 'closed' });
    const tooOpen = await s.request('POST', '/groups', { token: alice.token, json: { name: 'Open', path: 'open', parent_id: privParent.id, visibility: 'public' } });
    expect(tooOpen.status).toBe(400);
    const hidden = await s.request('POST', '/groups', { token: bob.token, json: { name: 'S', path: 's', parent_id: privParent.id } });
    expect(hidden.status).toBe(404);
    expect(hidden.body.message).toBe('404 Group Not Found');
  });
});

describe('group visibility', () => {
  let pub: any, internal: any, priv: any;
  beforeAll(async () => {
    pub = await mk(alice.token, { name: 'Vis Public', path: 'vis-public', visibility: 'public' });
    internal = await mk(alice.token, { name: 'Vis Internal', path: 'vis-internal', visibility: 'internal' });
    priv = await mk(alice.token, { name: 'Vis Private', path: 'vis-private', visibility: 'private' });
  });

  const cases: Array<[string, () => string | null, Record<string, number>]> = [
    ['anonymous', () => null, { public: 200, internal: 404, private: 404 }],
    ['outsider', () => bob.token, { public: 200, internal: 200, private: 404 }],
    ['member', () => alice.token, { public: 200, internal: 200, private: 200 }],
    ['admin', () => s.rootToken, { public: 200, internal: 200, private: 200 }],
  ];
  for (const [who, token, expected] of cases) {
    it(`GET /groups/:id as ${who}`, async () => {
      for (const [vis, g] of [['public', pub], ['internal', internal], ['private', priv]] as const) {
        const byId = await s.request('GET', `/groups/${g.id}`, { token: token() });
        expect(byId.status, `${vis} by id`).toBe(expected[vis]);
        const byPath = await s.request('GET', `/groups/${encodeURIComponent(g.full_path)}`, { token: token() });
        expect(byPath.status, `${vis} by path`).toBe(expected[vis]);
        if (expected[vis] === 404) expect(byId.body).toEqual({ message: '404 Group Not Found' });
      }
    });
    it(`GET /groups lists what ${who} may see`, async () => {
      const r = await s.request('GET', '/groups', { token: token(), query: { all_available: 'true', per_page: 100 } });
      expect(r.status).toBe(200);
      const paths = r.body.map((g: any) => g.full_path);
      for (const [vis, g] of [['public', pub], ['internal', internal], ['private', priv]] as const) {
        expect(paths.includes(g.full_path), `${vis}`).toBe(expected[vis] === 200);
      }
    });
  }

  it('an outsider learns nothing about a private group from any group endpoint', async () => {
    for (const [m, p] of [
      ['GET', `/groups/${priv.id}/subgroups`],
      ['GET', `/groups/${priv.id}/descendant_groups`],
      ['GET', `/groups/${priv.id}/projects`],
      ['GET', `/groups/${priv.id}/avatar`],
      ['PUT', `/groups/${priv.id}`],
      ['DELETE', `/groups/${priv.id}`],
      ['POST', `/groups/${priv.id}/transfer`],
      ['POST', `/groups/${priv.id}/share?group_id=${pub.id}&group_access=30`],
    ] as const) {
      const r = await s.request(m, p, { token: bob.token });
      expect(r.status, `${m} ${p}`).toBe(404);
      expect(r.body.message, `${m} ${p}`).toBe('404 Group Not Found');
    }
  });

  it('a member of a subgroup sees the private parent', async () => {
    const top = await mk(alice.token, { name: 'Top Priv', path: 'top-priv' });
    const sub = await mk(alice.token, { name: 'Inner', path: 'inner', parent_id: top.id });
    await s.app.lw.db
      .insertInto('members')
      .values({ source_type: 'Namespace', source_id: sub.id, user_id: carol.id, access_level: 30, expires_at: null, created_by_id: null, member_role_id: null, created_at: new Date().toISOString(), updated_at: new Date().toISOString() })
      .execute();
    await s.settle();
    expect((await s.request('GET', `/groups/${top.id}`, { token: carol.token })).status).toBe(200);
    expect((await s.request('GET', `/groups/${sub.id}`, { token: carol.token })).status).toBe(200);
    const mine = await s.request('GET', '/groups', { token: carol.token });
    expect(mine.body.map((g: any) => g.full_path)).toContain('top-priv/inner');
  });
});

describe('GET /groups parameters', () => {
  beforeAll(async () => {
    for (const n of ['list-a', 'list-b', 'list-c']) await mk(bob.token, { name: n.toUpperCase(), path: n, visibility: 'public' });
  });

  it('orders by name by default and honours order_by, sort, search, skip_groups[]', async () => {
    const r = await s.request('GET', '/groups?search=list-&order_by=path&sort=desc', { token: bob.token });
    expect(r.body.map((g: any) => g.path)).toEqual(['list-c', 'list-b', 'list-a']);
    const ids = r.body.map((g: any) => g.id);
    const skipped = await s.request('GET', `/groups?search=list-&skip_groups[]=${ids[0]}&skip_groups[]=${ids[1]}`, { token: bob.token });
    expect(skipped.body.map((g: any) => g.path)).toEqual(['list-a']);
    const bad = await s.request('GET', '/groups?order_by=size', { token: bob.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('order_by does not have a valid value');
    const badLevel = await s.request('GET', '/groups?min_access_level=31', { token: bob.token });
    expect(badLevel.status).toBe(400);
  });

  it('owned, min_access_level, top_level_only, visibility, all_available', async () => {
    const owned = await s.request('GET', '/groups?owned=true&per_page=100', { token: bob.token });
    expect(owned.body.map((g: any) => g.path).sort()).toEqual(['list-a', 'list-b', 'list-c']);
    const mine = await s.request('GET', '/groups?min_access_level=50&per_page=100', { token: bob.token });
    expect(mine.body.length).toBe(3);
    const notMine = await s.request('GET', '/groups?per_page=100', { token: carol.token });
    expect(notMine.body.map((g: any) => g.path)).not.toContain('list-a');
    const all = await s.request('GET', '/groups?all_available=true&visibility=public&top_level_only=true&per_page=100', { token: carol.token });
    expect(all.body.map((g: any) => g.path)).toContain('list-a');
    expect(all.body.every((g: any) => g.visibility === 'public' && g.parent_id === null)).toBe(true);
  });

  it('defaults to 20 per page and clamps per_page to 100', async () => {
    for (let i = 0; i < 21; i++) await mk(carol.token, { name: `Page ${String(i).padStart(2, '0')}`, path: `page-${i}`, visibility: 'public' });
    const d = await s.request('GET', '/groups?search=page-', { token: carol.token });
    expect(d.body.length).toBe(20);
    expect(d.headers.get('x-per-page')).toBe('20');
    expect(d.headers.get('x-next-page')).toBe('2');
    const big = await s.request('GET', '/groups?search=page-&per_page=500', { token: carol.token });
    expect(big.headers.get('x-per-page')).toBe('100');
    expect(big.body.length).toBe(21);
  });

  it('accepts §4.4 settings on create, with the same validation', async () => {
    const r = await s.request('POST', '/groups', { token: carol.token, json: { name: 'Set', path: 'set-on-create', project_creation_level: 'noone', request_access_enabled: false, membership_lock: true } });
    expect(r.status).toBe(201);
    expect(r.body.project_creation_level).toBe('noone');
    expect(r.body.request_access_enabled).toBe(false);
    expect(r.body.membership_lock).toBeUndefined();
    const bad = await s.request('POST', '/groups', { token: carol.token, json: { name: 'Set', path: 'set-bad', two_factor_grace_period: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('Failed to save group {:two_factor_grace_period=>["must be greater than or equal to 0"]}');
  });

  it('pages with offset headers; anonymous callers get keyset by name and the 50,000 cap', async () => {
    const page = await s.request('GET', '/groups?search=list-&per_page=2', { token: null });
    expect(page.status).toBe(200);
    expect(page.body.length).toBe(2);
    expect(page.headers.get('x-total')).toBe('3');
    const capped = await s.request('GET', '/groups?page=501&per_page=100', { token: null });
    expect(capped.status).toBe(405);
    expect(capped.body.error).toBe(
      'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Group. Remaining records can be retrieved using keyset pagination.',
    );
    const ks = await s.request('GET', '/groups?search=list-&pagination=keyset&per_page=2', { token: null });
    expect(ks.status).toBe(200);
    expect(ks.body.map((g: any) => g.path)).toEqual(['list-a', 'list-b']);
    const link = ks.headers.get('link')!;
    expect(link).toMatch(/cursor=/);
    const url = link.slice(1, link.indexOf('>'));
    const second = await s.request('GET', url, { token: null });
    expect(second.body.map((g: any) => g.path)).toEqual(['list-c']);
    const wrongOrder = await s.request('GET', '/groups?pagination=keyset&order_by=id', { token: null });
    expect(wrongOrder.status).toBe(405);
  });
});
