// Project Markdown uploads: uploading a file (GitLab's entity, names, Markdown), reading it at the
// address Markdown links name and through the API, the Maintainers' list, download and delete,
// who may do what, statistics, and python-gitlab's and gitbeaker's calls.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadsDir } from '../../src/services/uploads.js';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let guest: U;
let dev: U;
let outsider: U;
let project: { id: number; path_with_namespace: string };

async function upload(projectId: number, token: string | null, name: string, data: string | Buffer) {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(data)]), name);
  const r = await fetch(`${s.url}/api/v4/projects/${projectId}/uploads`, { method: 'POST', headers: token ? { 'PRIVATE-TOKEN': token } : {}, body: form });
  return { status: r.status, body: (await r.json()) as any };
}

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('upowner');
  guest = await s.createUser('upguest');
  dev = await s.createUser('updev');
  outsider = await s.createUser('upoutsider');
  project = await createProject(s, 'attach', { token: owner.token });
  await addMember(s, project.id, guest.id, 10);
  await addMember(s, project.id, dev.id, 30);
}, 60_000);

afterAll(async () => closeServer(s));

describe('uploading', () => {
  it("takes a file from a Guest and answers GitLab's entity with its Markdown", async () => {
    const r = await upload(project.id, guest.token, 'my shot (1).png', 'PNGDATA');
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['id', 'alt', 'url', 'full_path', 'markdown']);
    expect(r.body.url).toMatch(/^\/uploads\/[0-9a-f]{32}\/my_shot__1_\.png$/);
    expect(r.body).toMatchObject({ alt: 'my_shot__1_', full_path: `/-/project/${project.id}${r.body.url}`, markdown: `![my_shot__1_](${r.body.url})` });
    const txt = await upload(project.id, dev.token, 'notes].txt', 'hello');
    expect(txt.body).toMatchObject({ alt: 'notes_.txt', markdown: `[notes_.txt](${txt.body.url})` });
    const svg = await upload(project.id, dev.token, 'logo.svg', '<svg/>');
    expect(svg.body.markdown).toBe(`![logo.svg](${svg.body.url})`);
  });

  it('refuses anonymous callers, outsiders of a private project, archived projects and requests without a file', async () => {
    expect((await upload(project.id, null, 'a.txt', 'a')).status).toBe(401);
    const out = await upload(project.id, outsider.token, 'a.txt', 'a');
    expect(out.status).toBe(404);
    expect(out.body).toEqual({ message: '404 Project Not Found' });
    const missing = await s.request('POST', `/projects/${project.id}/uploads`, { token: dev.token, json: {} });
    expect(missing.body).toEqual({ message: '400 Bad request - "file" not given' });
    const text = await s.request('POST', `/projects/${project.id}/uploads`, { token: dev.token, json: { file: 'not a file' } });
    expect(text.body).toEqual({ error: 'file is invalid' });
    const arch = await createProject(s, 'attach-archived', { token: owner.token });
    await s.request('POST', `/projects/${arch.id}/archive`, { token: owner.token });
    expect((await upload(arch.id, owner.token, 'a.txt', 'a')).status).toBe(403);
  });
});

