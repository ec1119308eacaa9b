// POST /markdown: text rendered as HTML (escaped, never markup of the caller's own), in a project's
// context only when the caller may read it; python-gitlab's markdown().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
let user: { id: number; username: string; token: string };

beforeAll(async () => {
  s = await startServer();
  user = await s.createUser('mduser');
}, 60_000);

afterAll(async () => closeServer(s));

describe('POST /markdown', () => {
  it('renders text, escaping HTML; 201 as GitLab', async () => {
    const r = await s.request('POST', '/markdown', { token: user.token, json: { text: 'Hello **world** <script>x</script>', gfm: true } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ html: '<p dir="auto">Hello <strong>world</strong> &lt;script&gt;x&lt;/script&gt;</p>' });
  });

  it("refuses a missing text, a project the caller may not read, anonymous callers and texts over 256 KiB", async () => {
    expect((await s.request('POST', '/markdown', { token: user.token, json: {} })).body).toEqual({ message: '400 Bad request - "text" not given' });
    const p = await createProject(s, 'mdprivate');
    const r = await s.request('POST', '/markdown', { token: user.token, json: { text: 'x', project: p.path_with_namespace } });
    expect(r.status).toBe(404);
    // Signed-in callers only (GitLab's authenticate_markdown_api).
    expect((await s.request('POST', '/markdown', { token: null, json: { text: 'x' } })).status).toBe(401);
    expect((await s.request('POST', '/markdown', { token: user.token, json: { text: 'x'.repeat(256 * 1024 + 1) } })).status).toBe(400);
  });

  it("answers python-gitlab's markdown()", async () => {
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
print(gl.markdown('*hi*'))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, user.token]);
    expect(stdout.trim()).toBe('<p dir="auto"><em>hi</em></p>');
  });
});
