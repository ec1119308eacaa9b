import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GitError, GitRepository, initBareRepository, removeRepository, ZERO_SHA } from '../../src/git/repository.js';
import { alice, bob, cleanupTempDirs, commit, git, makeTempDir, newRepo } from './helpers.js';

afterAll(cleanupTempDirs);

async function expectGitError(promise: Promise<unknown>, code: GitError['code']): Promise<void> {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(GitError);
  expect((err as GitError).code).toBe(code);
}

describe('initBareRepository', () => {
  it('creates a configured bare repository', async () => {
    const { path, repo } = await newRepo('trunk');
    expect(await repo.exists()).toBe(true);
    expect(await repo.isEmpty()).toBe(true);
    expect(await repo.headBranch()).toBe('trunk');
    expect(git(path, ['rev-parse', '--is-bare-repository'])).toBe('true');
    expect(git(path, ['config', 'http.receivepack'])).toBe('true');
    expect(git(path, ['config', 'receive.denyNonFastForwards'])).toBe('false');
    expect(git(path, ['config', 'uploadpack.allowAnySHA1InWant'])).toBe('true');
    expect(git(path, ['config', 'core.fsync'])).toBe('objects,reference,derived-metadata');
    expect(readFileSync(join(path, 'config'), 'utf8')).not.toMatch(/gc\.auto/);
    expect(await repo.listBranches()).toEqual([]);
  });

  it('refuses an existing repository and bad branch names', async () => {
    const { path } = await newRepo();
    await expectGitError(initBareRepository(path), 'exists');
    await expectGitError(initBareRepository(join(makeTempDir(), 'x.git'), { defaultBranch: 'a..b' }), 'invalid_ref');
  });

  it('reports missing repositories', async () => {
    const repo = new GitRepository(join(makeTempDir(), 'nope.git'));
    expect(await repo.exists()).toBe(false);
    await expectGitError(repo.isEmpty(), 'not_found');
  });
});

