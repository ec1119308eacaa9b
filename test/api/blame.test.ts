// File blame (GET /projects/:id/repository/files/:file_path/blame): ranges of consecutive lines per
// commit with GitLab's BlameRangeCommit, the file headers, range[start]/range[end] with Grape's
// messages, lines past the end, empty files, access; and the clients' own calls (@gitbeaker/rest's
// allFileBlames, python-gitlab's files.blame).
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let outsider: { id: number; username: string; token: string };
let project: { id: number; path_with_namespace: string };
const shas: string[] = [];

async function commitFile(content: string, message: string, author: string, action = 'update') {
  const r = await s.request('POST', `/projects/${project.id}/repository/commits`, {
    token: alice.token,
    json: { branch: 'main', commit_message: message, author_name: author, author_email: `${author.toLowerCase()}@example.com`, actions: [{ action, file_path: 'src/app.txt', content }] },
  });
  expect(r.status).toBe(201);
  shas.push(r.body.id);
}

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('blamealice');
  outsider = await s.createUser('blameoutsider');
  project = await createProject(s, 'blamed', { token: alice.token });
  await commitFile('one\ntwo\nthree\n', 'First version\n\nWith a body', 'Ann', 'create');
  await commitFile('one\nTWO\nthree\nfour\n', 'Second version', 'Bob');
  await commitFile('one\nTWO\nthree\nfour\nfive', 'Third version', 'Ann');
  await s.request('POST', `/projects/${project.id}/repository/commits`, {
    token: alice.token,
    json: { branch: 'main', commit_message: 'empty file', actions: [{ action: 'create', file_path: 'empty.txt', content: '' }] },
  });
}, 60_000);

afterAll(async () => closeServer(s));

const blameUrl = (file = 'src/app.txt') => `/projects/${project.id}/repository/files/${encodeURIComponent(file)}/blame`;

describe('file blame', () => {
  it('groups consecutive lines by commit, with the commit in GitLab order and the file headers', async () => {
    const r = await s.request('GET', blameUrl(), { token: alice.token, query: { ref: 'main' } });
    expect(r.status).toBe(200);
    expect(r.body.map((g: any) => [g.commit.id, g.lines])).toEqual([
      [shas[0], ['one']],
      [shas[1], ['TWO']],
      [shas[0], ['three']],
      [shas[1], ['four']],
      [shas[2], ['five']],
    ]);
    const first = r.body[0].commit;
    expect(Object.keys(first)).toEqual(['id', 'parent_ids', 'message', 'authored_date', 'author_name', 'author_email', 'committed_date', 'committer_name', 'committer_email']);
    expect(first).toMatchObject({ message: 'First version\n\nWith a body', author_name: 'Ann', author_email: 'ann@example.com' });
    expect(first.authored_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000[+-]\d\d:\d\d$/);
    expect(r.body[1].commit.parent_ids).toEqual([shas[0]]);
    expect(r.headers.get('x-gitlab-file-path')).toBe('src/app.txt');
    const head = (await s.request('GET', `/projects/${project.id}/repository/branches/main`, { token: alice.token })).body.commit.id;
    expect(r.headers.get('x-gitlab-commit-id')).toBe(head);
    expect(r.headers.get('x-gitlab-last-commit-id')).toBe(shas[2]);
    expect(r.headers.get('x-gitlab-ref')).toBe('main');
    expect(r.headers.get('x-total')).toBeNull();
    // An older ref blames the file as it was.
    const old = await s.request('GET', blameUrl(), { token: alice.token, query: { ref: shas[0]! } });
    expect(old.body).toEqual([{ commit: expect.objectContaining({ id: shas[0] }), lines: ['one', 'two', 'three'] }]);
  });

  it('takes a range of lines; past the end is cut or empty; an empty file has none', async () => {
    const r = await s.request('GET', `${blameUrl()}?ref=main&range[start]=2&range[end]=3`, { token: alice.token });
    expect(r.body.map((g: any) => g.lines)).toEqual([['TWO'], ['three']]);
    const cut = await s.request('GET', `${blameUrl()}?ref=main&range[start]=5&range[end]=99`, { token: alice.token });
    expect(cut.body.map((g: any) => g.lines)).toEqual([['five']]);
    const past = await s.request('GET', `${blameUrl()}?ref=main&range[start]=6&range[end]=9`, { token: alice.token });
    expect([past.status, past.body]).toEqual([200, []]);
    const same = await s.request('GET', `${blameUrl()}?ref=main&range[start]=4&range[end]=4`, { token: alice.token });
    expect(same.body.map((g: any) => g.lines)).toEqual([['four']]);
    const empty = await s.request('GET', blameUrl('empty.txt'), { token: alice.token, query: { ref: 'main' } });
    expect([empty.status, empty.body]).toEqual([200, []]);
  });

  it("answers wrong input with GitLab's messages", async () => {
    const cases: Array<[string, number, unknown]> = [
      ['', 400, { message: '400 Bad request - "ref" not given' }],
      ['ref=', 400, { error: 'ref is empty' }],
      ['ref=main&range[start]=1', 400, { message: '400 Bad request - "range[end]" not given' }],
      ['ref=main&range[start]=&range[end]=', 400, { error: 'range[start] is empty, range[end] is empty' }],
      ['ref=main&range[start]=-2&range[end]=0', 400, { error: 'range[start] does not have a valid value, range[end] does not have a valid value' }],
      ['ref=main&range[start]=x&range[end]=2', 400, { error: 'range[start] is invalid' }],
      ['ref=main&range[start]=4&range[end]=2', 400, { message: 'range[start] must be less than or equal to range[end]' }],
      ['ref=nope', 404, { message: '404 Commit Not Found' }],
    ];
    for (const [query, status, body] of cases) {
      const r = await s.request('GET', `${blameUrl()}?${query}`, { token: alice.token });
      expect([query, r.status, r.body]).toEqual([query, status, body]);
    }
    expect((await s.request('GET', blameUrl('missing.txt'), { token: alice.token, query: { ref: 'main' } })).body).toEqual({ message: '404 File Not Found' });
    expect((await s.request('GET', blameUrl('src'), { token: alice.token, query: { ref: 'main' } })).body).toEqual({ message: '404 File Not Found' });
    expect((await s.request('GET', blameUrl('../etc/passwd'), { token: alice.token, query: { ref: 'main' } })).body).toEqual({ error: 'file_path should be a valid file path' });
    expect((await s.request('GET', blameUrl(), { token: outsider.token, query: { ref: 'main' } })).body).toEqual({ message: '404 Project Not Found' });
  });

  it('works from @gitbeaker/rest and python-gitlab', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const ranges = await api.RepositoryFiles.allFileBlames(project.id, 'src/app.txt', 'main', { range: { start: 1, end: 2 } } as never);
    expect((ranges as Array<{ lines: string[] }>).map((g) => g.lines)).toEqual([['one'], ['TWO']]);
    if (!(await hasPythonGitlab())) throw new Error('python3-gitlab is not installed: apt-get install -y python3-gitlab');
    const script = [
      'import gitlab, json, sys',
      'gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])',
      'p = gl.projects.get(int(sys.argv[3]))',
      'b = p.files.blame("src/app.txt", "main")',
      'print(json.dumps([[g["commit"]["author_name"], g["lines"]] for g in b]))',
    ].join('\n');
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, alice.token, String(project.id)]);
    expect(JSON.parse(stdout)).toEqual([['Ann', ['one']], ['Bob', ['TWO']], ['Ann', ['three']], ['Bob', ['four']], ['Ann', ['five']]]);
  });
});
