// Protected branches and tags on `git push` with the real git CLI: the pre-receive hook refuses
// what GitLab's checks refuse, with GitLab's words, and a refused push leaves every ref as it was.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesChanged } from '../../src/services/repository/protected-refs.js';
import { git, gitFails } from '../helpers/git.js';
import { startServer, type TestServer } from '../helpers/server.js';


let s: TestServer;
let work: string;
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let pid: number;


function remote(token: string, path: string): string {
  return `http://oauth2:${token}@${s.url.replace('http://', '')}/${path}.git`;
}

async function commitFile(dir: string, name: string): Promise<string> {
  writeFileSync(join(dir, name), `${name}\n`);
  await git(dir, 'add', name);
  await git(dir, 'commit', '-q', '-m', `add ${name}`);
  return (await git(dir, 'rev-parse', 'HEAD')).trim();
}

async function branchTip(name: string): Promise<string | null> {
  const r = await s.request('GET', `/projects/${pid}/repository/branches/${encodeURIComponent(name)}`, { token: owner.token });
  return r.status === 200 ? r.body.commit.id : null;
}

/** A clone of the project as `user`, on main. */
async function cloneAs(user: U, name: string): Promise<string> {
  const dir = join(work, name);
  await git(work, 'clone', '-q', remote(user.token, 'pushowner/guarded'), dir);
  return dir;
}

beforeAll(async () => {
  s = await startServer();
  work = mkdtempSync(join(tmpdir(), 'labwright-protected-push-'));
  owner = await s.createUser('pushowner');
  dev = await s.createUser('pushdev');
  const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'guarded' } });
  expect(p.status).toBe(201);
  pid = p.body.id;
  const m = await s.request('POST', `/projects/${pid}/members`, { token: owner.token, json: { user_id: dev.id, access_level: 30 } });
  expect(m.status).toBe(201);
});

