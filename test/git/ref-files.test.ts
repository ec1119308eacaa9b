// The file-backend branch reader agrees with git for loose, packed, missing and nested branches.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBranchShaFromFiles } from '../../src/git/ref-files.js';
import { GitRepository, initBareRepository } from '../../src/git/repository.js';

const dir = mkdtempSync(join(tmpdir(), 'lw-ref-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function git(args: string[], gitDir: string): string {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8' }).trim();
}

describe('readBranchShaFromFiles', () => {
  it('matches git rev-parse for loose, packed, deleted and missing branches', async () => {
    const path = join(dir, 'r.git');
    await initBareRepository(path);
    const repo = new GitRepository(path);
    const author = { name: 'A', email: 'a@example.com' };
    const c1 = await repo.commitFiles({ branch: 'main', startSha: null, expectedOldSha: null, message: 'one', author, actions: [{ action: 'create', file_path: 'a', content: Buffer.from('1') }] });
    await repo.createBranch('feature/x', c1);
    expect(await readBranchShaFromFiles(path, 'main')).toBe(c1);
    expect(await readBranchShaFromFiles(path, 'feature/x')).toBe(c1);
    expect(await readBranchShaFromFiles(path, 'feature')).toBeNull();
    expect(await readBranchShaFromFiles(path, 'nope')).toBeNull();
    // A path through a loose ref file (ENOTDIR): no such branch.
    expect(await readBranchShaFromFiles(path, 'main/sub')).toBeNull();
    // Packed: the loose files go away and packed-refs answers.
    git(['pack-refs', '--all'], path);
    expect(await readBranchShaFromFiles(path, 'feature/x')).toBe(c1);
    const c2 = await repo.commitFiles({ branch: 'main', startSha: c1, expectedOldSha: c1, message: 'two', author, actions: [{ action: 'create', file_path: 'b', content: Buffer.from('2') }] });
    // A loose ref written after packing wins over the packed value, as in git.
    expect(await readBranchShaFromFiles(path, 'main')).toBe(c2);
    expect(await repo.branchSha('main')).toBe(git(['rev-parse', 'refs/heads/main'], path));
    await repo.deleteBranch('feature/x');
    expect(await readBranchShaFromFiles(path, 'feature/x')).toBeNull();
    expect(await repo.branchSha('feature/x')).toBeNull();
  });
});
