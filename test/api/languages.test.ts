// GET /projects/:id/languages: the default branch's languages by share of bytes, without prose,
// vendored code and dotfiles; python-gitlab's languages().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, commit, createProject } from './mr-helpers.js';

let s: TestServer;
let project: { id: number; path_with_namespace: string };

beforeAll(async () => {
  s = await startServer();
  project = await createProject(s, 'polyglot');
}, 60_000);

afterAll(async () => closeServer(s));

describe('GET /projects/:id/languages', () => {
  it('is empty for a README alone, then shares bytes by language, largest first', async () => {
    expect((await s.request('GET', `/projects/${project.id}/languages`)).body).toEqual({});
    await commit(s, project.id, 'main', {
      'src/app.ts': 'x'.repeat(300),
      'tools/run.py': 'y'.repeat(100),
      'vendor/lib.js': 'z'.repeat(5000),
      '.eslintrc.js': 'z'.repeat(5000),
      'docs/guide.rb': 'z'.repeat(5000),
      'data.json': 'z'.repeat(5000),
    });
    const r = await s.request('GET', `/projects/${project.id}/languages`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ TypeScript: 75, Python: 25 });
    expect(Object.keys(r.body)).toEqual(['TypeScript', 'Python']);
  });

  it('is hidden from who may not read the code', async () => {
    expect((await s.request('GET', `/projects/${project.id}/languages`, { token: null })).status).toBe(404);
  });

  it("answers python-gitlab's languages()", async () => {
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
print(json.dumps(gl.projects.get(int(sys.argv[3])).languages()))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, s.rootToken, String(project.id)]);
    expect(JSON.parse(stdout)).toEqual({ TypeScript: 75, Python: 25 });
  });
});
