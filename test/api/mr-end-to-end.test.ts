// The issue's "done when", as a new user would do it: push two branches with the git CLI over
// HTTP, open a merge request, see its diff, make it conflict, resolve it, report a passing external
// pipeline, merge with auto-merge, and find the merge commit in a fresh clone.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer } from './mr-helpers.js';

let s: TestServer;
let work: string;
beforeAll(async () => {
  s = await startServer();
  work = mkdtempSync(join(tmpdir(), 'lw-mr-e2e-'));
});
afterAll(async () => {
  await closeServer(s);
  rmSync(work, { recursive: true, force: true });
});

const run = promisify(execFile);

/** Asynchronous on purpose: the server answering the push runs in this same process. */
async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    timeout: 60_000,
  });
  return stdout;
}

describe('merge request end to end with the git CLI', () => {
  it('push, open, diff, conflict, resolve, pipeline, auto-merge, clone', async () => {
    const dev = await s.createUser('dev');
    const p = await s.request('POST', '/projects', { token: dev.token, json: { name: 'e2e', path: 'e2e' } });
    expect(p.status).toBe(201);
    await s.request('PUT', `/projects/${p.body.id}`, { token: dev.token, json: { only_allow_merge_if_pipeline_succeeds: true } });
    const remote = `${s.url.replace('http://', `http://dev:${dev.token}@`)}/dev/e2e.git`;
    const clone = join(work, 'c');
    await git(work, 'init', '-q', clone);
    writeFileSync(join(clone, 'app.txt'), 'base\n');
    await git(clone, 'add', '.');
    await git(clone, 'commit', '-qm', 'base');
    await git(clone, 'push', '-q', remote, 'main');
    await git(clone, 'checkout', '-qb', 'feature');
    writeFileSync(join(clone, 'app.txt'), 'feature\n');
    await git(clone, 'commit', '-qam', 'feature change');
    await git(clone, 'push', '-q', remote, 'feature');
    await git(clone, 'checkout', '-q', 'main');
    await git(clone, 'checkout', '-qb', 'other');
    writeFileSync(join(clone, 'other.txt'), 'other\n');
    await git(clone, 'add', '.');
    await git(clone, 'commit', '-qm', 'other');
    await git(clone, 'push', '-q', remote, 'other');

    const api = (method: string, path: string, json?: unknown) => s.request(method, `/projects/${p.body.id}${path}`, { token: dev.token, json });
    const mr = (await api('POST', '/merge_requests', { source_branch: 'feature', target_branch: 'main', title: 'Feature' })).body;
    const diffs = await api('GET', `/merge_requests/${mr.iid}/diffs`);
    expect(diffs.body[0].diff).toContain('+feature');

    // Someone changes the same line on main: the request conflicts.
    await git(clone, 'checkout', '-q', 'main');
    writeFileSync(join(clone, 'app.txt'), 'main\n');
    await git(clone, 'commit', '-qam', 'main change');
    await git(clone, 'push', '-q', remote, 'main');
    let got = await api('GET', `/merge_requests/${mr.iid}`);
    expect(got.body).toMatchObject({ has_conflicts: true, detailed_merge_status: 'conflict' });

    // Resolve by merging main into feature locally and pushing.
    await git(clone, 'checkout', '-q', 'feature');
    try {
      await git(clone, 'merge', '-q', 'main');
    } catch {
      writeFileSync(join(clone, 'app.txt'), 'resolved\n');
      await git(clone, 'commit', '-qam', 'resolve');
    }
    await git(clone, 'push', '-q', remote, 'feature');
    got = await api('GET', `/merge_requests/${mr.iid}`);
    expect(got.body.has_conflicts).toBe(false);
    expect(got.body.detailed_merge_status).toBe('ci_must_pass');
    const head = got.body.sha;

    await api('POST', `/statuses/${head}`, { state: 'running', name: 'external-ci' });
    const auto = await api('PUT', `/merge_requests/${mr.iid}/merge`, { auto_merge: true });
    expect(auto.body).toMatchObject({ state: 'opened', merge_when_pipeline_succeeds: true });
    await api('POST', `/statuses/${head}`, { state: 'success', name: 'external-ci' });
    got = await api('GET', `/merge_requests/${mr.iid}`);
    expect(got.body.state).toBe('merged');

    const fresh = join(work, 'fresh');
    await git(work, 'clone', '-q', remote, fresh);
    const log = await git(fresh, 'log', '--format=%H %s', '-3', 'origin/main');
    expect(log.split('\n')[0]).toBe(`${got.body.merge_commit_sha} Merge branch 'feature' into 'main'`);
  });
});
