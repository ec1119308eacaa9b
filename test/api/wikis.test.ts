// Project wikis: pages in the project's wiki repository as GitLab's wikis API serves them (titles,
// slugs, formats, versions, front matter, attachments), who may read, write and delete, the
// events and webhooks a change makes, the wiki cloned and pushed with git over HTTP, and
// python-gitlab's and gitbeaker's calls.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wikiRepoPath } from '../../src/services/wikis.js';
import { deliveriesSettled } from '../../src/services/webhooks/dispatch.js';
import { git } from '../helpers/git.js';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startHookReceiver, type HookReceiver } from '../helpers/hook-receiver.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let alice: U;
let guest: U;
let reporter: U;
let dev: U;
let maint: U;
let outsider: U;
let project: { id: number; path_with_namespace: string };
const FULL = ['format', 'slug', 'title', 'wiki_page_meta_id', 'content', 'encoding', 'front_matter'];
let work: string;
let receiver: HookReceiver;
let hookBase: string;
let received: HookReceiver['received'] = [];

const wikis = (p = project.id) => `/projects/${p}/wikis`;

beforeAll(async () => {
  receiver = await startHookReceiver();
  hookBase = receiver.base;
  received = receiver.received;
  s = await startServer({ LABWRIGHT_WEBHOOK_ALLOW_LOCAL: 'true' });
  alice = await s.createUser('wkalice');
  guest = await s.createUser('wkguest');
  reporter = await s.createUser('wkreporter');
  dev = await s.createUser('wkdev');
  maint = await s.createUser('wkmaint');
  outsider = await s.createUser('wkoutsider');
  project = await createProject(s, 'docs', { token: alice.token, visibility: 'private' });
  await addMember(s, project.id, guest.id, 10);
  await addMember(s, project.id, reporter.id, 20);
  await addMember(s, project.id, dev.id, 30);
  await addMember(s, project.id, maint.id, 40);
  work = await mkdtemp(join(tmpdir(), 'lw-wiki-'));
}, 60_000);

afterAll(async () => {
  await closeServer(s);
  await receiver?.close();
  await rm(work, { recursive: true, force: true });
});

