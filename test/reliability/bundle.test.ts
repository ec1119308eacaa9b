// The server `npm start` runs is the build of scripts/build.mjs: src/ and the packages it uses in
// one module. This starts that build as a process and uses it as a client would (API, HEAD, a
// multipart upload, git over HTTP, a page, the response store's worker thread), so that a package
// which does not survive bundling fails here rather than on a user's machine.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/git.js';
import { createInstallation, DB_KIND, REPO_ROOT, ROOT_TOKEN, startProcess, type Installation, type ServerProcess } from './processes.js';

let inst: Installation;
let server: ServerProcess;
let buildDir: string;
const api = (path: string) => `${server.url}/api/v4${path}`;
const auth = { 'PRIVATE-TOKEN': ROOT_TOKEN };

beforeAll(async () => {
  // Inside the repository, so that the packages left out of the bundle are found in node_modules.
  // node_modules/.cache is not there after a fresh `npm ci`.
  const cache = join(REPO_ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  buildDir = mkdtempSync(join(cache, 'labwright-bundle-test-'));
  const { bundle } = (await import(pathToFileURL(join(REPO_ROOT, 'scripts', 'build.mjs')).href)) as { bundle: (outfile: string) => Promise<void> };
  const main = join(buildDir, 'main.js');
  await bundle(main.slice(REPO_ROOT.length + 1));
  inst = await createInstallation(DB_KIND, { LOG_LEVEL: 'warn', LABWRIGHT_RESPONSE_REFRESH: 'eager' });
  server = await startProcess(inst, {}, undefined, main);
}, 120_000);

afterAll(async () => {
  await server?.kill('SIGTERM');
  await inst?.destroy();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

describe(`the bundled server (scripts/build.mjs) on ${DB_KIND}`, () => {
  let project: { id: number; path_with_namespace: string; http_url_to_repo: string };

  it('answers the API, HEAD and a multipart upload', async () => {
    const version = await fetch(api('/version'), { headers: auth });
    expect(version.status).toBe(200);
    expect((await version.json()).version).toMatch(/^\d+\.\d+\.\d+/);

    const created = await fetch(api('/projects'), { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bundled', initialize_with_readme: true }) });
    expect(created.status).toBe(201);
    project = await created.json();

    const head = await fetch(api(`/projects/${project.id}`), { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json');
    expect(await head.text()).toBe('');
    const branch = await fetch(api(`/projects/${project.id}/repository/branches/main`), { method: 'HEAD', headers: auth });
    expect(branch.status).toBe(204);
    const file = await fetch(api(`/projects/${project.id}/repository/files/README.md?ref=main`), { method: 'HEAD', headers: auth });
    expect(file.status).toBe(200);
    expect(file.headers.get('x-gitlab-file-name')).toBe('README.md');

    const form = new FormData();
    form.append('file', new Blob([Buffer.from('hello')], { type: 'text/plain' }), 'notes.txt');
    const upload = await fetch(api(`/projects/${project.id}/uploads`), { method: 'POST', headers: auth, body: form });
    expect(upload.status).toBe(201);
    expect((await upload.json()).markdown).toMatch(/^\[notes\.txt\]\(\/uploads\/[0-9a-f]{32}\/notes\.txt\)$/);
  });

  it('takes a push over HTTP, and lists the merge request made from it', async () => {
    const work = mkdtempSync(join(inst.dataDir, 'clone-'));
    const remote = new URL(project.http_url_to_repo);
    remote.username = 'oauth2';
    remote.password = ROOT_TOKEN;
    await git(work, 'clone', remote.toString(), 'repo');
    const repo = join(work, 'repo');
    await git(repo, 'checkout', '-b', 'feature');
    await git(repo, 'commit', '--allow-empty', '-m', 'A change');
    await git(repo, 'push', 'origin', 'feature');

    const mr = await fetch(api(`/projects/${project.id}/merge_requests`), { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ source_branch: 'feature', target_branch: 'main', title: 'From the bundle' }) });
    expect(mr.status).toBe(201);
    // Several reads: the response store keeps the list, its worker thread makes it again after the write.
    for (let i = 0; i < 4; i++) {
      const list = await fetch(api(`/projects/${project.id}/merge_requests`), { headers: auth });
      expect(list.status).toBe(200);
      expect((await list.json()).map((m: { title: string }) => m.title)).toEqual(['From the bundle']);
    }
    const second = await fetch(api(`/projects/${project.id}/merge_requests`), { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ source_branch: 'feature', target_branch: 'main', title: 'Again' }) });
    expect(second.status).toBe(409);
    const closed = await fetch(api(`/projects/${project.id}/merge_requests/1`), { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ state_event: 'close' }) });
    expect(closed.status).toBe(200);
    const list = await fetch(api(`/projects/${project.id}/merge_requests?state=opened`), { headers: auth });
    expect(await list.json()).toEqual([]);
  });

  it('serves the sign-in page, and logged no warning (the refresher started in its thread)', async () => {
    const page = await fetch(`${server.url}/users/sign_in`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<form');
    expect(server.output()).not.toMatch(/"level":(40|50|60)/);
  });
});
