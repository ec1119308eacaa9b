// python-gitlab (Debian's python3-gitlab, installed by .ci/run) as CI tools use it: project, group and
// instance CI/CD variables (get_all lists, save(), environment scope filters and the errors it
// raises), and deploy tokens, one of them then used by the git CLI to clone. The flow is
// test/clients/python_gitlab_ci_flow.py.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git } from '../helpers/git.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.close();
});

const shape = (key: string, value: string | null, extra: Record<string, unknown> = {}) => ({
  key,
  value,
  variable_type: 'env_var',
  protected: false,
  masked: false,
  environment_scope: '*',
  description: null,
  ...extra,
});

describe('python-gitlab CI tooling', () => {
  it('manages variables and deploy tokens unchanged', async () => {
    if (!(await hasPythonGitlab())) throw new Error('python3-gitlab is not installed: apt-get install -y python3-gitlab');
    const { stdout } = await runPython(PYTHON, [join(import.meta.dirname, 'python_gitlab_ci_flow.py'), s.url, s.rootToken], { timeout: 120_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(out.created).toEqual(shape('DEPLOY_KEY', 's3cr3t-value', { protected: true, masked: true }));
    expect(out.listed).toBe(26);
    expect(out.first_page).toEqual(['DEPLOY_KEY', 'BULK_00', 'BULK_01', 'BULK_02', 'BULK_03']);
    expect(out.got).toEqual(out.created);
    expect(out.saved).toEqual(shape('DEPLOY_KEY', 'rotated-value', { protected: true, masked: true }));
    expect(out.duplicate).toEqual({ error: 400, message: "{'key': ['(DEPLOY_KEY) has already been taken']}" });
    expect(out.bad_key).toEqual({ error: 400, message: `{'key': ["can contain only letters, digits and '_'."]}` });
    expect(out.unmaskable).toEqual({ error: 400, message: "{'value': ['is invalid']}" });
    expect(out.ambiguous).toEqual({ error: 409, message: "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'" });
    expect(out.by_scope).toEqual(shape('URL', 'https://staging', { environment_scope: 'staging' }));
    expect(out.update_scoped).toBe('https://staging-2');
    expect(out.delete_scoped).toBeNull();
    expect(out.url_left).toEqual([['staging', 'https://staging-2']]);
    expect(out.group_created).toEqual(shape('GROUP_TOKEN', 'group-secret', { variable_type: 'file' }));
    expect(out.group_listed).toEqual(['GROUP_TOKEN']);
    expect(out.instance_created).toEqual(shape('REGISTRY', 'registry.local', { environment_scope: '<absent>' }));
    expect(out.instance_listed).toEqual(['REGISTRY']);
    expect(out.after_delete).toEqual([26, 0, 0]);
    expect(out.missing).toEqual({ error: 404, message: '404 Variable Not Found' });

    expect(out.dt_created).toEqual({ name: 'ci-clone', username: expect.stringMatching(/^gitlab\+deploy-token-\d+$/), scopes: ['read_repository'], has_token: true });
    expect(out.dt_listed).toEqual([['ci-clone', '2099-12-31T00:00:00.000Z', false, false]]);
    expect(out.dt_get).toBe('ci-clone');
    expect(out.group_dt).toEqual([['group-ci-bot', ['read_repository', 'read_registry']]]);
    expect(out.instance_dt).toEqual(['ci-clone', 'group-ci']);
    expect(out.dt_bad_scope).toEqual({ error: 400, message: 'scopes does not have a valid value' });
    expect(out.dt_after_delete).toEqual([]);
    // The group's token clones the group's project with the git CLI.
    const work = mkdtempSync(join(tmpdir(), 'lw-pygl-ci-'));
    try {
      const { username, token, path } = out.dt_credentials;
      await git(work, 'clone', '-q', `http://${username}:${token}@${s.url.replace('http://', '')}/${path}.git`, join(work, 'c'));
      expect(readFileSync(join(work, 'c', 'README.md'), 'utf8')).toBe('# vars-app\n');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 180_000);
});