describe('reading', () => {
  it('serves the file at its full_path to whoever reads the project, images inline, others as downloads', async () => {
    const png = await upload(project.id, dev.token, 'pic.png', 'PNG!');
    const web = await fetch(`${s.url}${png.body.full_path}`, { headers: { 'PRIVATE-TOKEN': guest.token } });
    expect(web.status).toBe(200);
    expect(web.headers.get('content-type')).toBe('image/png');
    expect(web.headers.get('content-disposition')).toMatch(/^inline; filename="pic\.png"/);
    expect(await web.text()).toBe('PNG!');
    const zip = await upload(project.id, dev.token, 'x.zip', 'PK');
    const dl = await fetch(`${s.url}${zip.body.full_path}`, { headers: { 'PRIVATE-TOKEN': guest.token } });
    expect(dl.headers.get('content-disposition')).toMatch(/^attachment;/);
    for (const headers of [{ 'PRIVATE-TOKEN': outsider.token }, {}] as Array<Record<string, string>>) {
      expect((await fetch(`${s.url}${png.body.full_path}`, { headers })).status).toBe(404);
    }
    expect((await fetch(`${s.url}/-/project/${project.id}/uploads/${'0'.repeat(32)}/pic.png`, { headers: { 'PRIVATE-TOKEN': guest.token } })).status).toBe(404);
    const pub = await createProject(s, 'attach-public', { token: owner.token, visibility: 'public' });
    const open = await upload(pub.id, outsider.token, 'open.png', 'open');
    expect(open.status).toBe(201);
    expect((await fetch(`${s.url}${open.body.full_path}`)).status).toBe(200);
  });

  it("serves it at the project's web URL followed by its url (GitLab's older address), under groups too", async () => {
    const png = await upload(project.id, dev.token, 'old.png', 'OLD');
    const address = `${s.url}/${project.path_with_namespace}${png.body.url}`;
    const web = await fetch(address, { headers: { 'PRIVATE-TOKEN': guest.token } });
    expect(web.status).toBe(200);
    expect(web.headers.get('content-type')).toBe('image/png');
    expect(await web.text()).toBe('OLD');
    expect((await fetch(address, { headers: { 'PRIVATE-TOKEN': outsider.token } })).status).toBe(404);
    expect((await fetch(address)).status).toBe(404);
    const g = await s.request('POST', '/groups', { token: owner.token, json: { name: 'Up Top', path: 'up-top', visibility: 'public' } });
    const sub = await s.request('POST', '/groups', { token: owner.token, json: { name: 'Up Sub', path: 'up-sub', parent_id: g.body.id, visibility: 'public' } });
    const nested = await createProject(s, 'deep', { token: owner.token, extra: { namespace_id: sub.body.id } });
    const deep = await upload(nested.id, owner.token, 'd.txt', 'deep');
    const r = await fetch(`${s.url}/up-top/up-sub/deep${deep.body.url}`, { headers: { 'PRIVATE-TOKEN': owner.token } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(await r.text()).toBe('deep');
    // Another project's path with this secret: nothing.
    expect((await fetch(`${s.url}/${project.path_with_namespace}${deep.body.url}`, { headers: { 'PRIVATE-TOKEN': owner.token } })).status).toBe(404);
    // A project named uploads in a subgroup is still cloned without .git (git's info/refs is no upload).
    const named = await createProject(s, 'uploads', { token: owner.token, visibility: 'public', extra: { namespace_id: sub.body.id, initialize_with_readme: true } });
    expect(named.path_with_namespace).toBe('up-top/up-sub/uploads');
    const refs = await fetch(`${s.url}/up-top/up-sub/uploads/info/refs?service=git-upload-pack`);
    expect(refs.status).toBe(200);
    expect(refs.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
  });

  it('the API serves it by secret and name to readers, as a download', async () => {
    const r = await upload(project.id, dev.token, 'data.csv', 'a,b');
    const [, , secret, name] = r.body.url.split('/');
    const got = await s.request('GET', `/projects/${project.id}/uploads/${secret}/${name}`, { token: guest.token });
    expect(got.status).toBe(200);
    expect(got.text).toBe('a,b');
    expect(got.headers.get('content-type')).toBe('application/octet-stream');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="data\.csv"/);
    expect((await s.request('GET', `/projects/${project.id}/uploads/${secret}/other.csv`, { token: guest.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${project.id}/uploads/${secret}/${name}`, { token: outsider.token })).status).toBe(404);
  });
});

describe('managing', () => {
  it('Maintainers list, download and delete uploads; others get 403', async () => {
    const list = await s.request('GET', `/projects/${project.id}/uploads`, { token: owner.token });
    expect(list.status).toBe(200);
    expect(Object.keys(list.body[0])).toEqual(['id', 'size', 'filename', 'created_at', 'uploaded_by']);
    expect(list.body[0]).toMatchObject({ filename: 'data.csv', size: 3, uploaded_by: { id: dev.id, username: 'updev', name: expect.any(String) } });
    expect((await s.request('GET', `/projects/${project.id}/uploads`, { token: dev.token })).status).toBe(403);
    const id = list.body[0].id;
    const one = await s.request('GET', `/projects/${project.id}/uploads/${id}`, { token: owner.token });
    expect(one.text).toBe('a,b');
    expect((await s.request('GET', `/projects/${project.id}/uploads/${id}`, { token: dev.token })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${project.id}/uploads/${id}`, { token: dev.token })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${project.id}/uploads/${id}`, { token: owner.token })).status).toBe(204);
    expect((await s.request('GET', `/projects/${project.id}/uploads/${id}`, { token: owner.token })).status).toBe(404);
    const gone = await s.request('DELETE', `/projects/${project.id}/uploads/${'a'.repeat(32)}/x.txt`, { token: owner.token });
    expect(gone.status).toBe(400);
    expect(gone.body.message).toMatch(/^400 Bad request - The resource that you are attempting to access does not exist/);
    const r = await upload(project.id, dev.token, 'bye.txt', 'bye');
    const [, , secret, name] = r.body.url.split('/');
    expect((await s.request('DELETE', `/projects/${project.id}/uploads/${secret}/${name}`, { token: owner.token })).status).toBe(204);
    expect((await fetch(`${s.url}${r.body.full_path}`, { headers: { 'PRIVATE-TOKEN': owner.token } })).status).toBe(404);
  });

  it("counts uploads in the project's statistics, and a deleted project takes its files", async () => {
    const p = await createProject(s, 'attach-stats', { token: owner.token });
    const r = await upload(p.id, owner.token, 'big.bin', Buffer.alloc(5000));
    const stats = (await s.request('GET', `/projects/${p.id}?statistics=true`, { token: owner.token })).body.statistics;
    expect(stats.uploads_size).toBe(5000);
    expect(stats.storage_size).toBe(stats.repository_size + stats.wiki_size + stats.snippets_size + 5000);
    const file = join(uploadsDir(s.app.lw), String(r.body.id));
    expect(existsSync(file)).toBe(true);
    expect((await s.request('DELETE', `/projects/${p.id}`, { token: owner.token })).status).toBe(202);
    for (let i = 0; i < 50 && existsSync(file); i++) await new Promise((res) => setTimeout(res, 100));
    expect(existsSync(file)).toBe(false);
  });

  it("python-gitlab's and gitbeaker's upload calls", async () => {
    const api = new Gitlab({ host: s.url, token: owner.token });
    const created: any = await api.ProjectMarkdownUploads.create(project.id, { content: new Blob(['beaker']), filename: 'beaker.txt' });
    expect(created).toMatchObject({ alt: 'beaker.txt', markdown: expect.stringMatching(/^\[beaker\.txt\]\(\/uploads\/[0-9a-f]{32}\/beaker\.txt\)$/) });
    const all: any[] = await api.ProjectMarkdownUploads.all(project.id);
    expect(all.some((u) => u.id === created.id)).toBe(true);
    await api.ProjectMarkdownUploads.remove(project.id, created.id);
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
p = gl.projects.get(int(sys.argv[3]))
print(json.dumps(p.upload('py.png', filedata=b'PYPNG')))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, dev.token, String(project.id)]);
    const out = JSON.parse(stdout);
    expect(out.markdown).toMatch(/^!\[py\]\(\/uploads\/[0-9a-f]{32}\/py\.png\)$/);
    // python-gitlab 3.x (Debian's) hands back alt, url and markdown only.
    const web = await fetch(`${s.url}/-/project/${project.id}${out.url}`, { headers: { 'PRIVATE-TOKEN': dev.token } });
    expect(await web.text()).toBe('PYPNG');
  });
});
