// The repository API through an independent client, @gitbeaker/rest: branches, files, commits,
// compare and tree as a real integration calls them, including by URL-encoded project path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gitlab } from '@gitbeaker/rest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let eve: { id: number; username: string; token: string };
let projectId: number;

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  eve = await s.createUser('eve');
  const api = new Gitlab({ host: s.url, token: alice.token });
  const p = await api.Projects.create({ name: 'Beaker Repo', visibility: 'private' });
  projectId = p.id;
});
afterAll(async () => {
  await s?.close();
});

/** gitbeaker's error carries the HTTP status on `cause.response`. */
async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (err) {
    return (err as { cause?: { response?: { status?: number } } }).cause?.response?.status ?? -1;
  }
  return 200;
}

describe('@gitbeaker/rest repository API', () => {
  it('creates, shows, edits and removes files', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const created = await api.RepositoryFiles.create(projectId, 'lib/hello.txt', 'main', 'hello\n', 'Add hello');
    expect(created).toEqual({ file_path: 'lib/hello.txt', branch: 'main' });
    const shown = await api.RepositoryFiles.show('alice/beaker-repo', 'lib/hello.txt', 'main');
    expect(Buffer.from(shown.content, 'base64').toString()).toBe('hello\n');
    expect(shown.file_name).toBe('hello.txt');
    const edited = await api.RepositoryFiles.edit(projectId, 'lib/hello.txt', 'main', 'hello world\n', 'Edit hello', { lastCommitId: shown.last_commit_id });
    expect(edited).toEqual({ file_path: 'lib/hello.txt', branch: 'main' });
    const raw = await api.RepositoryFiles.showRaw(projectId, 'lib/hello.txt', 'main');
    expect(raw).toBe('hello world\n');
    await api.RepositoryFiles.create(projectId, 'tmp.txt', 'main', 'x', 'Add tmp');
    await api.RepositoryFiles.remove(projectId, 'tmp.txt', 'main', 'Remove tmp');
    expect(await statusOf(api.RepositoryFiles.show(projectId, 'tmp.txt', 'main'))).toBe(404);
  });

  it('creates, lists and removes branches', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const b = await api.Branches.create(projectId, 'feature/x', 'main');
    expect(b.name).toBe('feature/x');
    expect(b.merged).toBe(true);
    const all = await api.Branches.all(projectId);
    expect(all.map((x) => x.name)).toEqual(['feature/x', 'main']);
    const main = await api.Branches.show(projectId, 'main');
    expect(main.default).toBe(true);
    await api.Branches.remove(projectId, 'feature/x');
    expect((await api.Branches.all(projectId)).map((x) => x.name)).toEqual(['main']);
    expect(await statusOf(api.Branches.create(projectId, 'bad..name', 'main'))).toBe(400);
  });

  it('creates commits, lists and shows them, compares and walks the tree', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const commit = await api.Commits.create(projectId, 'topic', 'Topic commit', [
      { action: 'create', filePath: 'src/one.ts', content: 'one\n' },
      { action: 'create', filePath: 'src/two.ts', content: Buffer.from('two\n').toString('base64'), encoding: 'base64' },
      { action: 'update', filePath: 'lib/hello.txt', content: 'changed\n' },
    ], { startBranch: 'main' });
    expect(commit.title).toBe('Topic commit');
    expect(commit.committer_name).toBe('alice');
    const shown = await api.Commits.show(projectId, commit.id);
    expect(shown.id).toBe(commit.id);
    expect((shown as any).stats).toEqual({ additions: 3, deletions: 1, total: 4 });
    const history = await api.Commits.all(projectId, { refName: 'topic' });
    expect(history.map((c) => c.title)).toEqual(['Topic commit', 'Remove tmp', 'Add tmp', 'Edit hello', 'Add hello']);
    const paged = await api.Commits.all(projectId, { refName: 'topic', perPage: 2 });
    expect(paged.length).toBe(5);
    const cmp = await api.Repositories.compare(projectId, 'main', 'topic');
    expect((cmp.commits as any[]).map((c) => c.title)).toEqual(['Topic commit']);
    expect((cmp.diffs as any[]).map((d) => d.new_path).sort()).toEqual(['lib/hello.txt', 'src/one.ts', 'src/two.ts']);
    const tree = await api.Repositories.allRepositoryTrees(projectId, { ref: 'topic', recursive: true });
    expect(tree.map((e) => e.path)).toEqual(['lib', 'lib/hello.txt', 'src', 'src/one.ts', 'src/two.ts']);
    const keyset = await api.Repositories.allRepositoryTrees(projectId, { ref: 'topic', recursive: true, pagination: 'keyset', perPage: 2 });
    expect(keyset.map((e) => e.path)).toEqual(['lib', 'lib/hello.txt', 'src', 'src/one.ts', 'src/two.ts']);
  });

  it('creates, lists, shows and removes tags', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const t = await api.Tags.create(projectId, 'v1.0', 'main', { message: 'One' });
    expect(t.name).toBe('v1.0');
    expect(t.message).toBe('One');
    await api.Tags.create(projectId, 'v1.1', 'main');
    expect((await api.Tags.all(projectId, { orderBy: 'version', sort: 'desc' })).map((x) => x.name)).toEqual(['v1.1', 'v1.0']);
    const shown = await api.Tags.show(projectId, 'v1.1');
    expect(shown.message).toBeNull();
    expect((shown.commit as { id: string }).id).toBe((await api.Branches.show(projectId, 'main')).commit.id);
    await api.Tags.remove(projectId, 'v1.1');
    expect((await api.Tags.all(projectId)).map((x) => x.name)).toEqual(['v1.0']);
    expect(await statusOf(api.Tags.create(projectId, 'v1.0', 'main'))).toBe(400);
    expect(await statusOf(api.Tags.show(projectId, 'v9'))).toBe(404);
  });

  it('protects and unprotects branches and tags', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const rule = await api.ProtectedBranches.protect(projectId, 'release/*', { pushAccessLevel: 0, mergeAccessLevel: 30, allowForcePush: false });
    expect(rule.name).toBe('release/*');
    expect(rule.push_access_levels?.[0]?.access_level_description).toBe('No one');
    const edited = await api.ProtectedBranches.edit(projectId, 'release/*', { allowForcePush: true, allowedToPush: [{ accessLevel: 40 } as never] });
    expect(edited.allow_force_push).toBe(true);
    expect(edited.push_access_levels?.map((l) => l.access_level)).toEqual([0, 40]);
    expect((await api.ProtectedBranches.all(projectId, { search: 'release' })).map((r) => r.name)).toEqual(['release/*']);
    expect((await api.ProtectedBranches.show(projectId, 'release/*')).id).toBe(rule.id);
    await api.ProtectedBranches.unprotect(projectId, 'release/*');
    expect(await statusOf(api.ProtectedBranches.show(projectId, 'release/*'))).toBe(404);
    const tag = await api.ProtectedTags.protect(projectId, 'v*', { createAccessLevel: 40 });
    expect(tag.create_access_levels?.[0]?.access_level).toBe(40);
    expect((await api.ProtectedTags.all(projectId)).map((t) => t.name)).toEqual(['v*']);
    await api.ProtectedTags.unprotect(projectId, 'v*');
    expect(await api.ProtectedTags.all(projectId)).toEqual([]);
  });

  it('hides the private project from another user', async () => {
    const api = new Gitlab({ host: s.url, token: eve.token });
    expect(await statusOf(api.Branches.all(projectId))).toBe(404);
    expect(await statusOf(api.Tags.all(projectId))).toBe(404);
    expect(await statusOf(api.RepositoryFiles.show(projectId, 'lib/hello.txt', 'main'))).toBe(404);
    expect(await statusOf(api.Commits.create(projectId, 'main', 'x', [{ action: 'create', filePath: 'x', content: 'x' }]))).toBe(404);
  });
});
