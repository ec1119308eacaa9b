import { afterAll, describe, expect, it } from 'vitest';
import { parseDiffTree } from '../../src/git/diff.js';
import { alice, cleanupTempDirs, commit, newRepo } from './helpers.js';

afterAll(cleanupTempDirs);

const longText = Array.from({ length: 40 }, (_, i) => `line ${i} of a file that is long enough to be recognised as a rename`).join('\n') + '\n';

async function setup() {
  const ctx = await newRepo();
  const { repo } = ctx;
  const base = await repo.commitFiles({
    branch: 'main', startSha: null, expectedOldSha: null, message: 'base', author: alice,
    actions: [
      { action: 'create', file_path: 'old-name.txt', content: Buffer.from(longText) },
      { action: 'create', file_path: 'edit.txt', content: Buffer.from('a\nb\nc\n') },
      { action: 'create', file_path: 'gone.txt', content: Buffer.from('bye\n') },
      { action: 'create', file_path: 'image.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]) },
      { action: 'create', file_path: 'script.sh', content: Buffer.from('echo\n') },
      { action: 'create', file_path: 'name with spaces "quoted".txt', content: Buffer.from('x\n') },
    ],
  });
  await repo.createBranch('topic', base);
  const m1 = await commit(ctx.repo, 'main', { 'main-only.txt': 'main\n' }, 'main moves on');
  const t1 = await repo.commitFiles({
    branch: 'topic', startSha: base, expectedOldSha: base, message: 'topic work', author: alice,
    actions: [
      { action: 'move', previous_path: 'old-name.txt', file_path: 'dir/new-name.txt', content: Buffer.from(longText.replace('line 3 ', 'line three ')) },
      { action: 'update', file_path: 'edit.txt', content: Buffer.from('a\nB\nc\nd') },
      { action: 'delete', file_path: 'gone.txt' },
      { action: 'update', file_path: 'image.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 9, 9]) },
      { action: 'chmod', file_path: 'script.sh', execute_filemode: true },
      { action: 'create', file_path: 'new.txt', content: Buffer.from('new\n') },
      { action: 'update', file_path: 'name with spaces "quoted".txt', content: Buffer.from('y\n') },
    ],
  });
  const t2 = await commit(repo, 'topic', { 'new.txt': 'new\nmore\n' }, 'second topic commit');
  return { ...ctx, base, m1, t1, t2 };
}

describe('compare', () => {
  it('lists commits oldest first and GitLab-shaped diffs from the merge base', async () => {
    const { repo, base, t1, t2 } = await setup();
    const result = await repo.compare('main', 'topic');
    expect(result.base_sha).toBe(base);
    expect(result.head_sha).toBe(t2);
    expect(result.start_sha).toBe(await repo.branchSha('main'));
    expect(result.commits.map((c) => c.id)).toEqual([t1, t2]);
    expect(result.overflow).toBe(false);
    const byPath = new Map(result.diffs.map((d) => [d.new_path, d]));
    expect(result.diffs.some((d) => d.new_path === 'main-only.txt')).toBe(false);

    expect(byPath.get('dir/new-name.txt')).toMatchObject({ old_path: 'old-name.txt', renamed_file: true, new_file: false, deleted_file: false, a_mode: '100644', b_mode: '100644' });
    expect(byPath.get('dir/new-name.txt')!.diff).toMatch(/^@@ .* @@\n(.|\n)*-line 3 of(.|\n)*\+line three of/);

    const edit = byPath.get('edit.txt')!;
    expect(edit.diff).toBe('@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n\\ No newline at end of file\n');
    expect(edit).toMatchObject({ new_file: false, renamed_file: false, deleted_file: false, generated_file: null });

    expect(byPath.get('gone.txt')).toMatchObject({ deleted_file: true, a_mode: '100644', b_mode: '0', diff: '@@ -1 +0,0 @@\n-bye\n' });
    expect(byPath.get('new.txt')).toMatchObject({ new_file: true, old_path: 'new.txt', a_mode: '0', b_mode: '100644', diff: '@@ -0,0 +1,2 @@\n+new\n+more\n' });
    expect(byPath.get('image.png')).toMatchObject({ diff: '', binary: true });
    expect(byPath.get('script.sh')).toMatchObject({ a_mode: '100644', b_mode: '100755', diff: '' });
    expect(byPath.get('name with spaces "quoted".txt')!.diff).toBe('@@ -1 +1 @@\n-x\n+y\n');
    expect(result.diffs).toHaveLength(7);
  });

  it('straight compare diffs the two tips directly', async () => {
    const { repo, m1 } = await setup();
    const result = await repo.compare('main', 'topic', { straight: true });
    expect(result.base_sha).toBe(m1);
    expect(result.diffs.find((d) => d.new_path === 'main-only.txt')).toMatchObject({ deleted_file: true });
  });

  it('applies per-file, total and file-count limits', async () => {
    const { repo } = await setup();
    const perFile = await repo.compare('main', 'topic', { maxLinesPerFile: 8 });
    const renamed = perFile.diffs.find((d) => d.renamed_file)!;
    expect(renamed).toMatchObject({ too_large: true, diff: '' });
    expect(perFile.diffs.find((d) => d.new_path === 'edit.txt')!.too_large).toBeUndefined();
    expect(perFile.overflow).toBe(false);

    const bytes = await repo.compare('main', 'topic', { maxBytesPerFile: 30 });
    expect(bytes.diffs.find((d) => d.new_path === 'edit.txt')).toMatchObject({ too_large: true, diff: '' });

    const files = await repo.compare('main', 'topic', { maxFiles: 3 });
    expect(files.diffs).toHaveLength(3);
    expect(files.overflow).toBe(true);

    const total = await repo.compare('main', 'topic', { maxTotalLines: 8 });
    expect(total.overflow).toBe(true);
    const collapsed = total.diffs.filter((d) => d.collapsed);
    expect(collapsed.length).toBeGreaterThan(0);
    expect(collapsed.every((d) => d.diff === '')).toBe(true);
    expect(total.diffs).toHaveLength(7);
  });

  it('rawDiff returns the full patch', async () => {
    const { repo, base } = await setup();
    const raw = await repo.rawDiff(base, 'topic');
    expect(raw).toContain('diff --git a/edit.txt b/edit.txt');
    expect(raw).toContain('rename from old-name.txt');
    expect(raw).toContain('Binary files a/image.png and b/image.png differ');
    expect(raw).toContain('new file mode 100644');
    const { diffs } = await repo.diff(base, 'topic');
    expect(diffs).toHaveLength(7);
  });

  it('compare of identical refs is empty', async () => {
    const { repo } = await setup();
    const result = await repo.compare('main', 'main');
    expect(result.commits).toEqual([]);
    expect(result.diffs).toEqual([]);
  });
});

describe('parseDiffTree', () => {
  it('handles output without patches', () => {
    expect(parseDiffTree('')).toEqual([]);
  });
});
