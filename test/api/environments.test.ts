// Environments: GitLab's entity (with project in lists, with the last successful deployment in a
// single read), slugs and guessed tiers, name rules, the list filters, update (no renaming), stop,
// delete only when stopped, stale and review-app clean-ups, deployments finding or making their
// environment (and starting a stopped one), access by role; python-gitlab's and gitbeaker's calls.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let reporter: U;
let outsider: U;
let project: { id: number; path_with_namespace: string; default_branch: string };
let sha: string;

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('envowner');
  dev = await s.createUser('envdev');
  reporter = await s.createUser('envreporter');
  outsider = await s.createUser('envoutsider');
  project = await createProject(s, 'envs', { token: owner.token });
  await addMember(s, project.id, dev.id, 30);
  await addMember(s, project.id, reporter.id, 20);
  sha = (await s.request('GET', `/projects/${project.id}/repository/branches/main`, { token: owner.token })).body.commit.id;
}, 60_000);

afterAll(async () => closeServer(s));

const envs = (path = '') => `/projects/${project.id}/environments${path}`;

describe('environments', () => {
  it("creates one with GitLab's entity, slug and guessed tier", async () => {
    const r = await s.request('POST', envs(), { token: dev.token, json: { name: 'production', external_url: 'https://example.com' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['id', 'name', 'slug', 'external_url', 'created_at', 'updated_at', 'tier', 'project', 'state', 'auto_stop_at', 'description', 'auto_stop_setting']);
    expect(r.body).toMatchObject({ name: 'production', slug: 'production', external_url: 'https://example.com', tier: 'production', state: 'available', auto_stop_at: null, description: null, auto_stop_setting: 'always' });
    expect(r.body.project).toMatchObject({ id: project.id, path_with_namespace: project.path_with_namespace });
    const review = await s.request('POST', envs(), { token: dev.token, json: { name: 'review/Fix-1', tier: 'other', description: 'A review app' } });
    expect(review.body).toMatchObject({ name: 'review/Fix-1', tier: 'other', description: 'A review app' });
    expect(review.body.slug).toMatch(/^review-fix-1-[a-z0-9]{6}$/);
    const staging = await s.request('POST', envs(), { token: dev.token, form: { name: 'Staging EU' } });
    expect(staging.body).toMatchObject({ tier: 'staging' });
    expect(staging.body.slug).toMatch(/^staging-eu-[a-z0-9]{6}$/);
  });

  it("refuses wrong input with GitLab's messages", async () => {
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{}, { message: '400 Bad request - "name" not given' }],
      [{ name: 'production' }, { message: { name: ['has already been taken'], slug: ['has already been taken'] } }],
      [{ name: '/bad' }, { message: { name: ["can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"] } }],
      [{ name: '' }, { message: { name: ["can't be blank", "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"] } }],
      [{ name: 'x', tier: 'prod' }, { error: 'tier does not have a valid value' }],
      [{ name: 'x', slug: 'x' }, { error: 'slug is automatically generated and cannot be changed' }],
      [{ name: 'x', external_url: 'javascript:alert(1)' }, { message: { external_url: ['javascript scheme is not allowed'] } }],
      [{ name: 'x', cluster_agent_id: 7 }, { message: "400 Bad request - cluster agent doesn't exist or cannot be associated with this environment" }],
    ];
    for (const [json, body] of cases) {
      const r = await s.request('POST', envs(), { token: dev.token, json });
      expect([json, r.status, r.body]).toEqual([json, 400, body]);
    }
    expect((await s.request('GET', envs(), { token: dev.token })).body.map((e: any) => e.name)).toEqual(['production', 'review/Fix-1', 'Staging EU']);
  });

  it('lists with name, a case-insensitive prefix search and states; reads one with its last successful deployment', async () => {
    expect((await s.request('GET', envs(), { token: reporter.token, query: { name: 'production' } })).body.map((e: any) => e.name)).toEqual(['production']);
    expect((await s.request('GET', envs(), { token: reporter.token, query: { search: 'REV' } })).body.map((e: any) => e.name)).toEqual(['review/Fix-1']);
    expect((await s.request('GET', envs(), { token: reporter.token, query: { search: 'iew' } })).body).toEqual([]);
    expect((await s.request('GET', envs(), { token: reporter.token, query: { search: 're' } })).body).toEqual({ message: '400 Bad request - Search query is less than 3 characters' });
    expect((await s.request('GET', envs(), { token: reporter.token, query: { search: 'rev', name: 'x' } })).body).toEqual({ error: 'name, search cannot be used together' });
    expect((await s.request('GET', envs(), { token: reporter.token, query: { states: 'gone' } })).body).toEqual({ error: 'states does not have a valid value' });
    const prod = (await s.request('GET', envs(), { token: reporter.token, query: { name: 'production' } })).body[0];
    const before = await s.request('GET', envs(`/${prod.id}`), { token: reporter.token });
    expect(Object.keys(before.body)).toEqual(['id', 'name', 'slug', 'external_url', 'created_at', 'updated_at', 'tier', 'last_deployment', 'state', 'auto_stop_at', 'description', 'auto_stop_setting']);
    expect(before.body.last_deployment).toBeNull();
    const d1 = await s.request('POST', `/projects/${project.id}/deployments`, { token: dev.token, json: { environment: 'production', sha, ref: 'main', tag: false, status: 'success' } });
    expect(d1.status).toBe(201);
    expect(d1.body.environment).toEqual({ id: prod.id, name: 'production', slug: 'production', external_url: 'https://example.com', created_at: prod.created_at, updated_at: prod.updated_at });
    await s.request('POST', `/projects/${project.id}/deployments`, { token: dev.token, json: { environment: 'production', sha, ref: 'main', tag: false, status: 'failed' } });
    const after = await s.request('GET', envs(`/${prod.id}`), { token: reporter.token });
    expect(after.body.last_deployment).toMatchObject({ id: d1.body.id, iid: d1.body.iid, status: 'success', ref: 'main', sha });
    expect(after.body.last_deployment.environment).toBeUndefined();
    expect((await s.request('GET', envs('/999999'), { token: reporter.token })).body).toEqual({ message: '404 Not found' });
    expect((await s.request('GET', envs('/abc'), { token: reporter.token })).body).toEqual({ error: 'environment_id is invalid' });
  });

  it('a deployment to a new name makes its environment; a successful one starts a stopped environment', async () => {
    const d = await s.request('POST', `/projects/${project.id}/deployments`, { token: dev.token, json: { environment: 'qa', sha, ref: 'main', tag: false, status: 'running' } });
    expect(d.status).toBe(201);
    const qa = (await s.request('GET', envs(), { token: dev.token, query: { name: 'qa' } })).body[0];
    expect(qa).toMatchObject({ name: 'qa', slug: 'qa', tier: 'testing', state: 'available' });
    expect(d.body.environment.id).toBe(qa.id);
    const stopped = await s.request('POST', envs(`/${qa.id}/stop`), { token: dev.token });
    expect(stopped.status).toBe(200);
    expect(stopped.body.state).toBe('stopped');
    await s.request('PUT', `/projects/${project.id}/deployments/${d.body.id}`, { token: dev.token, json: { status: 'success' } });
    expect((await s.request('GET', envs(`/${qa.id}`), { token: dev.token })).body.state).toBe('available');
    const bad = await s.request('POST', `/projects/${project.id}/deployments`, { token: dev.token, json: { environment: '/nope', sha, ref: 'main', tag: false, status: 'running' } });
    expect(bad.status).toBe(400);
  });

  it('updates without renaming; stops (with_action waits for an action unless forced); deletes only stopped ones', async () => {
    const env = (await s.request('POST', envs(), { token: dev.token, json: { name: 'sandbox', auto_stop_setting: 'with_action' } })).body;
    const up = await s.request('PUT', envs(`/${env.id}`), { token: dev.token, json: { name: 'renamed', external_url: 'https://sandbox.example', tier: 'development', description: '' } });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ name: 'sandbox', external_url: 'https://sandbox.example', tier: 'development', description: null });
    expect((await s.request('DELETE', envs(`/${env.id}`), { token: dev.token })).body).toEqual({ message: '403 Forbidden' });
    expect((await s.request('POST', envs(`/${env.id}/stop`), { token: dev.token })).body.state).toBe('available');
    expect((await s.request('POST', envs(`/${env.id}/stop`), { token: reporter.token })).status).toBe(403);
    expect((await s.request('POST', envs(`/${env.id}/stop`), { token: dev.token, json: { force: true } })).body.state).toBe('stopped');
    expect((await s.request('DELETE', envs(`/${env.id}`), { token: reporter.token })).status).toBe(403);
    const del = await s.request('DELETE', envs(`/${env.id}`), { token: dev.token });
    expect(del.status).toBe(204);
    expect((await s.request('GET', envs(`/${env.id}`), { token: dev.token })).status).toBe(404);
  });

  it('stops stale environments (Maintainers) and cleans up stopped review apps', async () => {
    expect((await s.request('POST', envs('/stop_stale'), { token: dev.token, query: { before: new Date(Date.now() - 30 * 86_400_000).toISOString() } })).status).toBe(403);
    expect((await s.request('POST', envs('/stop_stale'), { token: owner.token, query: { before: new Date().toISOString() } })).body).toEqual({ message: '400 Bad request - Invalid Date' });
    const ok = await s.request('POST', envs('/stop_stale'), { token: owner.token, query: { before: new Date(Date.now() - 8 * 86_400_000).toISOString() } });
    expect([ok.status, ok.body]).toEqual([200, { message: 'Successfully scheduled stale environments to stop' }]);
    expect((await s.request('DELETE', envs('/review_apps'), { token: reporter.token })).status).toBe(401);
    const none = await s.request('DELETE', envs('/review_apps'), { token: dev.token });
    expect(none.status).toBe(400);
    const review = (await s.request('GET', envs(), { token: dev.token, query: { name: 'review/Fix-1' } })).body[0];
    await s.request('POST', envs(`/${review.id}/stop`), { token: dev.token });
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const dry = await s.request('DELETE', envs('/review_apps'), { token: dev.token, json: { before: future } });
    expect(dry.status).toBe(200);
    expect(dry.body.scheduled_entries.map((e: any) => e.name)).toEqual(['review/Fix-1']);
    expect((await s.request('GET', envs(`/${review.id}`), { token: dev.token })).status).toBe(200);
    const real = await s.request('DELETE', envs('/review_apps'), { token: dev.token, json: { before: future, dry_run: false } });
    expect(real.body.scheduled_entries.length).toBe(1);
    expect((await s.request('GET', envs(`/${review.id}`), { token: dev.token })).status).toBe(404);
  });

  it('is for Reporters to read and Developers to write; outsiders 404, anonymous 401', async () => {
    expect((await s.request('GET', envs(), { token: null })).status).toBe(401);
    expect((await s.request('GET', envs(), { token: outsider.token })).body).toEqual({ message: '404 Project Not Found' });
    expect((await s.request('POST', envs(), { token: reporter.token, json: { name: 'x' } })).body).toEqual({ message: '403 Forbidden' });
    const pub = await createProject(s, 'envs-public', { token: owner.token, visibility: 'public' });
    expect((await s.request('GET', `/projects/${pub.id}/environments`, { token: outsider.token })).status).toBe(200);
    expect((await s.request('POST', `/projects/${pub.id}/environments`, { token: outsider.token, json: { name: 'x' } })).status).toBe(403);
  });

  it('hides environments and deployments from outsiders while CI/CD or the repository is for members only; archived projects take no writes', async () => {
    const pub = await createProject(s, 'envs-members', { token: owner.token, visibility: 'public' });
    const mainSha = (await s.request('GET', `/projects/${pub.id}/repository/branches/main`, { token: owner.token })).body.commit.id;
    await s.request('POST', `/projects/${pub.id}/deployments`, { token: owner.token, json: { environment: 'production', sha: mainSha, ref: 'main', tag: false, status: 'success' } });
    expect((await s.request('GET', `/projects/${pub.id}/environments`, { token: outsider.token })).status).toBe(200);
    for (const setting of ['builds_access_level', 'repository_access_level']) {
      expect((await s.request('PUT', `/projects/${pub.id}`, { token: owner.token, json: { [setting]: 'private' } })).status).toBe(200);
      expect((await s.request('GET', `/projects/${pub.id}/environments`, { token: outsider.token })).status).toBe(403);
      expect((await s.request('GET', `/projects/${pub.id}/deployments`, { token: outsider.token })).status).toBe(403);
      expect((await s.request('GET', `/projects/${pub.id}/environments`, { token: owner.token })).status).toBe(200);
      await s.request('PUT', `/projects/${pub.id}`, { token: owner.token, json: { [setting]: 'enabled' } });
    }
    expect((await s.request('POST', `/projects/${pub.id}/archive`, { token: owner.token })).status).toBe(201);
    expect((await s.request('POST', `/projects/${pub.id}/environments`, { token: owner.token, json: { name: 'late' } })).status).toBe(403);
    expect((await s.request('POST', `/projects/${pub.id}/deployments`, { token: owner.token, json: { environment: 'late', sha: mainSha, ref: 'main', tag: false, status: 'success' } })).status).toBe(403);
    expect((await s.request('GET', `/projects/${pub.id}/environments`, { token: owner.token })).body.map((e: any) => e.name)).toEqual(['production']);
  });

  it('searches names with _ literally, refuses disguised script URLs, and deletes an environment with its deployments', async () => {
    const made = (await s.request('POST', envs(), { token: dev.token, json: { name: 'my_app' } })).body;
    await s.request('POST', envs(), { token: dev.token, json: { name: 'myxapp' } });
    expect((await s.request('GET', envs(), { token: dev.token, query: { search: 'my_' } })).body.map((e: any) => e.name)).toEqual(['my_app']);
    const js = await s.request('POST', envs(), { token: dev.token, json: { name: 'js', external_url: 'java\tscript:alert(1)' } });
    expect(js.body).toEqual({ message: { external_url: ['javascript scheme is not allowed'] } });
    const d = await s.request('POST', `/projects/${project.id}/deployments`, { token: dev.token, json: { environment: 'my_app', sha, ref: 'main', tag: false, status: 'success' } });
    expect(d.status).toBe(201);
    await s.request('POST', envs(`/${made.id}/stop`), { token: dev.token });
    expect((await s.request('DELETE', envs(`/${made.id}`), { token: dev.token })).status).toBe(204);
    expect((await s.request('GET', `/projects/${project.id}/deployments/${d.body.id}`, { token: dev.token })).status).toBe(404);
    // A new environment of the same name starts with no deployments.
    const again = (await s.request('POST', envs(), { token: dev.token, json: { name: 'my_app' } })).body;
    expect((await s.request('GET', envs(`/${again.id}`), { token: dev.token })).body.last_deployment).toBeNull();
    expect((await s.request('POST', envs('/stop_stale'), { token: owner.token, json: { before: null } })).body).toEqual({ message: '400 Bad request - "before" not given' });
    expect((await s.request('DELETE', envs('/review_apps'), { token: dev.token, query: { before: '9999-12-31T23:59:59-23:59' } })).body).toEqual({ error: 'before is invalid' });
  });

  it('answers 401 before looking at the parameters of an anonymous caller', async () => {
    expect((await s.request('POST', envs(), { token: null, json: { name: 'x', slug: 'y' } })).status).toBe(401);
    expect((await s.request('POST', envs(), { token: reporter.token, json: { name: 'x', cluster_agent_id: 3 } })).status).toBe(403);
  });

  it('works from @gitbeaker/rest and python-gitlab', async () => {
    const api = new Gitlab({ host: s.url, token: dev.token });
    const made = await api.Environments.create(project.id, 'beaker', { externalUrl: 'https://beaker.example', tier: 'staging' } as never);
    expect(made).toMatchObject({ name: 'beaker', external_url: 'https://beaker.example', tier: 'staging' });
    expect((await api.Environments.all(project.id, { search: 'bea' } as never)).map((e) => e.name)).toEqual(['beaker']);
    expect((await api.Environments.edit(project.id, made.id as number, { externalUrl: 'https://b2.example' } as never)).external_url).toBe('https://b2.example');
    expect((await api.Environments.stop(project.id, made.id as number)).state).toBe('stopped');
    await api.Environments.remove(project.id, made.id as number);
    if (!(await hasPythonGitlab())) throw new Error('python3-gitlab is not installed: apt-get install -y python3-gitlab');
    const script = [
      'import gitlab, json, sys',
      'gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])',
      'p = gl.projects.get(int(sys.argv[3]))',
      'e = p.environments.create({"name": "pyenv", "external_url": "https://py.example"})',
      'e.external_url = "https://py2.example"',
      'e.save()',
      'got = p.environments.list(name="pyenv")[0]',
      'e.stop()',
      'state = p.environments.get(e.id).state',
      'e.delete()',
      'print(json.dumps([got.external_url, state, [x.name for x in p.environments.list(get_all=True)]]))',
    ].join('\n');
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, dev.token, String(project.id)]);
    const [url, state, names] = JSON.parse(stdout);
    expect([url, state]).toEqual(['https://py2.example', 'stopped']);
    expect(names).not.toContain('pyenv');
  });
});
