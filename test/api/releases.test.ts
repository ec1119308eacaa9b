// Releases (GitLab's releases and release links APIs) on both databases: what release tooling
// (release-cli, semantic-release, glab release) does with them, and who may do what.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, repo } from './mr-helpers.js';

let s: TestServer;
let pid: number;
let privPid: number;
let path: string;
let dev: { id: number; token: string };
let reporter: { id: number; token: string };
let guest: { id: number; token: string };
let outsider: { id: number; token: string };

const RELEASE_KEYS = [
  'name', 'tag_name', 'description', 'created_at', 'released_at', 'upcoming_release', 'author', 'commit',
  'commit_path', 'tag_path', 'assets', 'evidences', '_links',
];

beforeAll(async () => {
  s = await startServer();
  dev = await s.createUser('rdev');
  reporter = await s.createUser('rreporter');
  guest = await s.createUser('rguest');
  outsider = await s.createUser('routsider');
  const p = await createProject(s, 'rel', { visibility: 'public' });
  pid = p.id;
  path = p.path_with_namespace;
  privPid = (await createProject(s, 'rel-priv')).id;
  for (const id of [pid, privPid]) {
    await addMember(s, id, dev.id, 30);
    await addMember(s, id, reporter.id, 20);
    await addMember(s, id, guest.id, 10);
  }
  await commit(s, pid, 'main', { 'v1.txt': '1' });
  expect((await s.request('POST', `/projects/${pid}/repository/tags`, { json: { tag_name: 'v1.0.0', ref: 'main' } })).status).toBe(201);
});
afterAll(async () => {
  await closeServer(s);
});

