import { afterAll, describe, expect, it } from 'vitest';
import { GitError } from '../../src/git/repository.js';
import { alice, bob, cleanupTempDirs, commit, git, newRepo } from './helpers.js';

afterAll(cleanupTempDirs);

const carol = { name: 'Carol Committer', email: 'carol@example.com', date: '2024-05-06T07:08:09+02:00' };

/** main: base → m1 ; feature: base → f1 → f2 (by bob) */
async function divergedRepo() {
  const ctx = await newRepo();
  const { repo } = ctx;
  const base = await commit(repo, 'main', { 'shared.txt': 'line1\nline2\nline3\n', 'conflict.txt': 'original\n' }, 'base');
  await repo.createBranch('feature', base);
  const m1 = await commit(repo, 'main', { 'main-only.txt': 'main\n', 'shared.txt': 'LINE1\nline2\nline3\n' }, 'main work');
  const f1 = await commit(repo, 'feature', { 'feature-a.txt': 'a\n' }, 'feature a', bob);
  const f2 = await commit(repo, 'feature', { 'shared.txt': 'line1\nline2\nLINE3\n' }, 'feature shared', { ...bob, date: '2024-04-01T00:00:00-07:00' });
  return { ...ctx, base, m1, f1, f2 };
}

describe('merge base and ancestry', () => {
  it('computes merge base, ancestry and divergence', async () => {
    const { repo, base, m1, f2 } = await divergedRepo();
    expect(await repo.mergeBase('main', 'feature')).toBe(base);
    expect(await repo.isAncestor(base, m1)).toBe(true);
    expect(await repo.isAncestor(m1, f2)).toBe(false);
    expect(await repo.countDivergence('feature', 'main')).toEqual({ ahead: 2, behind: 1 });
    expect(await repo.fastForwardPossible(base, 'feature')).toBe(true);
    expect(await repo.fastForwardPossible('main', 'feature')).toBe(false);
    await expect(repo.isAncestor('nope', 'main')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('returns null for unrelated histories', async () => {
    const { repo } = await newRepo();
    await commit(repo, 'main', { a: '1' });
    await repo.commitFiles({ branch: 'orphan', startSha: null, expectedOldSha: null, message: 'o', author: alice, actions: [{ action: 'create', file_path: 'b', content: Buffer.from('2') }] });
    expect(await repo.mergeBase('main', 'orphan')).toBeNull();
    await expect(repo.mergeTree('main', 'orphan')).rejects.toMatchObject({ code: 'conflict' });
  });
});

describe('mergeTree and merge commits', () => {
  it('merges cleanly and creates a merge commit with two parents', async () => {
    const { path, repo, m1, f2 } = await divergedRepo();
    const result = await repo.mergeTree('main', 'feature');
    expect(result.clean).toBe(true);
    const sha = await repo.createMergeCommit({ ours: 'main', theirs: 'feature', message: "Merge branch 'feature'", author: alice, committer: carol });
    const merge = await repo.getCommit(sha);
    expect(merge!.parent_ids).toEqual([m1, f2]);
    expect(merge!.committer_name).toBe('Carol Committer');
    expect(git(path, ['rev-parse', `${sha}^{tree}`])).toBe(result.tree);
    expect((await repo.readBlob(sha, 'shared.txt'))!.content.toString()).toBe('LINE1\nline2\nLINE3\n');
    expect(await repo.branchSha('main')).toBe(m1); // no ref moved
    await repo.updateRef('refs/heads/main', sha, m1);
    git(path, ['fsck', '--strict']);
  });

  it('detects conflicts and lists the conflicted files', async () => {
    const { repo } = await divergedRepo();
    await commit(repo, 'main', { 'conflict.txt': 'main version\n', 'other.txt': 'x' });
    await commit(repo, 'feature', { 'conflict.txt': 'feature version\n', 'other.txt': 'y' });
    const result = await repo.mergeTree('main', 'feature');
    expect(result.clean).toBe(false);
    if (!result.clean) expect(result.conflicts.sort()).toEqual(['conflict.txt', 'other.txt']);
    const err = await repo.createMergeCommit({ ours: 'main', theirs: 'feature', message: 'm', author: alice }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as GitError).code).toBe('conflict');
  });
});

describe('squash', () => {
  it('squashes the source changes into one commit on the target', async () => {
    const { path, repo, base, m1 } = await divergedRepo();
    const sha = await repo.squashCommit({ base, head: 'feature', onto: 'main', message: 'Squashed feature', author: bob, committer: carol });
    const c = await repo.getCommit(sha);
    expect(c!.parent_ids).toEqual([m1]);
    expect(c!.author_name).toBe('Bob Example');
    expect(git(path, ['ls-tree', '-r', '--name-only', sha]).split('\n')).toEqual(['conflict.txt', 'feature-a.txt', 'main-only.txt', 'shared.txt']);
    expect((await repo.readBlob(sha, 'shared.txt'))!.content.toString()).toBe('LINE1\nline2\nLINE3\n');
  });

  it('uses the head tree when the target did not move', async () => {
    const { path, repo, base, f2 } = await divergedRepo();
    const sha = await repo.squashCommit({ base, head: f2, onto: base, message: 'sq', author: bob });
    expect(git(path, ['rev-parse', `${sha}^{tree}`])).toBe(git(path, ['rev-parse', `${f2}^{tree}`]));
    expect((await repo.getCommit(sha))!.parent_ids).toEqual([base]);
  });

  it('reports squash conflicts', async () => {
    const { repo, base } = await divergedRepo();
    await commit(repo, 'main', { 'conflict.txt': 'main\n' });
    await commit(repo, 'feature', { 'conflict.txt': 'feature\n' });
    await expect(repo.squashCommit({ base, head: 'feature', onto: 'main', message: 'sq', author: bob })).rejects.toMatchObject({ code: 'conflict' });
  });
});

describe('rebaseOnto', () => {
  it('replays commits keeping authors, dates and messages', async () => {
    const { path, repo, base, m1, f1, f2 } = await divergedRepo();
    const commits = await repo.commitsBetween(base, 'feature');
    expect(commits).toEqual([f1, f2]);
    const tip = await repo.rebaseOnto({ commits, onto: 'main', committer: carol });
    const log = await repo.listCommits({ ref: tip, offset: 0, limit: 3 });
    expect(log.map((c) => c.title)).toEqual(['feature shared', 'feature a', 'main work']);
    expect(log[2]!.id).toBe(m1);
    for (const [i, orig] of [[0, f2], [1, f1]] as const) {
      const original = await repo.getCommit(orig);
      expect(log[i]!.author_name).toBe(original!.author_name);
      expect(log[i]!.author_email).toBe(original!.author_email);
      expect(log[i]!.authored_date).toBe(original!.authored_date);
      expect(log[i]!.message).toBe(original!.message);
      expect(log[i]!.committer_name).toBe('Carol Committer');
      expect(log[i]!.committed_date).toBe('2024-05-06T07:08:09+02:00');
    }
    expect(log[0]!.authored_date).toBe('2024-04-01T00:00:00-07:00');
    expect((await repo.readBlob(tip, 'shared.txt'))!.content.toString()).toBe('LINE1\nline2\nLINE3\n');
    expect(await repo.isAncestor(m1, tip)).toBe(true);
    git(path, ['fsck', '--strict']);
  });

  it('keeps commits that are already on top and drops ones already upstream', async () => {
    const { repo, base, f1, f2 } = await divergedRepo();
    expect(await repo.rebaseOnto({ commits: [f1, f2], onto: base, committer: carol })).toBe(f2);
    // The same change as f1 lands on main: replaying f1 becomes empty and is dropped.
    await commit(repo, 'main', { 'feature-a.txt': 'a\n' }, 'same as f1');
    const tip = await repo.rebaseOnto({ commits: [f1, f2], onto: 'main', committer: carol });
    const log = await repo.listCommits({ ref: tip, offset: 0, limit: 2 });
    expect(log.map((c) => c.title)).toEqual(['feature shared', 'same as f1']);
  });

  it('replays a root commit onto another history', async () => {
    const { repo } = await newRepo();
    const m = await commit(repo, 'main', { 'a.txt': 'a' });
    const root = await repo.commitFiles({ branch: 'orphan', startSha: null, expectedOldSha: null, message: 'root', author: bob, actions: [{ action: 'create', file_path: 'b.txt', content: Buffer.from('b') }] });
    const tip = await repo.rebaseOnto({ commits: [root], onto: m, committer: carol });
    expect((await repo.getCommit(tip))!.parent_ids).toEqual([m]);
    expect((await repo.listTree({ ref: tip })).map((e) => e.name)).toEqual(['a.txt', 'b.txt']);
  });

  it('throws conflict naming the commit', async () => {
    const { repo, base } = await divergedRepo();
    await commit(repo, 'main', { 'conflict.txt': 'main\n' });
    const f3 = await commit(repo, 'feature', { 'conflict.txt': 'feature\n' }, 'conflicting');
    const commits = await repo.commitsBetween(base, 'feature');
    const err = await repo.rebaseOnto({ commits, onto: 'main', committer: carol }).catch((e: unknown) => e);
    expect((err as GitError).code).toBe('conflict');
    expect((err as GitError).message).toContain(f3.slice(0, 8));
  });
});
