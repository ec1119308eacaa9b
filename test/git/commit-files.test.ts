import { afterAll, describe, expect, it } from 'vitest';
import { GitError, type FileAction } from '../../src/git/repository.js';
import { alice, bob, cleanupTempDirs, git, newRepo } from './helpers.js';

afterAll(cleanupTempDirs);

const text = (s: string): Buffer => Buffer.from(s, 'utf8');

async function codeOf(promise: Promise<unknown>): Promise<string | null> {
  return promise.then(() => null, (e: unknown) => (e instanceof GitError ? e.code : `not a GitError: ${String(e)}`));
}

describe('commitFiles', () => {
  it('creates the branch in an empty repository', async () => {
    const { path, repo } = await newRepo();
    const sha = await repo.commitFiles({
      branch: 'main', startSha: null, expectedOldSha: null, message: 'Initial commit', author: alice,
      actions: [
        { action: 'create', file_path: 'README.md', content: text('# Project\n') },
        { action: 'create', file_path: 'docs/a/b/deep.md', content: text('deep') },
        { action: 'create', file_path: 'empty.txt' },
      ],
    });
    expect(await repo.branchSha('main')).toBe(sha);
    expect(git(path, ['ls-tree', '-r', '--name-only', 'main']).split('\n')).toEqual(['README.md', 'docs/a/b/deep.md', 'empty.txt']);
    expect(git(path, ['log', '--format=%an <%ae> %s', 'main'])).toBe('Alice Example <alice@example.com> Initial commit');
    expect((await repo.readBlob('main', 'empty.txt'))!.size).toBe(0);
    git(path, ['fsck', '--strict']);
  });

  it('applies update, delete, move and chmod with one parent', async () => {
    const { path, repo } = await newRepo();
    const c1 = await repo.commitFiles({
      branch: 'main', startSha: null, expectedOldSha: null, message: 'one', author: alice,
      actions: [
        { action: 'create', file_path: 'a.txt', content: text('a') },
        { action: 'create', file_path: 'dir/b.txt', content: text('b') },
        { action: 'create', file_path: 'dir/c.txt', content: text('c') },
        { action: 'create', file_path: 'run.sh', content: text('echo') },
        { action: 'create', file_path: 'keep.txt', content: text('keep') },
      ],
    });
    const c2 = await repo.commitFiles({
      branch: 'main', startSha: c1, expectedOldSha: c1, message: 'two', author: alice, committer: bob,
      actions: [
        { action: 'update', file_path: 'a.txt', content: text('A') },
        { action: 'delete', file_path: 'dir/b.txt' },
        { action: 'move', previous_path: 'dir/c.txt', file_path: 'moved/c.txt' },
        { action: 'move', previous_path: 'keep.txt', file_path: 'kept.txt', content: text('changed while moving') },
        { action: 'chmod', file_path: 'run.sh', execute_filemode: true },
      ],
    });
    const commit = await repo.getCommit(c2);
    expect(commit!.parent_ids).toEqual([c1]);
    expect(commit!.committer_name).toBe('Bob Example');
    expect(git(path, ['ls-tree', '-r', 'main']).split('\n').map((l) => l.replace(/ [0-9a-f]{40}/, ''))).toEqual([
      '100644 blob\ta.txt',
      '100644 blob\tkept.txt',
      '100644 blob\tmoved/c.txt',
      '100755 blob\trun.sh',
    ]);
    expect((await repo.readBlob('main', 'a.txt'))!.content.toString()).toBe('A');
    expect((await repo.readBlob('main', 'moved/c.txt'))!.content.toString()).toBe('c');
    expect((await repo.readBlob('main', 'kept.txt'))!.content.toString()).toBe('changed while moving');
    git(path, ['fsck', '--strict']);
  });

  it('later actions see earlier ones and many blobs are hashed at once', async () => {
    const { repo } = await newRepo();
    const actions: FileAction[] = [];
    for (let i = 0; i < 12; i += 1) actions.push({ action: 'create', file_path: `many/f${i}.txt`, content: text(`file ${i}`) });
    actions.push({ action: 'update', file_path: 'many/f0.txt', content: text('updated') });
    actions.push({ action: 'delete', file_path: 'many/f1.txt' });
    await repo.commitFiles({ branch: 'main', startSha: null, expectedOldSha: null, message: 'many', author: alice, actions });
    const tree = await repo.listTree({ ref: 'main', path: 'many' });
    expect(tree).toHaveLength(11);
    expect((await repo.readBlob('main', 'many/f0.txt'))!.content.toString()).toBe('updated');
    expect((await repo.readBlob('main', 'many/f11.txt'))!.content.toString()).toBe('file 11');
  });

  it('creates a new branch from an existing commit', async () => {
    const { repo } = await newRepo();
    const c1 = await repo.commitFiles({ branch: 'main', startSha: null, expectedOldSha: null, message: 'one', author: alice, actions: [{ action: 'create', file_path: 'a', content: text('1') }] });
    const c2 = await repo.commitFiles({ branch: 'topic', startSha: 'main', expectedOldSha: null, message: 'two', author: alice, actions: [{ action: 'create', file_path: 'b', content: text('2') }] });
    expect((await repo.getCommit(c2))!.parent_ids).toEqual([c1]);
    expect(await repo.branchSha('main')).toBe(c1);
    expect(await repo.branchSha('topic')).toBe(c2);
  });

  it('reports errors with codes', async () => {
    const { repo } = await newRepo();
    const c1 = await repo.commitFiles({
      branch: 'main', startSha: null, expectedOldSha: null, message: 'one', author: alice,
      actions: [{ action: 'create', file_path: 'a.txt', content: text('a') }, { action: 'create', file_path: 'dir/x.txt', content: text('x') }],
    });
    const base = { branch: 'main', startSha: c1, expectedOldSha: c1, message: 'm', author: alice };
    const run = (actions: FileAction[], extra: Record<string, unknown> = {}) => codeOf(repo.commitFiles({ ...base, ...extra, actions }));
    expect(await run([{ action: 'create', file_path: 'a.txt', content: text('again') }])).toBe('exists');
    expect(await run([{ action: 'create', file_path: 'dir', content: text('file over dir') }])).toBe('exists');
    expect(await run([{ action: 'create', file_path: 'a.txt/sub', content: text('under a file') }])).toBe('exists');
    expect(await run([{ action: 'move', previous_path: 'a.txt', file_path: 'dir/x.txt' }])).toBe('exists');
    expect(await run([{ action: 'update', file_path: 'nope.txt', content: text('x') }])).toBe('not_found');
    expect(await run([{ action: 'delete', file_path: 'nope.txt' }])).toBe('not_found');
    expect(await run([{ action: 'delete', file_path: 'dir' }])).toBe('not_found');
    expect(await run([{ action: 'move', previous_path: 'nope.txt', file_path: 'b.txt' }])).toBe('not_found');
    expect(await run([{ action: 'chmod', file_path: 'nope.sh', execute_filemode: true }])).toBe('not_found');
    for (const bad of ['/abs', '../up', 'a/../b', 'a//b', 'a/', '', '.git/config', 'x/.GIT/y', './a', 'nul\0x']) {
      expect(await run([{ action: 'create', file_path: bad, content: text('x') }]), bad).toBe('invalid_path');
    }
    expect(await run([{ action: 'create', file_path: 'n.txt', content: text('x') }], { branch: 'bad..branch' })).toBe('invalid_ref');
    expect(await run([{ action: 'create', file_path: 'n.txt', content: text('x') }], { startSha: 'nope' })).toBe('not_found');
    expect(await run([{ action: 'create', file_path: 'n.txt', content: text('x') }], { expectedOldSha: null })).toBe('cas_failed');
    expect(await repo.branchSha('main')).toBe(c1);
  });

  it('CAS race: two concurrent commits on the same branch, exactly one wins', async () => {
    const { path, repo } = await newRepo();
    const c1 = await repo.commitFiles({ branch: 'main', startSha: null, expectedOldSha: null, message: 'base', author: alice, actions: [{ action: 'create', file_path: 'a', content: text('0') }] });
    for (let round = 0; round < 5; round += 1) {
      const head = (await repo.branchSha('main'))!;
      const attempts = [1, 2].map((n) => repo.commitFiles({
        branch: 'main', startSha: head, expectedOldSha: head, message: `writer ${n}`, author: alice,
        actions: [{ action: 'update', file_path: 'a', content: text(`round ${round} writer ${n}`) }],
      }));
      const results = await Promise.allSettled(attempts);
      const won = results.filter((r): r is PromiseFulfilledResult<string> => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0]!.reason as GitError).code).toBe('cas_failed');
      expect(await repo.branchSha('main')).toBe(won[0]!.value);
    }
    expect(await repo.countCommits('main')).toBe(6);
    expect(c1).toBeTruthy();
    git(path, ['fsck', '--strict']);
  });

  it('two racing creations of a new branch: one wins', async () => {
    const { repo } = await newRepo();
    const results = await Promise.allSettled([1, 2].map((n) => repo.commitFiles({
      branch: 'main', startSha: null, expectedOldSha: null, message: `init ${n}`, author: alice,
      actions: [{ action: 'create', file_path: 'README.md', content: text(`${n}`) }],
    })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect((rejected.reason as GitError).code).toBe('cas_failed');
  });
});