describe('releases', () => {
  it('a release of an existing tag: the entity, the tag shows it, defaults', async () => {
    const r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v1.0.0', description: 'First **release**' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(RELEASE_KEYS);
    const sha = await repo(s, pid).branchSha('main');
    expect(r.body).toMatchObject({
      name: 'v1.0.0', tag_name: 'v1.0.0', description: 'First **release**', upcoming_release: false,
      commit_path: `/${path}/-/commit/${sha}`, tag_path: `/${path}/-/tags/v1.0.0`, evidences: [],
    });
    expect(r.body.commit.id).toBe(sha);
    expect(r.body.author.username).toBe('rdev');
    expect(r.body.released_at).toBe(r.body.created_at);
    expect(r.body.assets.count).toBe(4);
    expect(r.body.assets.sources.map((x: any) => x.format)).toEqual(['zip', 'tar.gz', 'tar.bz2', 'tar']);
    expect(r.body.assets.sources[0].url).toBe(`${s.url}/${path}/-/archive/v1.0.0/rel-v1.0.0.zip`);
    expect(r.body.assets.links).toEqual([]);
    expect(r.body._links).toEqual({ edit_url: `${s.url}/${path}/-/releases/v1.0.0/edit`, self: `${s.url}/${path}/-/releases/v1.0.0` });
    expect(Object.keys(r.body._links)).toEqual(['edit_url', 'self']);
    const tag = await s.request('GET', `/projects/${pid}/repository/tags/v1.0.0`);
    expect(tag.body.release).toEqual({ tag_name: 'v1.0.0', description: 'First **release**' });
    const html = await s.request('GET', `/projects/${pid}/releases/v1.0.0?include_html_description=true`);
    expect(html.body.description_html).toContain('<strong>release</strong>');
    expect((await s.request('GET', `/projects/${pid}/releases/v1.0.0`)).body.description_html).toBeUndefined();
    // Once only.
    const again = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v1.0.0' } });
    expect([again.status, again.body]).toEqual([409, { message: 'Release already exists' }]);
  });

  it('a new tag from ref (annotated with tag_message), links and milestones; errors write nothing', async () => {
    await commit(s, pid, 'main', { 'v2.txt': '2' });
    expect((await s.request('POST', `/projects/${pid}/milestones`, { json: { title: '2.0' } })).status).toBe(201);
    let r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0' } });
    expect([r.status, r.body]).toEqual([422, { message: 'Ref is not specified' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0', ref: 'nope' } });
    expect([r.status, r.body]).toEqual([400, { message: 'Target nope is invalid' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'bad..name', ref: 'main' } });
    expect([r.status, r.body]).toEqual([400, { message: 'Tag name invalid' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0', ref: 'main', milestones: ['2.0', '9.9'] } });
    expect([r.status, r.body]).toEqual([400, { message: 'Milestone(s) not found: 9.9' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0', ref: 'main', assets: { links: [{ name: 'bin', url: 'javascript:alert(1)' }] } } });
    expect([r.status, r.body]).toEqual([400, { message: 'Validation failed: Links url is blocked: Only allowed schemes are http, https, ftp' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0', ref: 'main', assets: { links: [{ name: 'a', url: 'https://x.test/a' }, { name: 'a', url: 'https://x.test/b' }] } } });
    expect([r.status, r.body]).toEqual([400, { message: 'Validation failed: Links have duplicate values (a)' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0', ref: 'main', assets: { links: [{ url: 'https://x.test/a' }] } } });
    expect([r.status, r.body]).toEqual([400, { message: '400 Bad request - "assets[links][name]" not given' }]);
    // A line break in a URL would reach a Location header.
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0', ref: 'main', assets: { links: [{ name: 'x', url: 'https://a.test/x\r\nSet-Cookie: a=b' }] } } });
    expect([r.status, r.body]).toEqual([400, { message: 'Validation failed: Links url must be a valid URL' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: '', ref: 'main' } });
    expect([r.status, r.body]).toEqual([400, { message: 'Tag name invalid' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: '' } });
    expect([r.status, r.body]).toEqual([422, { message: 'Ref is not specified' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0', ref: 'main', released_at: 'soon' } });
    expect([r.status, r.body]).toEqual([400, { error: 'released_at is invalid' }]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0.0', ref: 'main', milestones: ['2.0'], milestone_ids: [1] } });
    expect(r.status).toBe(400);
    expect(await repo(s, pid).findTag('v2.0.0')).toBeNull();

    r = await s.request('POST', `/projects/${pid}/releases`, {
      token: dev.token,
      json: {
        tag_name: 'v2.0.0', ref: 'main', tag_message: 'Version 2', name: 'Two', milestones: ['2.0'],
        assets: { links: [{ name: 'Linux binary', url: 'https://downloads.test/app-linux', direct_asset_path: '/bin/app-linux', link_type: 'package' }] },
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.name).toBe('Two');
    expect(r.body.milestones.map((m: any) => [m.title, m.issue_stats])).toEqual([['2.0', { total: 0, closed: 0 }]]);
    expect(r.body.assets.count).toBe(5);
    const link = r.body.assets.links[0];
    expect(link).toEqual({
      id: link.id, name: 'Linux binary', url: 'https://downloads.test/app-linux',
      direct_asset_url: `${s.url}/${path}/-/releases/v2.0.0/downloads/bin/app-linux`, link_type: 'package',
    });
    const tag = await repo(s, pid).findTag('v2.0.0');
    expect(tag?.message?.trim()).toBe('Version 2');
    // The direct asset path redirects to the link.
    const dl = await s.request('GET', `/projects/${pid}/releases/v2.0.0/downloads/bin/app-linux`);
    expect([dl.status, dl.headers.get('location')]).toEqual([302, 'https://downloads.test/app-linux']);
  });

  it('list order, upcoming and historical releases, the latest permalink', async () => {
    await commit(s, pid, 'main', { 'v3.txt': '3' });
    const future = new Date(Date.now() + 86_400_000).toISOString();
    let r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v3.0.0', ref: 'main', released_at: future } });
    expect([r.status, r.body.upcoming_release, r.body.released_at]).toEqual([201, true, future]);
    r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v0.9.0', ref: 'main', released_at: '2020-01-01T00:00:00Z' } });
    expect(r.body.upcoming_release).toBe(false);
    r = await s.request('GET', `/projects/${pid}/releases`, { token: null });
    expect(r.body.map((x: any) => x.tag_name)).toEqual(['v3.0.0', 'v2.0.0', 'v1.0.0', 'v0.9.0']);
    expect(r.headers.get('x-total')).toBe('4');
    r = await s.request('GET', `/projects/${pid}/releases?order_by=created_at&sort=asc&per_page=2`);
    expect(r.body.map((x: any) => x.tag_name)).toEqual(['v1.0.0', 'v2.0.0']);
    r = await s.request('GET', `/projects/${pid}/releases?sort=sideways`);
    expect([r.status, r.body]).toEqual([400, { error: 'sort does not have a valid value' }]);
    r = await s.request('GET', `/projects/${pid}/releases/permalink/latest`);
    expect([r.status, r.headers.get('location')]).toEqual([302, `/api/v4/projects/${pid}/releases/v3.0.0`]);
    r = await s.request('GET', `/projects/${pid}/releases/permalink/latest/assets/links?per_page=5&order_by=x&a[]=1&h[x]=2`);
    expect(r.headers.get('location')).toBe(`/api/v4/projects/${pid}/releases/v3.0.0/assets/links?per_page=5&a[]=1&h[x]=2`);
    // (Literal and %2E dot segments are removed by the client's URL parser before they are sent.)
    for (const bad of ['..%2F..%2Fusers', '%0d%0aX:%20y', 'a/%2E%2E%2Fb']) {
      r = await s.request('GET', `/projects/${pid}/releases/permalink/latest/${bad}`);
      expect([r.status, r.body], bad).toEqual([400, { error: 'suffix_path should be a valid file path' }]);
    }
    r = await s.request('GET', `/projects/${pid}/releases/permalink/latest/a%3Fb`);
    expect(r.headers.get('location')).toBe(`/api/v4/projects/${pid}/releases/v3.0.0/a%3Fb`);
    r = await s.request('GET', `/projects/${privPid}/releases/permalink/latest`);
    expect([r.status, r.body]).toEqual([404, { message: '404 Not Found' }]);
  });

  it('update and delete; deleting a tag deletes its release', async () => {
    let r = await s.request('PUT', `/projects/${pid}/releases/v1.0.0`, { token: dev.token, json: { name: 'One', description: 'Edited', milestones: ['2.0'] } });
    expect([r.status, r.body.name, r.body.description, r.body.milestones.length]).toEqual([200, 'One', 'Edited', 1]);
    r = await s.request('PUT', `/projects/${pid}/releases/v1.0.0`, { token: dev.token, json: { milestones: [] } });
    expect(r.body.milestones).toBeUndefined();
    r = await s.request('PUT', `/projects/${pid}/releases/v1.0.0`, { token: dev.token, json: {} });
    expect([r.status, r.body]).toEqual([400, { message: 'params is empty' }]);
    // No release: GitLab authorizes on the release it did not find, 403.
    expect((await s.request('PUT', `/projects/${pid}/releases/nope`, { token: dev.token, json: { name: 'x' } })).status).toBe(403);
    expect((await s.request('POST', `/projects/${pid}/repository/tags`, { json: { tag_name: 'bare', ref: 'main' } })).status).toBe(201);
    expect((await s.request('PUT', `/projects/${pid}/releases/bare`, { token: dev.token, json: { name: 'x' } })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${pid}/releases/bare`, { token: dev.token })).status).toBe(403);
    // A release whose tag was deleted with git: not editable, but deletable.
    await commit(s, pid, 'main', { 'orphan.txt': 'o' });
    expect((await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'orphan', ref: 'main' } })).status).toBe(201);
    const orphan = (await repo(s, pid).findTag('orphan'))!;
    await repo(s, pid).deleteTag('orphan', orphan.sha);
    r = await s.request('PUT', `/projects/${pid}/releases/orphan`, { token: dev.token, json: { name: 'x' } });
    expect([r.status, r.body]).toEqual([404, { message: 'Tag does not exist' }]);
    expect((await s.request('DELETE', `/projects/${pid}/releases/orphan`, { token: dev.token })).status).toBe(200);
    r = await s.request('GET', `/projects/${pid}/releases/bare`);
    expect([r.status, r.body]).toEqual([404, { message: '404 Not Found' }]);

    // DELETE answers the release it deleted; the tag stays.
    r = await s.request('DELETE', `/projects/${pid}/releases/v0.9.0`, { token: dev.token });
    expect([r.status, r.body.tag_name]).toEqual([200, 'v0.9.0']);
    expect((await s.request('GET', `/projects/${pid}/releases/v0.9.0`)).status).toBe(404);
    expect(await repo(s, pid).findTag('v0.9.0')).not.toBeNull();
    // Deleting the tag takes its release with it.
    expect((await s.request('DELETE', `/projects/${pid}/repository/tags/v3.0.0`)).status).toBe(204);
    expect((await s.request('GET', `/projects/${pid}/releases/v3.0.0`)).status).toBe(404);
  });

  it('asset links: list, add, change, delete, with their checks', async () => {
    const base = `/projects/${pid}/releases/v2.0.0/assets/links`;
    let r = await s.request('POST', base, { token: dev.token, json: { name: 'Docs', url: 'https://docs.test/v2' } });
    expect([r.status, r.body.link_type, r.body.direct_asset_url]).toEqual([201, 'other', 'https://docs.test/v2']);
    const docs = r.body;
    r = await s.request('POST', base, { token: dev.token, json: { name: 'Docs', url: 'https://docs.test/other' } });
    expect([r.status, r.body]).toEqual([400, { message: ['Name has already been taken'] }]);
    r = await s.request('POST', base, { token: dev.token, json: { name: 'Path', url: 'ftp://docs.test/p', direct_asset_path: `/${'a'.repeat(200)}` } });
    expect([r.status, r.body]).toEqual([400, { message: ['Filepath is too long (maximum is 128 characters)'] }]);
    r = await s.request('POST', base, { token: dev.token, json: { name: 'Path', url: 'gopher://docs.test/p' } });
    expect([r.status, r.body]).toEqual([400, { message: ['Url is blocked: Only allowed schemes are http, https, ftp'] }]);
    // Racing adds of one name: one wins, the others are the same 400, none a 500.
    const race = await Promise.all([1, 2, 3, 4].map((i) => s.request('POST', base, { token: dev.token, json: { name: 'Racer', url: `https://docs.test/r${i}` } })));
    expect(race.map((x) => x.status).sort()).toEqual([201, 400, 400, 400]);
    const racer = race.find((x) => x.status === 201)!.body;
    expect((await s.request('DELETE', `${base}/${racer.id}`, { token: dev.token })).status).toBe(200);
    r = await s.request('POST', base, { token: dev.token, json: { name: 'x', url: 'https://docs.test/x', link_type: 'song' } });
    expect([r.status, r.body]).toEqual([400, { error: 'link_type does not have a valid value' }]);
    r = await s.request('GET', base);
    expect(r.body.map((l: any) => l.name)).toEqual(['Docs', 'Linux binary']);
    r = await s.request('PUT', `${base}/${docs.id}`, { token: dev.token, json: { name: 'Manual', link_type: 'runbook' } });
    expect([r.status, r.body.name, r.body.url, r.body.link_type]).toEqual([200, 'Manual', 'https://docs.test/v2', 'runbook']);
    r = await s.request('PUT', `${base}/${docs.id}`, { token: dev.token, json: { link_type: 'image' } });
    expect([r.status, r.body]).toEqual([400, { error: 'name, url are missing, at least one parameter must be provided' }]);
    r = await s.request('PUT', `${base}/${docs.id}`, { token: dev.token, json: { name: 'Linux binary' } });
    expect([r.status, r.body]).toEqual([400, { message: ['Name has already been taken'] }]);
    r = await s.request('GET', `${base}/999999`);
    expect([r.status, r.body]).toEqual([404, { message: '404 Not found' }]);
    expect((await s.request('GET', `${base}/9999999999`)).status).toBe(404);
    expect((await s.request('GET', `/projects/${pid}/releases/none/assets/links`)).body).toEqual({ message: '404 Not found' });
    expect((await s.request('GET', `/projects/${pid}/releases/v2.0.0/downloads/no/such`)).body).toEqual({ message: '404 Not found' });
    r = await s.request('DELETE', `${base}/${docs.id}`, { token: reporter.token });
    expect(r.status).toBe(403);
    r = await s.request('DELETE', `${base}/${docs.id}`, { token: dev.token });
    expect([r.status, r.body.name]).toEqual([200, 'Manual']);
    expect((await s.request('GET', base)).body.map((l: any) => l.name)).toEqual(['Linux binary']);
  });

  it('who may read and write', async () => {
    // Reporters read but do not write; anonymous callers read a public project's releases.
    expect((await s.request('POST', `/projects/${pid}/releases`, { token: reporter.token, json: { tag_name: 'v1.0.0' } })).status).toBe(403);
    expect((await s.request('POST', `/projects/${pid}/releases`, { token: null, json: { tag_name: 'v1.0.0' } })).status).toBe(401);
    expect((await s.request('PUT', `/projects/${pid}/releases/v1.0.0`, { token: reporter.token, json: { name: 'x' } })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${pid}/releases/v1.0.0`, { token: reporter.token })).status).toBe(403);
    const anon = await s.request('GET', `/projects/${pid}/releases/v1.0.0`, { token: null });
    expect([anon.status, anon.body._links]).toEqual([200, { self: `${s.url}/${path}/-/releases/v1.0.0` }]);
    // A private project: a Guest sees that releases exist but not their tags or code; outsiders nothing.
    await commit(s, privPid, 'main', { 'p.txt': 'p' });
    expect((await s.request('POST', `/projects/${privPid}/releases`, { token: dev.token, json: { tag_name: 'p1', ref: 'main' } })).status).toBe(201);
    expect((await s.request('POST', `/projects/${privPid}/releases/p1/assets/links`, { token: dev.token, json: { name: 'pkg', url: 'https://p.test/pkg' } })).status).toBe(201);
    const asGuest = await s.request('GET', `/projects/${privPid}/releases`, { token: guest.token });
    expect(asGuest.body).toHaveLength(1);
    expect([asGuest.body[0].name, asGuest.body[0].tag_name]).toEqual(['p1', 'p1']);
    for (const hidden of ['commit', 'commit_path', 'tag_path', 'evidences']) expect(asGuest.body[0][hidden], hidden).toBeUndefined();
    expect(asGuest.body[0].assets.count).toBe(1);
    expect(asGuest.body[0].assets.sources).toBeUndefined();
    expect((await s.request('GET', `/projects/${privPid}/releases/p1`, { token: guest.token })).status).toBe(403);
    // The links API asks only to read releases.
    expect((await s.request('GET', `/projects/${privPid}/releases/p1/assets/links`, { token: guest.token })).body.map((l: any) => l.name)).toEqual(['pkg']);
    expect((await s.request('POST', `/projects/${privPid}/releases/p1/assets/links`, { token: guest.token, json: { name: 'x', url: 'https://p.test/x' } })).status).toBe(403);
    expect((await s.request('GET', `/projects/${privPid}/releases`, { token: outsider.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${privPid}/releases/p1`, { token: reporter.token })).body.tag_name).toBe('p1');
    // An archived project takes no releases.
    expect((await s.request('POST', `/projects/${privPid}/archive`)).status).toBe(201);
    expect((await s.request('PUT', `/projects/${privPid}/releases/p1`, { json: { name: 'x' } })).status).toBe(403);
  });

  it('racing creations of one release: one 201, the others 409; tags with a slash', async () => {
    await commit(s, pid, 'main', { 'race.txt': 'r' });
    expect((await s.request('POST', `/projects/${pid}/repository/tags`, { json: { tag_name: 'race-1', ref: 'main' } })).status).toBe(201);
    let race = await Promise.all([1, 2, 3, 4, 5, 6].map(() => s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'race-1' } })));
    expect(race.map((x) => x.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    // Through ref: the tag is made by one of them.
    race = await Promise.all([1, 2, 3, 4].map(() => s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'race-2', ref: 'main' } })));
    expect(race.map((x) => x.status).sort(), JSON.stringify(race.map((x) => x.body?.message))).toEqual([201, 409, 409, 409]);
    const r = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'debian/1.0', ref: 'main' } });
    expect(r.body.tag_path).toBe(`/${path}/-/tags/debian%2F1.0`);
    expect(r.body.assets.sources[0].url).toBe(`${s.url}/${path}/-/archive/debian/1.0/rel-debian-1.0.zip`);
    expect(r.body._links.self).toBe(`${s.url}/${path}/-/releases/debian%2F1.0`);
    expect((await s.request('GET', `/projects/${pid}/releases/debian%2F1.0`)).body.tag_name).toBe('debian/1.0');
  });

  it('a deleted project takes its releases and their links with it', async () => {
    const gone = (await createProject(s, 'rel-gone')).id;
    await commit(s, gone, 'main', { 'g.txt': 'g' });
    const r = await s.request('POST', `/projects/${gone}/releases`, { json: { tag_name: 'g1', ref: 'main', assets: { links: [{ name: 'a', url: 'https://g.test/a' }] } } });
    expect(r.status).toBe(201);
    expect((await s.request('DELETE', `/projects/${gone}`)).status).toBe(202);
    const db = s.app.lw.db;
    expect(await db.selectFrom('releases').select('id').where('project_id', '=', gone).execute()).toEqual([]);
    expect(await db.selectFrom('release_links').select('id').where('url', '=', 'https://g.test/a').execute()).toEqual([]);
  });

  it('@gitbeaker/rest ProjectReleases and ReleaseLinks', async () => {
    const api = new Gitlab({ host: s.url, token: ROOT_TOKEN });
    await commit(s, pid, 'main', { 'gb.txt': 'gb' });
    const created = await api.ProjectReleases.create(pid, { tagName: 'gb-1', ref: 'main', name: 'From gitbeaker', description: 'notes' });
    expect([created.tag_name, created.name]).toEqual(['gb-1', 'From gitbeaker']);
    const shown = await api.ProjectReleases.show(pid, 'gb-1');
    expect(shown.description).toBe('notes');
    const all = await api.ProjectReleases.all(pid);
    expect(all.map((x) => x.tag_name)).toContain('gb-1');
    const edited = await api.ProjectReleases.edit(pid, 'gb-1', { description: 'better notes' });
    expect(edited.description).toBe('better notes');
    const link = await api.ReleaseLinks.create(pid, 'gb-1', 'tarball', 'https://dl.test/gb-1.tgz');
    expect(link.name).toBe('tarball');
    expect((await api.ReleaseLinks.all(pid, 'gb-1')).map((l) => l.url)).toEqual(['https://dl.test/gb-1.tgz']);
    await api.ProjectReleases.remove(pid, 'gb-1');
    await expect(api.ProjectReleases.show(pid, 'gb-1')).rejects.toThrow(/404|Not Found/);
  });
});
