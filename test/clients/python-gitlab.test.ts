// python-gitlab (Debian's python3-gitlab, installed by .ci/run) driving a real session: auth,
// version, paginated lists, groups, projects, files, branches, commits, members, tags, releases,
// merge requests and their notes and threads.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';

const run = runPython;

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ LABWRIGHT_WEBHOOK_ALLOW_LOCAL: 'true' });
});
afterAll(async () => {
  await s?.close();
});

describe('python-gitlab', () => {
  it('runs a whole session unchanged', async () => {
    // .ci/run installs python3-gitlab; a developer machine without it cannot run this client.
    if (!(await hasPythonGitlab())) throw new Error('python3-gitlab is not installed: apt-get install -y python3-gitlab');
    const { stdout } = await run(PYTHON, [join(import.meta.dirname, 'python_gitlab_flow.py'), s.url, s.rootToken], { timeout: 120_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(out.user).toBe('root');
    expect(out.version[0]).toMatch(/^\d+\.\d+\.\d+/);
    expect(out.users_all).toBe(7);
    expect(out.users_iter).toBe(7);
    expect(out.pat_prefix).toBe('glpat-');
    expect(out.subgroups).toEqual(['py-group/py-sub']);
    expect(out.group_by_path).toBe(true);
    expect(out.namespace_exists).toBe('group');
    expect(out.project_path).toBe('py-group/py-project');
    expect(out.default_branch).toBe('main');
    expect(out.file_content).toBe("print('hi')\n");
    expect(out.branches).toEqual(['feature', 'main']);
    expect(out.commits_on_feature).toBe(3);
    expect(out.member_level).toBe(30);
    expect(out.tags).toEqual(['v1.0.0', 'v1.1.0']);
    expect(out.tag_message).toBe('First release');
    expect(out.tags_after_delete).toEqual(['v1.0.0']);
    expect(out.release_name).toBe('Version 1');
    expect(out.release_links).toEqual(['binary']);
    expect(out.release_description).toBe('First release, edited');
    expect(out.releases).toEqual(['v1.0.0']);
    expect(out.tag_release).toEqual({ tag_name: 'v1.0.0', description: 'First release, edited' });
    expect(out.mr_notes).toEqual(['Build passed (edited)']);
    expect(out.mr_thread).toEqual([['Please add a test', true], ['Added', true]]);
    expect(out.mr_discussions).toBe(2);
    expect(out.mr_user_notes_count).toBe(3);
    expect(out.mr_notes_after_delete).toBe(2);
    expect(out.mr_iid).toBe(1);
    expect(out.mr_list).toEqual([1]);
    expect(out.mr_changes).toBe(1);
    expect(out.mr_state).toBe('merged');
    expect(out.mr_merge_commit).toBe(true);
    expect(out.main_protected).toBe(true);
    expect(out.protected_branches).toEqual(['main', 'release/*']);
    expect(out.protected_release).toEqual([0, 'Developers + Maintainers']);
    expect(out.protected_after_delete).toEqual(['main']);
    expect(out.protected_tags).toEqual([['v*', 40]]);
    expect(out.tag_protected).toBe(true);
    expect(out.hooks).toEqual([[true, true, true, 'main']]);
    expect(out.hook_calls).toEqual([{ event: 'Push Hook', token: 'py-secret', kind: 'push', ref: 'refs/heads/main' }]);
    expect(out.hooks_after_delete).toBe(0);
    expect(out.fork).toEqual(['pybob/py-up', true, 'finished']);
    expect(out.fork_mr).toEqual([true, true, true]);
    expect(out.forks).toEqual(['pybob/py-up']);
    expect(out.fork_mr_changes).toEqual(['fix.txt']);
    expect(out.fork_mr_state).toBe('merged');
    expect(out.upstream_forks_count).toBe(1);
    expect(out.fork_after_unlink).toBe(false);
    expect(out.star_count).toBe(1);
    expect(out.starrers).toEqual(['pybob']);
    expect(out.starred).toEqual([true]);
    expect(out.star_count_after).toBe(0);
    expect(out.protected_duplicate).toEqual([409, "Protected branch 'main' already exists"]);
    expect(out.missing_project).toEqual([404, '404 Project Not Found']);
    expect(out.bad_token).toBe(401);
  }, 180_000);
});