describe('refs and branches', () => {
  it('creates, lists, resolves and deletes branches', async () => {
    const { repo } = await newRepo();
    const c1 = await commit(repo, 'main', { 'README.md': '# hi\n' }, 'first');
    expect(await repo.isEmpty()).toBe(false);
    expect(await repo.createBranch('feature/b', 'main')).toBe(c1);
    await repo.createBranch('a-first', c1);
    await expectGitError(repo.createBranch('feature/b', c1), 'exists');
    await expectGitError(repo.createBranch('bad..name', c1), 'invalid_ref');
    await expectGitError(repo.createBranch('x', 'does-not-exist'), 'not_found');
    await expectGitError(repo.createBranch('main/sub', c1), 'exists');

    expect(await repo.listBranches()).toEqual([
      { name: 'a-first', sha: c1 },
      { name: 'feature/b', sha: c1 },
      { name: 'main', sha: c1 },
    ]);
    const withCommit = await repo.listBranches({ withCommit: true });
    expect(withCommit[2]!.commit).toEqual(await repo.getCommit(c1));

    expect(await repo.branchSha('feature/b')).toBe(c1);
    expect(await repo.branchSha('nope')).toBeNull();
    expect(await repo.resolveRef('feature/b')).toBe(c1);
    expect(await repo.resolveRef('refs/heads/main')).toBe(c1);
    expect(await repo.resolveRef(c1)).toBe(c1);
    expect(await repo.resolveRef(c1.slice(0, 10))).toBe(c1);
    expect(await repo.resolveRef('nope')).toBeNull();
    expect(await repo.resolveRef('--all')).toBeNull();

    const c2 = await commit(repo, 'feature/b', { 'b.txt': 'b' });
    await expectGitError(repo.deleteBranch('feature/b', c1), 'cas_failed');
    await repo.deleteBranch('feature/b', c2);
    await expectGitError(repo.deleteBranch('feature/b'), 'not_found');
    await repo.deleteBranch('a-first');
    expect((await repo.listBranches()).map((b) => b.name)).toEqual(['main']);
  });

  it('sets HEAD', async () => {
    const { repo } = await newRepo();
    await repo.setHead('develop');
    expect(await repo.headBranch()).toBe('develop');
    await expectGitError(repo.setHead('-x'), 'invalid_ref');
  });

  it('updateRef is a compare-and-swap', async () => {
    const { repo } = await newRepo();
    const c1 = await commit(repo, 'main', { a: '1' });
    const c2 = await commit(repo, 'main', { a: '2' });
    await repo.updateRef('refs/merge-requests/1/head', c1, null);
    await expectGitError(repo.updateRef('refs/merge-requests/1/head', c2, null), 'cas_failed');
    await expectGitError(repo.updateRef('refs/merge-requests/1/head', c2, c2), 'cas_failed');
    await expectGitError(repo.updateRef('refs/heads/missing', c2, c1), 'cas_failed');
    await repo.updateRef('refs/merge-requests/1/head', c2, c1);
    expect(await repo.resolveRef('refs/merge-requests/1/head')).toBe(c2);
    await expectGitError(repo.updateRef('refs/heads/x', '1234567890123456789012345678901234567890', null), 'not_found');
    await expectGitError(repo.updateRef('refs/heads/a..b', c1, null), 'invalid_ref');
    await repo.updateRef('refs/merge-requests/1/head', ZERO_SHA, c2);
    expect(await repo.resolveRef('refs/merge-requests/1/head')).toBeNull();
  });

  it('concurrent updateRef calls with the same old value: exactly one wins', async () => {
    const { repo } = await newRepo();
    const base = await commit(repo, 'main', { a: '1' });
    const others = await Promise.all([1, 2, 3, 4].map((i) => repo.createCommit({ tree: `${base}^{tree}`, parents: [base], message: `c${i}`, author: alice })));
    const results = await Promise.allSettled(others.map((sha) => repo.updateRef('refs/heads/main', sha, base)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as GitError).code).toBe('cas_failed');
  });

  it('lists tags', async () => {
    const { path, repo } = await newRepo();
    const c1 = await commit(repo, 'main', { a: '1' });
    git(path, ['tag', 'light', c1]);
    git(path, ['tag', '-a', 'v1.0', '-m', 'Release 1.0', c1]);
    const tags = await repo.listTags();
    expect(tags).toHaveLength(2);
    const committed = (await repo.getCommit(c1))!.committed_date;
    expect(tags[0]).toEqual({ name: 'light', sha: c1, target: c1, targetType: 'commit', annotated: false, message: null, createdAt: null, creatorDate: committed });
    expect(tags[1]).toMatchObject({ name: 'v1.0', target: c1, targetType: 'commit', annotated: true, message: 'Release 1.0\n' });
    expect(tags[1]!.sha).not.toBe(c1);
    expect(tags[1]!.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(tags[1]!.creatorDate).toBe(tags[1]!.createdAt);
    expect(await repo.resolveRef('v1.0')).toBe(c1);
    const refs = await repo.readRefs();
    expect(refs.get('refs/heads/main')).toBe(c1);
    expect(refs.get('refs/tags/light')).toBe(c1);
  });
});

describe('commits, trees and blobs', () => {
  it('reads commits with GitLab fields', async () => {
    const { repo } = await newRepo();
    const c1 = await repo.commitFiles({
      branch: 'main', startSha: null, expectedOldSha: null, message: 'Add readme\n\nLonger body\n', author: alice, committer: bob,
      actions: [{ action: 'create', file_path: 'README.md', content: Buffer.from('hello\n') }],
    });
    const c = await repo.getCommit(c1);
    expect(c).toEqual({
      id: c1, short_id: c1.slice(0, 8), title: 'Add readme', message: 'Add readme\n\nLonger body\n',
      author_name: 'Alice Example', author_email: 'alice@example.com', authored_date: '2024-01-02T03:04:05+01:00',
      committer_name: 'Bob Example', committer_email: 'bob@example.com', committed_date: '2024-02-03T04:05:06-05:00',
      parent_ids: [],
    });
    expect(await repo.getCommit('main')).toEqual(c);
    expect(await repo.getCommit('0000000000000000000000000000000000000001')).toBeNull();
    expect(await repo.getCommit('--help')).toBeNull();
  });

  it('lists history with paths, paging, dates and first-parent', async () => {
    const { repo } = await newRepo();
    const shas: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const date = `2024-03-0${i + 1}T10:00:00+00:00`;
      shas.push(await commit(repo, 'main', { [i % 2 ? 'odd.txt' : 'even.txt']: String(i) }, `commit ${i}`, { ...alice, date }));
    }
    const all = await repo.listCommits({ ref: 'main', offset: 0, limit: 100 });
    expect(all.map((c) => c.title)).toEqual(['commit 4', 'commit 3', 'commit 2', 'commit 1', 'commit 0']);
    expect((await repo.listCommits({ ref: 'main', offset: 1, limit: 2 })).map((c) => c.id)).toEqual([shas[3], shas[2]]);
    expect((await repo.listCommits({ ref: 'main', path: 'odd.txt', offset: 0, limit: 10 })).map((c) => c.id)).toEqual([shas[3], shas[1]]);
    expect((await repo.listCommits({ ref: 'main', since: '2024-03-03T00:00:00Z', until: new Date('2024-03-04T12:00:00Z'), offset: 0, limit: 10 })).map((c) => c.id))
      .toEqual([shas[3], shas[2]]);
    expect(await repo.listCommits({ ref: 'main', firstParent: true, offset: 0, limit: 10 })).toHaveLength(5);
    await expectGitError(repo.listCommits({ ref: 'nope', offset: 0, limit: 10 }), 'not_found');
    expect(await repo.countCommits('main')).toBe(5);
    expect(await repo.countCommits('main', { path: 'even.txt' })).toBe(3);
    expect((await repo.lastCommitForPath('main', 'even.txt'))?.id).toBe(shas[4]);
    expect(await repo.lastCommitForPath('main', 'missing.txt')).toBeNull();
    expect(await repo.commitsBetween(shas[1]!, 'main')).toEqual(shas.slice(2));
    expect((await repo.getCommits([shas[2]!, 'main', shas[2]!])).map((c) => c.id)).toEqual([shas[2], shas[4], shas[2]]);
  });

  it('reads blobs and trees', async () => {
    const { repo } = await newRepo();
    const sha = await repo.commitFiles({
      branch: 'main', startSha: null, expectedOldSha: null, message: 'files', author: alice,
      actions: [
        { action: 'create', file_path: 'README.md', content: Buffer.from('readme') },
        { action: 'create', file_path: 'bin/run.sh', content: Buffer.from('#!/bin/sh\n'), execute_filemode: true },
        { action: 'create', file_path: 'src/lib/a.ts', content: Buffer.from('export {}\n') },
        { action: 'create', file_path: 'data.bin', content: Buffer.from([0, 1, 2, 255]) },
      ],
    });
    const blob = await repo.readBlob('main', 'bin/run.sh');
    expect(blob).toMatchObject({ size: 10, mode: '100755' });
    expect(blob!.content.toString()).toBe('#!/bin/sh\n');
    expect((await repo.readBlob(sha, 'data.bin'))!.content).toEqual(Buffer.from([0, 1, 2, 255]));
    expect((await repo.readBlob('main', 'README.md'))!.mode).toBe('100644');
    expect(await repo.readBlob('main', 'src')).toBeNull();
    expect(await repo.readBlob('main', 'nope')).toBeNull();
    expect(await repo.readBlob('nope', 'README.md')).toBeNull();

    const top = await repo.listTree({ ref: 'main' });
    expect(top.map((e) => [e.name, e.type, e.mode, e.path])).toEqual([
      ['README.md', 'blob', '100644', 'README.md'],
      ['bin', 'tree', '040000', 'bin'],
      ['data.bin', 'blob', '100644', 'data.bin'],
      ['src', 'tree', '040000', 'src'],
    ]);
    expect((await repo.listTree({ ref: 'main', path: 'src' })).map((e) => e.path)).toEqual(['src/lib']);
    expect((await repo.listTree({ ref: 'main', path: 'src', recursive: true })).map((e) => e.path)).toEqual(['src/lib', 'src/lib/a.ts']);
    expect((await repo.listTree({ ref: 'main', recursive: true })).length).toBe(7);
    await expectGitError(repo.listTree({ ref: 'main', path: 'nope' }), 'not_found');
    await expectGitError(repo.listTree({ ref: 'main', path: '../etc' }), 'invalid_path');
  });
});

describe('repository files', () => {
  it('measures and removes a repository', async () => {
    const { path, repo } = await newRepo();
    const before = await repo.repositorySize();
    await commit(repo, 'main', { big: 'x'.repeat(100_000) + Math.random() });
    expect(before).toBeGreaterThan(0);
    expect(await repo.repositorySize()).toBeGreaterThan(before);
    await removeRepository(path);
    expect(existsSync(path)).toBe(false);
    await removeRepository(path); // missing: fine
  });

  it('refuses to remove something that is not a repository', async () => {
    const dir = makeTempDir();
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src', 'file'), 'keep me');
    await expectGitError(removeRepository(join(dir, 'src')), 'invalid_path');
    await expectGitError(removeRepository('relative/path.git'), 'invalid_path');
    await expectGitError(removeRepository('/'), 'invalid_path');
    expect(existsSync(join(dir, 'src', 'file'))).toBe(true);
  });
});