describe('pages', () => {
  it('an empty wiki lists no pages, and no repository is made by reading', async () => {
    const r = await s.request('GET', wikis(), { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    expect(existsSync(wikiRepoPath(s.app.lw, project.id))).toBe(false);
  });

  it("creates a page in GitLab's entity, its file in the wiki repository with GitLab's commit message", async () => {
    const r = await s.request('POST', wikis(), { token: dev.token, json: { title: 'Getting Started', content: '# Hello\n\nWelcome.' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(FULL);
    expect(r.body).toMatchObject({ format: 'markdown', slug: 'Getting-Started', title: 'Getting Started', content: '# Hello\n\nWelcome.', encoding: 'UTF-8', front_matter: {} });
    expect(typeof r.body.wiki_page_meta_id).toBe('number');
    const repo = wikiRepoPath(s.app.lw, project.id);
    expect(await git(repo, 'show', 'main:Getting-Started.md')).toBe('# Hello\n\nWelcome.');
    expect((await git(repo, 'log', '-1', '--format=%s|%an', 'main')).trim()).toBe('wkdev created page: Getting Started|wkdev');
  });

  it('reads a page by slug ignoring case, by its title, URL-encoded or with its slashes', async () => {
    await s.request('POST', wikis(), { token: dev.token, json: { title: 'guides/Deploy Steps', content: 'step 1', format: 'asciidoc' } });
    for (const slug of ['Getting-Started', 'getting-started', 'Getting%20Started']) {
      const r = await s.request('GET', `${wikis()}/${slug}`, { token: guest.token });
      expect(r.status, slug).toBe(200);
      expect(r.body.slug).toBe('Getting-Started');
    }
    for (const slug of ['guides%2FDeploy-Steps', 'guides/Deploy-Steps']) {
      const r = await s.request('GET', `${wikis()}/${slug}`, { token: guest.token });
      expect(r.status, slug).toBe(200);
      expect(r.body).toMatchObject({ format: 'asciidoc', slug: 'guides/Deploy-Steps', title: 'Deploy Steps', content: 'step 1' });
    }
    expect(await git(wikiRepoPath(s.app.lw, project.id), 'show', 'main:guides/Deploy-Steps.asciidoc')).toBe('step 1');
    const missing = await s.request('GET', `${wikis()}/nope`, { token: alice.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Wiki Page Not Found' });
  });

  it('lists pages by path with their meta ids, with content on request; not paginated', async () => {
    const r = await s.request('GET', wikis(), { token: guest.token });
    expect(r.body).toEqual([
      { format: 'markdown', slug: 'Getting-Started', title: 'Getting Started', wiki_page_meta_id: expect.any(Number) },
      { format: 'asciidoc', slug: 'guides/Deploy-Steps', title: 'Deploy Steps', wiki_page_meta_id: expect.any(Number) },
    ]);
    const again = await s.request('GET', wikis(), { token: guest.token });
    expect(again.body.map((p: any) => p.wiki_page_meta_id)).toEqual(r.body.map((p: any) => p.wiki_page_meta_id));
    const full = await s.request('GET', `${wikis()}?with_content=1`, { token: guest.token });
    expect(Object.keys(full.body[0])).toEqual(FULL);
    expect(full.body[1].content).toBe('step 1');
    const bad = await s.request('GET', `${wikis()}?with_content=maybe`, { token: guest.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'with_content is invalid' });
  });

  it("refuses wrong input with GitLab's messages and changes nothing", async () => {
    const repo = wikiRepoPath(s.app.lw, project.id);
    const head = (await git(repo, 'rev-parse', 'main')).trim();
    const cases: Array<[unknown, number, unknown]> = [
      [{}, 400, { message: '400 Bad request - "title" not given' }],
      [{ title: 'x' }, 400, { message: '400 Bad request - "content" not given' }],
      [{ title: 'x', content: 'y', format: 'html' }, 400, { error: 'format does not have a valid value' }],
      [{ title: '   ', content: 'y' }, 400, { message: { title: ["can't be blank"] } }],
      [{ title: '../..', content: 'y' }, 400, { message: { title: ["can't be blank"] } }],
      [{ title: 'new', content: 'y' }, 400, { message: { title: ["'new' is a reserved name"] } }],
      [{ title: 'x'.repeat(246), content: 'y' }, 400, { message: { title: ['exceeds the limit of 245 bytes'] } }],
      [{ title: 'getting started', content: 'again' }, 400, { message: { base: ['Duplicate page: A page with that title already exists in the file getting-started.md'] } }],
      [{ title: 'a/.git/b', content: 'y' }, 400, { message: { title: ['is invalid'] } }],
    ];
    for (const [json, status, body] of cases) {
      const r = await s.request('POST', wikis(), { token: dev.token, json });
      expect({ json, status: r.status, body: r.body }).toEqual({ json, status, body });
    }
    expect((await git(repo, 'rev-parse', 'main')).trim()).toBe(head);
  });

  it('normalises titles as GitLab: .. and a leading / go, spaces become dashes', async () => {
    const r = await s.request('POST', wikis(), { token: dev.token, json: { title: '/notes/../ideas  /  big  one', content: 'x' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ slug: 'ideas/big-one', title: 'big one' });
  });

  it('updates content, renames within the directory, moves with a path, changes the format; the meta id stays', async () => {
    const before = (await s.request('GET', `${wikis()}/ideas%2Fbig-one`, { token: dev.token })).body;
    const content = await s.request('PUT', `${wikis()}/ideas%2Fbig-one`, { token: dev.token, json: { content: 'bigger' } });
    expect(content.status).toBe(200);
    expect(content.body).toMatchObject({ slug: 'ideas/big-one', content: 'bigger', wiki_page_meta_id: before.wiki_page_meta_id });
    const renamed = await s.request('PUT', `${wikis()}/ideas%2Fbig-one`, { token: dev.token, json: { title: 'Huge One' } });
    expect(renamed.body).toMatchObject({ slug: 'ideas/Huge-One', title: 'Huge One', content: 'bigger', wiki_page_meta_id: before.wiki_page_meta_id });
    const moved = await s.request('PUT', `${wikis()}/ideas%2FHuge-One`, { token: dev.token, json: { title: '/Top', format: 'org' } });
    expect(moved.body).toMatchObject({ slug: 'Top', title: 'Top', format: 'org', wiki_page_meta_id: before.wiki_page_meta_id });
    const repo = wikiRepoPath(s.app.lw, project.id);
    expect(await git(repo, 'show', 'main:Top.org')).toBe('bigger');
    expect((await git(repo, 'log', '-1', '--format=%s', 'main')).trim()).toBe('wkdev updated page: Top');
    const taken = await s.request('PUT', `${wikis()}/Top`, { token: dev.token, json: { title: '/Getting Started' } });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ message: { base: ['There is already a page with the same title in that path.'] } });
    const none = await s.request('PUT', `${wikis()}/Top`, { token: dev.token, json: {} });
    expect(none.status).toBe(400);
    expect(none.body).toEqual({ error: 'content, title, format are missing, at least one parameter must be provided' });
    const gone = await s.request('PUT', `${wikis()}/nope`, { token: dev.token, json: { content: 'x' } });
    expect(gone.status).toBe(404);
  });

  it('reads an older version and renders HTML on request; front matter is parsed and written', async () => {
    const repo = wikiRepoPath(s.app.lw, project.id);
    const first = (await git(repo, 'rev-list', '--reverse', 'main')).split('\n')[0]!;
    const old = await s.request('GET', `${wikis()}/Getting-Started?version=${first}`, { token: guest.token });
    expect(old.status).toBe(200);
    expect(old.body.content).toBe('# Hello\n\nWelcome.');
    expect((await s.request('GET', `${wikis()}/Top?version=${first}`, { token: guest.token })).status).toBe(404);
    expect((await s.request('GET', `${wikis()}/Top?version=main~1`, { token: guest.token })).body).toEqual({ message: '404 Wiki Page Not Found' });
    const html = await s.request('GET', `${wikis()}/Top?render_html=true`, { token: guest.token });
    expect(html.body.content).toBe('<p dir="auto">bigger</p>');
    const fm = await s.request('POST', wikis(), { token: dev.token, json: { title: 'With Meta', content: '---\ntags: [a, b]\n---\nBody', front_matter: { title: 'Shown' } } });
    expect(fm.status).toBe(201);
    expect(fm.body.front_matter).toEqual({ tags: ['a', 'b'], title: 'Shown' });
    expect(fm.body.content).toMatch(/^---\n[\s\S]*title: Shown\n---\nBody$/);
  });

  it('uploads an attachment into the wiki repository', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('PNGDATA')]), 'my shot.png');
    const r = await fetch(`${s.url}/api/v4${wikis()}/attachments`, { method: 'POST', headers: { 'PRIVATE-TOKEN': dev.token }, body: form });
    expect(r.status).toBe(201);
    const body = (await r.json()) as any;
    expect(body).toMatchObject({ file_name: 'my_shot.png', branch: 'main' });
    expect(body.file_path).toMatch(/^uploads\/[0-9a-f]{32}\/my_shot\.png$/);
    expect(body.link).toEqual({ url: body.file_path, markdown: `![my_shot](${body.file_path})` });
    expect(await git(wikiRepoPath(s.app.lw, project.id), 'show', `main:${body.file_path}`)).toBe('PNGDATA');
    const missing = await s.request('POST', `${wikis()}/attachments`, { token: dev.token, json: {} });
    expect(missing.body).toEqual({ message: '400 Bad request - "file" not given' });
    const asText = await s.request('POST', `${wikis()}/attachments`, { token: dev.token, json: { file: 'x' } });
    expect(asText.body).toEqual({ error: 'file is invalid' });
  });

  it('deletes a page (Maintainers), keeping its meta for its events', async () => {
    const r = await s.request('POST', wikis(), { token: dev.token, json: { title: 'Scratch', content: 'tmp' } });
    expect((await s.request('DELETE', `${wikis()}/Scratch`, { token: dev.token })).status).toBe(403);
    const del = await s.request('DELETE', `${wikis()}/Scratch`, { token: maint.token });
    expect(del.status).toBe(204);
    expect((await s.request('GET', `${wikis()}/Scratch`, { token: maint.token })).status).toBe(404);
    expect((await s.request('DELETE', `${wikis()}/Scratch`, { token: maint.token })).status).toBe(404);
    const again = await s.request('POST', wikis(), { token: dev.token, json: { title: 'Scratch', content: 'back' } });
    expect(again.body.wiki_page_meta_id).toBe(r.body.wiki_page_meta_id);
  });
});

describe('odd input', () => {
  it('odd slugs, versions, titles and branches are 4xx, never 500, and change nothing', async () => {
    const repo = wikiRepoPath(s.app.lw, project.id);
    const head = (await git(repo, 'rev-parse', 'main')).trim();
    const slugs = ['..%2F..%2Fetc', '%2E%2E', 'a%0Ab', '%E2%80%AE', 'x'.repeat(5000), 'dir%2F', '%20', 'Top%00', '.git%2Fconfig', 'uploads'];
    for (const slug of slugs) {
      for (const [method, json] of [['GET', undefined], ['PUT', { content: 'x', title: '../' }], ['DELETE', undefined]] as const) {
        const r = await s.request(method, `${wikis()}/${slug}`, { token: maint.token, ...(json ? { json } : {}) });
        expect(r.status, `${method} ${slug.slice(0, 40)}`).toBeGreaterThanOrEqual(400);
        expect(r.status, `${method} ${slug.slice(0, 40)}`).toBeLessThan(500);
      }
    }
    for (const q of ['version=main', 'version=%00', `version=${'f'.repeat(64)}`, 'render_html=maybe', 'version[]=1']) {
      const r = await s.request('GET', `${wikis()}/Top?${q}`, { token: maint.token });
      expect(r.status, q).toBeGreaterThanOrEqual(400);
      expect(r.status, q).toBeLessThan(500);
    }
    const bodies: unknown[] = [
      { title: ['a'], content: 'x' },
      { title: { a: 1 }, content: 'x' },
      { title: 'ok', content: { a: 1 } },
      { title: 'ok', content: 'x', front_matter: 'str' },
      { title: 'a\u0001b', content: 'x' },
      { title: 'x/'.repeat(2100) + 'y', content: 'x' },
      { title: 'ok', content: 'x', format: ['markdown'] },
    ];
    for (const json of bodies) {
      const r = await s.request('POST', wikis(), { token: maint.token, json });
      expect(r.status, JSON.stringify(json).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(r.status, JSON.stringify(json).slice(0, 80)).toBeLessThan(500);
    }
    for (const branch of ['../x', 'a b', '-x', 'refs/heads/../x']) {
      const form = new FormData();
      form.append('file', new Blob([Buffer.from('x')]), 'f.txt');
      form.append('branch', branch);
      const r = await fetch(`${s.url}/api/v4${wikis()}/attachments`, { method: 'POST', headers: { 'PRIVATE-TOKEN': maint.token }, body: form });
      expect(r.status, branch).toBe(400);
    }
    expect((await git(repo, 'rev-parse', 'main')).trim()).toBe(head);
  });
});

describe('limits and conflicts', () => {
  it('refuses a blank new title, a front matter title that is no string, and merging into front matter that is not a YAML hash', async () => {
    await s.request('POST', wikis(), { token: dev.token, json: { title: 'lim/Nested', content: 'n' } });
    const blank = await s.request('PUT', `${wikis()}/lim%2FNested`, { token: dev.token, json: { title: '' } });
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual({ message: { title: ["can't be blank"] } });
    const obj = await s.request('POST', wikis(), { token: dev.token, json: { title: 'FM', content: 'x', front_matter: { title: { a: 1 } } } });
    expect(obj.body).toEqual({ error: 'front_matter[title] is invalid' });
    await s.request('POST', wikis(), { token: dev.token, json: { title: 'Bad FM', content: '---\n: : [\n---\nbody' } });
    const merge = await s.request('PUT', `${wikis()}/Bad-FM`, { token: dev.token, json: { front_matter: { title: 'T' }, format: 'markdown' } });
    expect(merge.status).toBe(400);
    expect((await s.request('GET', `${wikis()}/Bad-FM`, { token: dev.token })).body.content).toBe('---\n: : [\n---\nbody');
  });

  it("cuts a page shown at 10 MiB (GitLab's display limit), as read and in lists; renders hostile Markdown", async () => {
    const dir = join(work, 'big');
    const url = new URL(s.url);
    await git(work, 'clone', '-q', `${url.protocol}//${dev.username}:${dev.token}@${url.host}/${project.path_with_namespace}.wiki.git`, dir);
    await writeFile(join(dir, 'Huge.md'), 'x'.repeat(11 * 1024 * 1024));
    await writeFile(join(dir, 'Brackets.md'), '['.repeat(200_000));
    await writeFile(join(dir, 'odd\nname.md'), 'pushed only');
    await git(dir, 'add', '.');
    await git(dir, 'commit', '-q', '-m', 'Big');
    await git(dir, 'push', '-q', 'origin', 'HEAD:main');
    const one = await s.request('GET', `${wikis()}/Huge`, { token: guest.token });
    expect(one.status).toBe(200);
    expect(one.body.content.length).toBe(10 * 1024 * 1024);
    const list = await s.request('GET', `${wikis()}?with_content=true`, { token: guest.token });
    expect(list.body.find((p: any) => p.slug === 'Huge').content.length).toBe(10 * 1024 * 1024);
    // A file only git can name is no page.
    expect(list.body.some((p: any) => p.slug.includes('\n'))).toBe(false);
    const html = await s.request('GET', `${wikis()}/Brackets?render_html=1`, { token: guest.token });
    expect(html.status).toBe(200);
    expect(html.body.content.startsWith('<p dir="auto">[[[')).toBe(true);
    // Updating a big page's title keeps all of it.
    await s.request('PUT', `${wikis()}/Huge`, { token: dev.token, json: { title: 'Huger' } });
    expect((await git(wikiRepoPath(s.app.lw, project.id), 'cat-file', '-s', 'main:Huger.md')).trim()).toBe(String(11 * 1024 * 1024));
  });

  it('a project named <sibling>.wiki (or the reverse) is refused: it would take over the wiki URL', async () => {
    const a = await s.request('POST', '/projects', { token: alice.token, json: { name: 'docs.wiki', path: 'docs.wiki' } });
    expect(a.status).toBe(400);
    expect(a.body.message.path).toEqual(['has already been taken']);
    expect((await s.request('POST', '/projects', { token: alice.token, json: { name: 'lone.wiki', path: 'lone.wiki' } })).status).toBe(201);
    const b = await s.request('POST', '/projects', { token: alice.token, json: { name: 'lone', path: 'lone' } });
    expect(b.status).toBe(400);
  });

  it('an attachment branch must be a valid new branch name', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('x')]), 'f.txt');
    form.append('branch', 'refs/heads/x');
    const r = await fetch(`${s.url}/api/v4${wikis()}/attachments`, { method: 'POST', headers: { 'PRIVATE-TOKEN': dev.token }, body: form });
    expect(r.status).toBe(400);
  });
});