afterAll(async () => {
  await s?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('an empty project', () => {
  it('refuses a Developer\'s first push with GitLab\'s message, takes the owner\'s, and protects the new default branch', async () => {
    const src = join(work, 'src');
    await git(work, 'init', '-q', '-b', 'main', src);
    await commitFile(src, 'README.md');
    await git(src, 'branch', 'feature');
    const refused = await gitFails(src, 'push', remote(dev.token, 'pushowner/guarded'), 'main');
    expect(refused).toContain('A default branch (e.g. main) does not yet exist for pushowner/guarded');
    expect(refused).toContain('Ask a project Owner or Maintainer to create a default branch:');
    expect(refused).toContain('/pushowner/guarded/-/project_members');
    expect(await branchTip('main')).toBeNull();

    await git(src, 'push', '-q', remote(owner.token, 'pushowner/guarded'), 'main', 'feature');
    const rules = await s.request('GET', `/projects/${pid}/protected_branches`, { token: owner.token });
    expect(rules.body.map((r: { name: string }) => r.name)).toEqual(['main']);
  });
});

describe('pushes to protected branches', () => {
  it('refuses a Developer\'s push to main and takes their push to an unprotected branch', async () => {
    const dir = await cloneAs(dev, 'dev');
    const tip = await branchTip('main');
    await commitFile(dir, 'dev.txt');
    const refused = await gitFails(dir, 'push', 'origin', 'main');
    expect(refused).toContain('GitLab: You are not allowed to push code to protected branches on this project.');
    expect(refused).toContain('pre-receive hook declined');
    expect(await branchTip('main')).toBe(tip);
    await git(dir, 'push', '-q', 'origin', 'main:feature');
    expect(await branchTip('feature')).toBe((await git(dir, 'rev-parse', 'HEAD')).trim());
  });

  it('refuses the whole push when one of its refs is refused', async () => {
    const dir = await cloneAs(dev, 'dev-atomic');
    await commitFile(dir, 'two.txt');
    const mainTip = await branchTip('main');
    await gitFails(dir, 'push', 'origin', 'HEAD:main', 'HEAD:other');
    expect(await branchTip('main')).toBe(mainTip);
    expect(await branchTip('other')).toBeNull();
  });

  it('refuses a force push, even a Maintainer\'s, until the rule allows it', async () => {
    const dir = await cloneAs(owner, 'owner');
    const tip = (await git(dir, 'rev-parse', 'HEAD')).trim();
    await commitFile(dir, 'one.txt');
    await git(dir, 'push', '-q', 'origin', 'main');
    await git(dir, 'reset', '-q', '--hard', tip);
    await commitFile(dir, 'rewritten.txt');
    const refused = await gitFails(dir, 'push', '-f', 'origin', 'main');
    expect(refused).toContain('GitLab: You are not allowed to force push code to a protected branch on this project.');
    const patched = await s.request('PATCH', `/projects/${pid}/protected_branches/main`, { token: owner.token, json: { allow_force_push: true } });
    expect(patched.status).toBe(200);
    await git(dir, 'push', '-q', '-f', 'origin', 'main');
    expect(await branchTip('main')).toBe((await git(dir, 'rev-parse', 'HEAD')).trim());
  });

  it('never deletes the default branch or a protected branch by push', async () => {
    const dir = await cloneAs(owner, 'owner-delete');
    expect(await gitFails(dir, 'push', 'origin', ':main')).toContain('GitLab: The default branch of a project cannot be deleted.');
    const rule = await s.request('POST', `/projects/${pid}/protected_branches`, { token: owner.token, json: { name: 'feat*', push_access_level: 30 } });
    expect(rule.status).toBe(201);
    expect(await gitFails(dir, 'push', 'origin', ':feature')).toContain('GitLab: You can only delete protected branches using the web interface.');
    const devDir = await cloneAs(dev, 'dev-delete');
    expect(await gitFails(devDir, 'push', 'origin', ':feature')).toContain(
      'GitLab: You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.',
    );
    expect(await branchTip('feature')).not.toBeNull();
    // Developers may push to feat* (push level 30).
    await git(devDir, 'fetch', '-q', 'origin');
    await git(devDir, 'checkout', '-q', '-b', 'feature', 'origin/feature');
    await commitFile(devDir, 'feature.txt');
    await git(devDir, 'push', '-q', 'origin', 'feature');
  });

  it('refuses a protected branch created by push to someone who may only merge into it', async () => {
    const rule = await s.request('POST', `/projects/${pid}/protected_branches`, { token: owner.token, json: { name: 'stable-*', push_access_level: 40, merge_access_level: 30 } });
    expect(rule.status).toBe(201);
    const dir = await cloneAs(dev, 'dev-create');
    expect(await gitFails(dir, 'push', 'origin', 'main:stable-1')).toContain('GitLab: You can only create protected branches using the web interface and API.');
    await commitFile(dir, 'unseen.txt');
    expect(await gitFails(dir, 'push', 'origin', 'HEAD:stable-2')).toContain('GitLab: You can only use an existing protected branch ref as the basis of a new protected branch.');
    const none = await s.request('POST', `/projects/${pid}/protected_branches`, { token: owner.token, json: { name: 'locked', push_access_level: 0, merge_access_level: 40 } });
    expect(none.status).toBe(201);
    expect(await gitFails(dir, 'push', 'origin', 'main:locked')).toContain('GitLab: You are not allowed to create protected branches on this project.');
  });
});

/** A raw receive-pack request of ref updates without a pack (deletions need none). */
async function rawPush(token: string, updates: string[]): Promise<string> {
  const pkt = (line: string) => (Buffer.byteLength(line) + 4).toString(16).padStart(4, '0') + line;
  const lines = updates.map((u, i) => pkt(i === 0 ? `${u}\0report-status\n` : `${u}\n`)).join('');
  const res = await fetch(`${s.url}/pushowner/guarded.git/git-receive-pack`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-git-receive-pack-request', Authorization: `Basic ${Buffer.from(`oauth2:${token}`).toString('base64')}` },
    body: `${lines}0000`,
  });
  return res.text();
}

describe('pushes that go around the git client', () => {
  it('treats 0 -> 0 as a deletion: a protected branch is not deleted', async () => {
    const rule = await s.request('POST', `/projects/${pid}/protected_branches`, { token: owner.token, json: { name: 'keep-me', push_access_level: 30 } });
    expect(rule.status).toBe(201);
    expect((await s.request('POST', `/projects/${pid}/repository/branches`, { token: owner.token, json: { branch: 'keep-me', ref: 'main' } })).status).toBe(201);
    const zero = '0'.repeat(40);
    const answer = await rawPush(dev.token, [`${zero} ${zero} refs/heads/keep-me`]);
    expect(answer).toContain('pre-receive hook declined');
    expect(await branchTip('keep-me')).not.toBeNull();
  });

  it('refuses updates of server-written refs (merge request and pipeline refs)', async () => {
    const dir = await cloneAs(owner, 'owner-hidden');
    const refused = await gitFails(dir, 'push', 'origin', 'HEAD:refs/merge-requests/1/head');
    expect(refused).toContain('deny updating a hidden ref');
  });

  it('takes a project with many long rules (the policy is not squeezed into the environment)', async () => {
    const now = new Date().toISOString();
    const rows = Array.from({ length: 700 }, (_, i) => ({ project_id: pid, kind: 'branch' as const, name: `${'long-rule-'.repeat(24)}${i}`, created_at: now, updated_at: now }));
    await s.app.lw.db.insertInto('protected_refs').values(rows).execute();
    await s.settle();
    // Written around the rule services: tell the rule cache, as they do.
    rulesChanged();
    const dir = await cloneAs(dev, 'dev-many');
    await commitFile(dir, 'many.txt');
    await git(dir, 'push', '-q', 'origin', 'HEAD:many-rules');
    expect(await branchTip('many-rules')).toBe((await git(dir, 'rev-parse', 'HEAD')).trim());
    await s.app.lw.db.deleteFrom('protected_refs').where('name', 'like', 'long-rule-%').execute();
    await s.settle();
    rulesChanged();
  });

  it('puts the hook back when its x bit is gone, so a push is never taken unchecked', async () => {
    chmodSync(join(s.dataDir, 'git-hooks', 'pre-receive'), 0o644);
    const dir = await cloneAs(dev, 'dev-nohook');
    await commitFile(dir, 'sneaky.txt');
    expect(await gitFails(dir, 'push', 'origin', 'main')).toContain('GitLab: You are not allowed to push code to protected branches on this project.');
  });
});

describe('names GitLab refuses on push', () => {
  it('refuses branch and tag names that read as object ids, options or full refs', async () => {
    const dir = await cloneAs(owner, 'owner-names');
    const sha = (await git(dir, 'rev-parse', 'HEAD')).trim();
    expect(await gitFails(dir, 'push', 'origin', `HEAD:refs/heads/${sha}`)).toContain('GitLab: You cannot create a branch with a SHA-1 or SHA-256 branch name.');
    expect(await gitFails(dir, 'push', 'origin', 'HEAD:refs/heads/-wrong')).toContain('GitLab: You cannot create a branch with an invalid name.');
    expect(await gitFails(dir, 'push', 'origin', 'HEAD:refs/heads/refs/heads/x')).toContain('GitLab: You cannot create a branch with an invalid name.');
    expect(await gitFails(dir, 'push', 'origin', 'HEAD:refs/tags/main')).toContain('GitLab: You cannot use default branch name to create a tag');
    expect(await gitFails(dir, 'push', 'origin', `HEAD:refs/tags/${sha}-x`)).toContain('GitLab: You cannot create a tag with a SHA-1 or SHA-256 tag name.');
    expect(await gitFails(dir, 'push', 'origin', 'HEAD:refs/tags/refs/tags/x')).toContain('GitLab: You cannot create a tag with a prohibited pattern.');
  });
});

describe('pushes of protected tags', () => {
  it('takes a Maintainer\'s new tag, refuses a Developer\'s, and never moves or deletes one by push', async () => {
    const rule = await s.request('POST', `/projects/${pid}/protected_tags`, { token: owner.token, json: { name: 'v*' } });
    expect(rule.status).toBe(201);
    const devDir = await cloneAs(dev, 'dev-tags');
    await git(devDir, 'tag', 'v1');
    expect(await gitFails(devDir, 'push', 'origin', 'v1')).toContain('GitLab: You are not allowed to create this tag as it is protected.');
    await git(devDir, 'tag', 'build-1');
    await git(devDir, 'push', '-q', 'origin', 'build-1');

    const dir = await cloneAs(owner, 'owner-tags');
    await git(dir, 'tag', 'v1');
    await git(dir, 'push', '-q', 'origin', 'v1');
    await commitFile(dir, 'later.txt');
    await git(dir, 'tag', '-f', 'v1');
    expect(await gitFails(dir, 'push', '-f', 'origin', 'v1')).toContain('GitLab: Protected tags cannot be updated.');
    expect(await gitFails(dir, 'push', 'origin', ':refs/tags/v1')).toContain('GitLab: You can only delete protected tags using the web interface.');
    expect((await s.request('GET', `/projects/${pid}/repository/tags/v1`, { token: owner.token })).body.protected).toBe(true);
  });
});
