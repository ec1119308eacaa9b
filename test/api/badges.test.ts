// Project and group badges: GitLab's entity with placeholders rendered from the project, a project's
// list with its groups' badges, who may read and change them, GitLab's messages, and python-gitlab's
// and gitbeaker's calls.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let maint: U;
let group: { id: number; full_path: string };
let project: { id: number; path_with_namespace: string };
const KEYS = ['name', 'link_url', 'image_url', 'rendered_link_url', 'rendered_image_url', 'id', 'kind'];

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('bgowner');
  dev = await s.createUser('bgdev');
  maint = await s.createUser('bgmaint');
  const g = await s.request('POST', '/groups', { token: owner.token, json: { name: 'Badged', path: 'badged', visibility: 'public' } });
  group = g.body;
  project = await createProject(s, 'site', { token: owner.token, visibility: 'public', extra: { namespace_id: group.id } });
  await addMember(s, project.id, dev.id, 30);
  await addMember(s, project.id, maint.id, 40);
}, 60_000);

afterAll(async () => closeServer(s));

describe('project badges', () => {
  it('Maintainers add a badge; placeholders render from the project', async () => {
    const r = await s.request('POST', `/projects/${project.id}/badges`, {
      token: maint.token,
      json: { name: 'Pipeline', link_url: 'https://ci.example.com/%{project_path}/-/commits/%{default_branch}', image_url: 'https://ci.example.com/%{project_path}/badges/%{default_branch}/pipeline.svg?id=%{project_id}&sha=%{commit_sha}&t=%{latest_tag}' },
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(KEYS);
    const sha = (await s.request('GET', `/projects/${project.id}/repository/branches/main`)).body.commit.id;
    expect(r.body).toMatchObject({
      name: 'Pipeline',
      kind: 'project',
      rendered_link_url: `https://ci.example.com/${project.path_with_namespace}/-/commits/main`,
      // No tag yet: the placeholder stays, escaped as GitLab's Addressable does.
      rendered_image_url: `https://ci.example.com/${project.path_with_namespace}/badges/main/pipeline.svg?id=${project.id}&sha=${sha}&t=%25%7Blatest_tag%7D`,
    });
  });

  it("lists the project's badges and its group's, oldest first; reads only its own one by one", async () => {
    const gb = await s.request('POST', `/groups/${group.id}/badges`, { token: owner.token, json: { link_url: 'https://example.com/%{project_name}', image_url: 'https://example.com/g.svg' } });
    expect(gb.status).toBe(201);
    expect(gb.body).toMatchObject({ kind: 'group', name: null, rendered_link_url: 'https://example.com/site' });
    const list = await s.request('GET', `/projects/${project.id}/badges`, { token: null });
    expect(list.status).toBe(200);
    expect(list.body.map((b: any) => b.kind)).toEqual(['project', 'group']);
    expect(list.body[1].rendered_link_url).toBe('https://example.com/site');
    expect((await s.request('GET', `/projects/${project.id}/badges?name=Pipeline`)).body).toHaveLength(1);
    const own = await s.request('GET', `/projects/${project.id}/badges/${list.body[0].id}`, { token: null });
    expect(own.status).toBe(200);
    const groupOne = await s.request('GET', `/projects/${project.id}/badges/${gb.body.id}`);
    expect(groupOne.status).toBe(404);
    expect(groupOne.body).toEqual({ message: '404 Not found' });
    expect((await s.request('GET', `/groups/${group.id}/badges`, { token: null })).body.map((b: any) => b.id)).toEqual([gb.body.id]);
  });

  it("refuses Developers, bad URLs and missing parameters with GitLab's messages", async () => {
    const denied = await s.request('POST', `/projects/${project.id}/badges`, { token: dev.token, json: { link_url: 'https://a.example', image_url: 'https://b.example' } });
    expect(denied.status).toBe(403);
    const missing = await s.request('POST', `/projects/${project.id}/badges`, { token: maint.token, json: {} });
    expect(missing.body).toEqual({ message: '400 Bad request - "link_url" not given' });
    const bad = await s.request('POST', `/projects/${project.id}/badges`, { token: maint.token, json: { link_url: 'javascript:alert(1)', image_url: 'https://b.example' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: { link_url: ['is blocked: Only allowed schemes are http, https'] } });
    expect((await s.request('GET', `/projects/${project.id}/badges/render?link_url=x`, { token: maint.token })).body).toEqual({ message: '400 Bad request - "image_url" not given' });
    expect((await s.request('GET', `/projects/${project.id}/badges/render?link_url=https://a.example&image_url=https://b.example`, { token: dev.token })).status).toBe(403);
    const script = await s.request('GET', `/projects/${project.id}/badges/render?link_url=javascript:alert(1)&image_url=https://b.example`, { token: maint.token });
    expect(script.status).toBe(400);
    expect((await s.request('POST', `/projects/${project.id}/badges`, { token: null, json: {} })).status).toBe(401);
  });

  it('updates what is given, previews, and deletes (204); a group badge only through its group (Owners)', async () => {
    const [mine] = (await s.request('GET', `/projects/${project.id}/badges?name=Pipeline`)).body;
    const up = await s.request('PUT', `/projects/${project.id}/badges/${mine.id}`, { token: maint.token, json: { name: 'CI' } });
    expect(up.body).toMatchObject({ id: mine.id, name: 'CI', link_url: mine.link_url });
    const preview = await s.request('GET', `/projects/${project.id}/badges/render?link_url=${encodeURIComponent('https://x.example/%{project_id}')}&image_url=${encodeURIComponent('https://x.example/i.svg')}`, { token: maint.token });
    expect(preview.body).toEqual({ name: null, link_url: 'https://x.example/%{project_id}', image_url: 'https://x.example/i.svg', rendered_link_url: `https://x.example/${project.id}`, rendered_image_url: 'https://x.example/i.svg' });
    const groupBadge = (await s.request('GET', `/groups/${group.id}/badges`)).body[0];
    expect((await s.request('DELETE', `/projects/${project.id}/badges/${groupBadge.id}`, { token: maint.token })).status).toBe(404);
    expect((await s.request('DELETE', `/groups/${group.id}/badges/${groupBadge.id}`, { token: maint.token })).status).toBe(403);
    expect((await s.request('DELETE', `/groups/${group.id}/badges/${groupBadge.id}`, { token: owner.token })).status).toBe(204);
    expect((await s.request('DELETE', `/projects/${project.id}/badges/${mine.id}`, { token: maint.token })).status).toBe(204);
    expect((await s.request('GET', `/projects/${project.id}/badges`)).body).toEqual([]);
  });

  it("python-gitlab's and gitbeaker's badge calls", async () => {
    const api = new Gitlab({ host: s.url, token: maint.token });
    const added: any = await api.ProjectBadges.add(project.id, 'https://gb.example/%{project_path}', 'https://gb.example/b.svg', { name: 'gb' });
    expect(added).toMatchObject({ kind: 'project', rendered_link_url: `https://gb.example/${project.path_with_namespace}` });
    const all: any[] = await api.ProjectBadges.all(project.id);
    expect(all.map((b) => b.name)).toEqual(['gb']);
    await api.ProjectBadges.remove(project.id, added.id);
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
p = gl.projects.get(int(sys.argv[3]))
b = p.badges.create({'link_url': 'https://py.example/%{project_id}', 'image_url': 'https://py.example/b.svg'})
b.link_url = 'https://py.example/changed'
b.save()
r = p.badges.render('https://py.example/%{default_branch}', 'https://py.example/i.svg')
print(json.dumps({'link': p.badges.get(b.id).link_url, 'render': r['rendered_link_url'], 'n': len(p.badges.list(get_all=True))}))
b.delete()
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, maint.token, String(project.id)]);
    expect(JSON.parse(stdout)).toEqual({ link: 'https://py.example/changed', render: 'https://py.example/main', n: 1 });
  });
});