describe('access', () => {
  it('Guests read, Reporters cannot write, outsiders and anonymous callers do not see a private project', async () => {
    expect((await s.request('GET', wikis(), { token: guest.token })).status).toBe(200);
    for (const u of [guest, reporter]) {
      const r = await s.request('POST', wikis(), { token: u.token, json: { title: 'No', content: 'no' } });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ message: '403 Forbidden' });
      expect((await s.request('PUT', `${wikis()}/Top`, { token: u.token, json: { content: 'no' } })).status).toBe(403);
    }
    expect((await s.request('GET', wikis(), { token: outsider.token })).status).toBe(404);
    const anon = await s.request('GET', wikis(), { token: null });
    expect(anon.status).toBe(404);
    expect(anon.body).toEqual({ message: '404 Project Not Found' });
  });

  it('a public project: anyone reads, nobody but members writes; a private or disabled wiki closes', async () => {
    const pub = await createProject(s, 'pubwiki', { token: alice.token, visibility: 'public' });
    await s.request('POST', wikis(pub.id), { token: alice.token, json: { title: 'home', content: 'hi' } });
    expect((await s.request('GET', `${wikis(pub.id)}/home`, { token: null })).status).toBe(200);
    expect((await s.request('GET', `${wikis(pub.id)}/home`, { token: outsider.token })).status).toBe(200);
    expect((await s.request('POST', wikis(pub.id), { token: outsider.token, json: { title: 'x', content: 'y' } })).status).toBe(403);
    expect((await s.request('POST', wikis(pub.id), { token: null, json: { title: 'x', content: 'y' } })).status).toBe(403);
    await s.request('PUT', `/projects/${pub.id}`, { token: alice.token, json: { wiki_access_level: 'private' } });
    expect((await s.request('GET', wikis(pub.id), { token: outsider.token })).status).toBe(403);
    expect((await s.request('GET', wikis(pub.id), { token: alice.token })).status).toBe(200);
    await s.request('PUT', `/projects/${pub.id}`, { token: alice.token, json: { wiki_access_level: 'disabled' } });
    expect((await s.request('GET', wikis(pub.id), { token: alice.token })).status).toBe(403);
    expect((await s.request('GET', wikis(pub.id))).status).toBe(403);
  });

  it('an archived project reads but never writes', async () => {
    const arch = await createProject(s, 'archwiki', { token: alice.token });
    await s.request('POST', wikis(arch.id), { token: alice.token, json: { title: 'home', content: 'hi' } });
    await s.request('POST', `/projects/${arch.id}/archive`, { token: alice.token });
    expect((await s.request('GET', `${wikis(arch.id)}/home`, { token: alice.token })).status).toBe(200);
    expect((await s.request('PUT', `${wikis(arch.id)}/home`, { token: alice.token, json: { content: 'x' } })).status).toBe(403);
    expect((await s.request('DELETE', `${wikis(arch.id)}/home`, { token: alice.token })).status).toBe(403);
  });
});

