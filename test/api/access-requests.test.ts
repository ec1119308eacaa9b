// Access requests: a user asks to join a project or a group, Maintainers (projects) or Owners
// (groups) list, approve and deny them, the requester withdraws theirs; GitLab's codes and entity;
// python-gitlab's calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let maint: U;
let dev: U;
let asker: U;
let other: U;
let project: { id: number; path_with_namespace: string };
const KEYS = ['id', 'username', 'name', 'state', 'locked', 'avatar_url', 'web_url', 'requested_at'];

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('arowner');
  maint = await s.createUser('armaint');
  dev = await s.createUser('ardev');
  asker = await s.createUser('arasker');
  other = await s.createUser('arother');
  project = await createProject(s, 'joinable', { token: owner.token, visibility: 'public' });
  await addMember(s, project.id, maint.id, 40);
  await addMember(s, project.id, dev.id, 30);
}, 60_000);

afterAll(async () => closeServer(s));

describe('project access requests', () => {
  it('a user asks to join (201), once (400); members and disabled projects get 403', async () => {
    const r = await s.request('POST', `/projects/${project.id}/access_requests`, { token: asker.token });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(KEYS);
    expect(r.body).toMatchObject({ id: asker.id, username: 'arasker', state: 'active' });
    const again = await s.request('POST', `/projects/${project.id}/access_requests`, { token: asker.token });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ message: { user_id: ['already exists in source'] } });
    expect((await s.request('POST', `/projects/${project.id}/access_requests`, { token: dev.token })).status).toBe(403);
    expect((await s.request('POST', `/projects/${project.id}/access_requests`, { token: null })).status).toBe(401);
    const closed = await createProject(s, 'closed-doors', { token: owner.token, visibility: 'public', extra: { request_access_enabled: false } });
    expect((await s.request('POST', `/projects/${closed.id}/access_requests`, { token: asker.token })).status).toBe(403);
    const hidden = await createProject(s, 'hidden-doors', { token: owner.token });
    expect((await s.request('POST', `/projects/${hidden.id}/access_requests`, { token: asker.token })).status).toBe(404);
  });

  it('Maintainers list and approve (Developer by default, 201 with the member); Developers may not', async () => {
    expect((await s.request('GET', `/projects/${project.id}/access_requests`, { token: dev.token })).status).toBe(403);
    const list = await s.request('GET', `/projects/${project.id}/access_requests`, { token: maint.token });
    expect(list.body.map((r: any) => r.username)).toEqual(['arasker']);
    expect((await s.request('PUT', `/projects/${project.id}/access_requests/${other.id}/approve`, { token: maint.token })).status).toBe(404);
    expect((await s.request('PUT', `/projects/${project.id}/access_requests/${asker.id}/approve`, { token: dev.token })).status).toBe(403);
    const ok = await s.request('PUT', `/projects/${project.id}/access_requests/${asker.id}/approve`, { token: maint.token });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ id: asker.id, access_level: 30 });
    expect((await s.request('GET', `/projects/${project.id}/members/${asker.id}`, { token: maint.token })).body.access_level).toBe(30);
    expect((await s.request('GET', `/projects/${project.id}/access_requests`, { token: maint.token })).body).toEqual([]);
  });

  it('the requester withdraws, a Maintainer denies (204); others get 403', async () => {
    await s.request('POST', `/projects/${project.id}/access_requests`, { token: other.token });
    expect((await s.request('DELETE', `/projects/${project.id}/access_requests/${other.id}`, { token: dev.token })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${project.id}/access_requests/${other.id}`, { token: other.token })).status).toBe(204);
    await s.request('POST', `/projects/${project.id}/access_requests`, { token: other.token });
    expect((await s.request('DELETE', `/projects/${project.id}/access_requests/${other.id}`, { token: maint.token })).status).toBe(204);
    expect((await s.request('DELETE', `/projects/${project.id}/access_requests/${other.id}`, { token: maint.token })).status).toBe(404);
  });
});

describe('group access requests', () => {
  it('Owners approve with a level; Maintainers of the group may not', async () => {
    const g = (await s.request('POST', '/groups', { token: owner.token, json: { name: 'Joinable', path: 'joinable-group', visibility: 'public' } })).body;
    await s.request('POST', `/groups/${g.id}/members`, { token: owner.token, json: { user_id: maint.id, access_level: 40 } });
    expect((await s.request('POST', `/groups/${g.id}/access_requests`, { token: other.token })).status).toBe(201);
    expect((await s.request('GET', `/groups/${g.id}/access_requests`, { token: maint.token })).status).toBe(403);
    const ok = await s.request('PUT', `/groups/${g.id}/access_requests/${other.id}/approve`, { token: owner.token, json: { access_level: 20 } });
    expect(ok.status).toBe(201);
    expect(ok.body.access_level).toBe(20);
  });

  it("answers python-gitlab's calls", async () => {
    if (!(await hasPythonGitlab())) return;
    const p = await createProject(s, 'py-joinable', { token: owner.token, visibility: 'public' });
    const script = `
import gitlab, json, sys
asker = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
owner = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[3])
asker.projects.get(int(sys.argv[4]), lazy=True).accessrequests.create({})
reqs = owner.projects.get(int(sys.argv[4])).accessrequests.list(get_all=True)
reqs[0].approve(access_level=20)
print(json.dumps({'n': len(reqs), 'level': owner.projects.get(int(sys.argv[4])).members.get(reqs[0].id).access_level}))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, asker.token, owner.token, String(p.id)]);
    expect(JSON.parse(stdout)).toEqual({ n: 1, level: 20 });
  });
});