describe('git, events, webhooks and clients', () => {
  const remote = (u: U, path: string) => {
    const url = new URL(s.url);
    return `${url.protocol}//${u.username}:${u.token}@${url.host}/${path}.wiki.git`;
  };

  it('clones the wiki over HTTP, pushes pages (Developers), and the API and events see them', async () => {
    const dir = join(work, 'wiki');
    await git(work, 'clone', '-q', remote(dev, project.path_with_namespace), dir);
    expect((await git(dir, 'ls-files')).split('\n')).toContain('Getting-Started.md');
    await writeFile(join(dir, 'From-Git.md'), 'pushed page\n');
    await git(dir, 'add', '.');
    await git(dir, 'commit', '-q', '-m', 'Add a page');
    await git(dir, 'push', '-q', 'origin', 'HEAD:main');
    const page = await s.request('GET', `${wikis()}/From-Git`, { token: guest.token });
    expect(page.body).toMatchObject({ slug: 'From-Git', title: 'From Git', content: 'pushed page\n' });
    await s.request('POST', wikis(), { token: dev.token, json: { title: 'Ephemeral', content: 'x' } });
    await s.request('DELETE', `${wikis()}/Ephemeral`, { token: maint.token });
    await git(dir, 'pull', '-q', 'origin', 'main');
    await writeFile(join(dir, 'Second-Push.md'), 'later\n');
    await git(dir, 'add', '.');
    await git(dir, 'commit', '-q', '-m', 'Another page');
    await git(dir, 'push', '-q', 'origin', 'HEAD:main');
    const events = await s.request('GET', `/projects/${project.id}/events?target_type=wiki&per_page=100`, { token: alice.token });
    expect(events.status).toBe(200);
    expect(events.body[0]).toMatchObject({ action_name: 'created', target_title: 'Second Push' });
    const newest = events.body.find((e: any) => e.target_title === 'From Git');
    expect(newest).toMatchObject({ action_name: 'created', target_type: 'WikiPage::Meta', target_id: page.body.wiki_page_meta_id, target_iid: page.body.wiki_page_meta_id, target_title: 'From Git', author_username: 'wkdev' });
    expect(newest.wiki_page).toEqual({ format: 'markdown', slug: 'From-Git', title: 'From Git', wiki_page_meta_id: page.body.wiki_page_meta_id });
    expect(Object.keys(newest).indexOf('wiki_page')).toBe(Object.keys(newest).indexOf('author') + 1);
    // API changes are events too; a deleted page's event names it with wiki_page null.
    const actions = events.body.map((e: any) => e.action_name);
    expect(actions).toContain('updated');
    expect(actions).toContain('destroyed');
    expect(events.body.find((e: any) => e.action_name === 'destroyed' && e.target_title === 'Ephemeral')?.wiki_page).toBeNull();
  });

  it('refuses clones and pushes to whoever may not (Guests of a private project, Reporters pushing)', async () => {
    const failing = async (u: U, ...args: string[]) => {
      try {
        await git(work, ...args);
        return '';
      } catch (err) {
        return String((err as { stderr?: string }).stderr ?? err);
      }
    };
    expect(await failing(guest, 'clone', '-q', remote(guest, project.path_with_namespace), join(work, 'g'))).toMatch(/You are not allowed to download files from this wiki\./);
    const dir = join(work, 'rep');
    await git(work, 'clone', '-q', remote(reporter, project.path_with_namespace), dir);
    await git(dir, 'commit', '-q', '--allow-empty', '-m', 'no');
    let err = '';
    try {
      await git(dir, 'push', '-q', 'origin', 'HEAD:main');
    } catch (e) {
      err = String((e as { stderr?: string }).stderr ?? e);
    }
    expect(err).toMatch(/You are not allowed to write to this project's wiki/);
    expect(await failing(outsider, 'clone', '-q', remote(outsider, project.path_with_namespace), join(work, 'o'))).toMatch(/could not be found/);
  });

  it('sends Wiki Page Hooks', async () => {
    const hook = await s.request('POST', `/projects/${project.id}/hooks`, { token: alice.token, json: { url: `${hookBase}/wiki`, wiki_page_events: true, push_events: false } });
    expect(hook.status).toBe(201);
    await deliveriesSettled(s.app.lw);
    received.length = 0;
    await s.request('POST', wikis(), { token: dev.token, json: { title: 'Hooked', content: 'hi', message: 'Custom message' } });
    await deliveriesSettled(s.app.lw);
    expect(received).toHaveLength(1);
    expect(received[0]!.headers['x-gitlab-event']).toBe('Wiki Page Hook');
    const body = received[0]!.body;
    expect(Object.keys(body)).toEqual(['object_kind', 'user', 'project', 'wiki', 'object_attributes']);
    expect(body.wiki).toMatchObject({ web_url: `${s.url}/${project.path_with_namespace}/-/wikis`, git_http_url: `${s.url}/${project.path_with_namespace}.wiki.git`, path_with_namespace: `${project.path_with_namespace}.wiki`, default_branch: 'main' });
    expect(body.object_attributes).toMatchObject({ title: 'Hooked', content: 'hi', format: 'markdown', message: 'Custom message', slug: 'Hooked', url: `${s.url}/${project.path_with_namespace}/-/wikis/Hooked`, action: 'create' });
    expect(body.object_attributes.diff_url).toBe(`${body.object_attributes.url}/diff?version_id=${body.object_attributes.version_id}`);
    // The test delivery: the first page by path, as created, with its last commit.
    received.length = 0;
    const test = await s.request('POST', `/projects/${project.id}/hooks/${hook.body.id}/test/wiki_page_events`, { token: alice.token });
    expect(test.status).toBe(201);
    await deliveriesSettled(s.app.lw);
    const first = (await s.request('GET', wikis(), { token: alice.token })).body[0];
    expect(received.at(-1)!.body.object_attributes).toMatchObject({ slug: first.slug, title: first.title, action: 'create' });
    const empty = await createProject(s, 'nowiki', { token: alice.token });
    const emptyHook = await s.request('POST', `/projects/${empty.id}/hooks`, { token: alice.token, json: { url: `${hookBase}/none`, wiki_page_events: true } });
    const none = await s.request('POST', `/projects/${empty.id}/hooks/${emptyHook.body.id}/test/wiki_page_events`, { token: alice.token });
    expect(none.status).toBe(422);
    expect(none.body).toEqual({ message: 'Ensure the wiki is enabled and has pages.' });
  });

  it("python-gitlab's and gitbeaker's wiki calls", async () => {
    const api = new Gitlab({ host: s.url, token: dev.token });
    const created: any = await api.ProjectWikis.create(project.id, 'From gitbeaker', 'dir/Beaker Page', { format: 'markdown' });
    expect(created).toMatchObject({ slug: 'dir/Beaker-Page', title: 'Beaker Page' });
    const shown: any = await api.ProjectWikis.show(project.id, 'dir/Beaker-Page');
    expect(shown.content).toBe('From gitbeaker');
    await api.ProjectWikis.edit(project.id, 'dir/Beaker-Page', { content: 'Edited' });
    const all: any[] = await api.ProjectWikis.all(project.id, { withContent: true });
    expect(all.find((p) => p.slug === 'dir/Beaker-Page')?.content).toBe('Edited');
    await new Gitlab({ host: s.url, token: maint.token }).ProjectWikis.remove(project.id, 'dir/Beaker-Page');
    expect((await s.request('GET', `${wikis()}/dir%2FBeaker-Page`, { token: dev.token })).status).toBe(404);

    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
p = gl.projects.get(int(sys.argv[3]))
page = p.wikis.create({'title': 'Py Page', 'content': 'from python'})
page.content = 'changed'
page.save()
again = p.wikis.get('Py-Page')
# python-gitlab 3.x (Debian's) has no wikis.upload: its multipart upload through http_post.
up = gl.http_post('/projects/%d/wikis/attachments' % p.id, files={'file': ('notes.txt', b'attached')})
print(json.dumps({'slug': page.slug, 'content': again.content, 'titles': [w.title for w in p.wikis.list(get_all=True)], 'upload': up}))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, dev.token, String(project.id)]);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ slug: 'Py-Page', content: 'changed' });
    expect(out.titles).toContain('Py Page');
    expect(out.upload).toMatchObject({ file_name: 'notes.txt', link: { markdown: expect.stringMatching(/^\[notes\.txt\]\(uploads\/[0-9a-f]{32}\/notes\.txt\)$/) } });
  });

  it("measures the wiki and the project's snippets in the project's and its group's statistics", async () => {
    const group = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'wikigroup', path: 'wikigroup' } })).body;
    const p = await createProject(s, 'measured', { token: alice.token, extra: { namespace_id: group.id } });
    const stats = async () => (await s.request('GET', `/projects/${p.id}?statistics=true`, { token: alice.token })).body.statistics;
    const before = await stats();
    expect(before).toMatchObject({ wiki_size: 0, snippets_size: 0 });
    await s.request('POST', wikis(p.id), { token: alice.token, json: { title: 'home', content: 'x'.repeat(2000) } });
    await s.request('POST', `/projects/${p.id}/snippets`, { token: alice.token, json: { title: 'sn', visibility: 'private', files: [{ file_path: 'a.txt', content: 'a' }] } });
    const after = await stats();
    expect(after.wiki_size).toBeGreaterThan(0);
    expect(after.snippets_size).toBeGreaterThan(0);
    expect(after.storage_size).toBe(after.repository_size + after.wiki_size + after.snippets_size);
    // Group statistics are for administrators (the root token).
    const g = (await s.request('GET', '/groups?statistics=true&search=wikigroup')).body[0].statistics;
    expect(g).toMatchObject({ wiki_size: after.wiki_size, snippets_size: after.snippets_size, storage_size: after.storage_size });
  });

  it('a deleted project takes its wiki repository and metas with it', async () => {
    const gone = await createProject(s, 'gonewiki', { token: alice.token });
    await s.request('POST', wikis(gone.id), { token: alice.token, json: { title: 'home', content: 'bye' } });
    const path = wikiRepoPath(s.app.lw, gone.id);
    expect(existsSync(path)).toBe(true);
    expect((await s.request('DELETE', `/projects/${gone.id}`, { token: alice.token })).status).toBe(202);
    for (let i = 0; i < 50 && existsSync(path); i++) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(path)).toBe(false);
    const left = await s.app.lw.db.selectFrom('wiki_page_meta').select('id').where('project_id', '=', gone.id).execute();
    expect(left).toEqual([]);
  });
});
