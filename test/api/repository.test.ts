// Repository API through plain HTTP: branches, files, commits, compare, tree; access rules for
// other users; bad input; and the compare-and-swap race on one branch.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let owner: { id: number; username: string; token: string };
let dev: { id: number; username: string; token: string };
let reporter: { id: number; username: string; token: string };
let outsider: { id: number; username: string; token: string };
let pid: number;
let publicId: number;

const enc = encodeURIComponent;

async function addMember(projectId: number, userId: number, level: number) {
  const r = await s.request('POST', `/projects/${projectId}/members`, { token: owner.token, json: { user_id: userId, access_level: level } });
  expect(r.status).toBe(201);
}

beforeAll(async () => {
  // A Developer writes the default branch here: the instance leaves default branches unprotected
  // (GitLab's default_branch_protection 0; test/api/protected-refs.test.ts covers protection).
  s = await startServer({ LABWRIGHT_DEFAULT_BRANCH_PROTECTION: '0' });
  owner = await s.createUser('owner1');
  dev = await s.createUser('dev1');
  reporter = await s.createUser('rep1');
  outsider = await s.createUser('out1');
  const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'repo-api', visibility: 'private' } });
  expect(p.status).toBe(201);
  pid = p.body.id;
  await addMember(pid, dev.id, 30);
  await addMember(pid, reporter.id, 20);
  const pub = await s.request('POST', '/projects', { token: owner.token, json: { name: 'open-repo', visibility: 'public', initialize_with_readme: true } });
  expect(pub.status).toBe(201);
  publicId = pub.body.id;
});

afterAll(async () => {
  await s?.close();
});

describe('files in an empty repository', () => {
  it('creating the first file creates the branch and sets default_branch', async () => {
    const r = await s.request('POST', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, {
      token: dev.token,
      json: { branch: 'trunk', content: 'hello\n', commit_message: 'First file' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ file_path: 'docs/intro.md', branch: 'trunk' });
    const p = await s.request('GET', `/projects/${pid}`, { token: owner.token });
    expect(p.body.default_branch).toBe('trunk');
    const b = await s.request('GET', `/projects/${pid}/repository/branches/trunk`, { token: dev.token });
    expect(b.status).toBe(200);
    expect(b.body.default).toBe(true);
    expect(b.body.commit.author_name).toBe('dev1');
    expect(b.body.commit.author_email).toBe('dev1@example.com');
    expect(b.body.commit.committer_email).toBe('dev1@example.com');
    expect(b.body.commit.title).toBe('First file');
  });

  it('reads the file as JSON, HEAD and raw', async () => {
    const r = await s.request('GET', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, { token: reporter.token, query: { ref: 'trunk' } });
    expect(r.status).toBe(200);
    expect(r.body.file_name).toBe('intro.md');
    expect(r.body.encoding).toBe('base64');
    expect(Buffer.from(r.body.content, 'base64').toString()).toBe('hello\n');
    expect(r.body.size).toBe(6);
    expect(r.body.last_commit_id).toBe(r.body.commit_id);
    expect(r.headers.get('x-gitlab-blob-id')).toBe(r.body.blob_id);
    const h = await s.request('HEAD', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, { token: reporter.token, query: { ref: 'trunk' } });
    expect(h.status).toBe(200);
    expect(h.text).toBe('');
    expect(h.headers.get('x-gitlab-size')).toBe('6');
    const raw = await s.request('GET', `/projects/${pid}/repository/files/${enc('docs/intro.md')}/raw`, { token: reporter.token });
    expect(raw.status).toBe(200);
    expect(raw.text).toBe('hello\n');
    expect(raw.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('serves files with non-ASCII and spaced names', async () => {
    const name = 'docs/日本 語.txt';
    const c = await s.request('POST', `/projects/${pid}/repository/files/${enc(name)}`, {
      token: dev.token, json: { branch: 'uni', start_branch: 'trunk', content: 'ünï\n', commit_message: 'Unicode' },
    });
    expect(c.status).toBe(201);
    const raw = await s.request('GET', `/projects/${pid}/repository/files/${enc(name)}/raw`, { token: dev.token, query: { ref: 'uni' } });
    expect(raw.status).toBe(200);
    expect(raw.text).toBe('ünï\n');
    const json = await s.request('GET', `/projects/${pid}/repository/files/${enc(name)}`, { token: dev.token, query: { ref: 'uni' } });
    expect(json.body.file_path).toBe(name);
    expect(decodeURIComponent(json.headers.get('x-gitlab-file-path')!)).toBe(name);
    const spaced = await s.request('HEAD', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, { token: dev.token, query: { ref: 'trunk' } });
    expect(spaced.headers.get('x-gitlab-file-path')).toBe('docs/intro.md');
    const del = await s.request('DELETE', `/projects/${pid}/repository/branches/uni`, { token: dev.token });
    expect(del.status).toBe(204);
  });

  it('answers GitLab errors for missing files, refs and parameters', async () => {
    const nf = await s.request('GET', `/projects/${pid}/repository/files/nope.txt`, { token: dev.token, query: { ref: 'trunk' } });
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ message: '404 File Not Found' });
    const nc = await s.request('GET', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, { token: dev.token, query: { ref: 'no-such-ref' } });
    expect(nc.status).toBe(404);
    expect(nc.body).toEqual({ message: '404 Commit Not Found' });
    const noRef = await s.request('GET', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, { token: dev.token });
    expect(noRef.status).toBe(400);
    expect(noRef.body).toEqual({ message: '400 Bad request - "ref" not given' });
    const missing = await s.request('POST', `/projects/${pid}/repository/files/a.txt`, { token: dev.token, json: { content: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: '400 Bad request - "branch" not given' });
    const badPath = await s.request('POST', `/projects/${pid}/repository/files/${enc('../etc/passwd')}`, {
      token: dev.token, json: { branch: 'trunk', content: 'x', commit_message: 'm' },
    });
    expect(badPath.status).toBe(400);
    expect(badPath.body).toEqual({ error: 'file_path should be a valid file path' });
    const badEnc = await s.request('POST', `/projects/${pid}/repository/files/a.txt`, {
      token: dev.token, json: { branch: 'trunk', content: 'x', commit_message: 'm', encoding: 'hex' },
    });
    expect(badEnc.status).toBe(400);
    expect(badEnc.body).toEqual({ error: 'encoding does not have a valid value' });
  });

  it('create on an existing file, update and delete of a missing file are 400s', async () => {
    const exists = await s.request('POST', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, {
      token: dev.token, json: { branch: 'trunk', content: 'again', commit_message: 'dup' },
    });
    expect(exists.status).toBe(400);
    expect(exists.body).toEqual({ message: 'A file with this name already exists' });
    const upd = await s.request('PUT', `/projects/${pid}/repository/files/ghost.txt`, {
      token: dev.token, json: { branch: 'trunk', content: 'x', commit_message: 'm' },
    });
    expect(upd.status).toBe(400);
    expect(upd.body).toEqual({ message: "A file with this name doesn't exist" });
    const del = await s.request('DELETE', `/projects/${pid}/repository/files/ghost.txt`, {
      token: dev.token, json: { branch: 'trunk', commit_message: 'm' },
    });
    expect(del.status).toBe(400);
    const noBranch = await s.request('POST', `/projects/${pid}/repository/files/new.txt`, {
      token: dev.token, json: { branch: 'missing-branch', content: 'x', commit_message: 'm' },
    });
    expect(noBranch.status).toBe(400);
    expect(noBranch.body).toEqual({ message: 'You can only create or edit files when you are on a branch' });
  });

  it('updates with base64 content, start_branch and a last_commit_id check', async () => {
    const f = await s.request('GET', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, { token: dev.token, query: { ref: 'trunk' } });
    const stale = 'f'.repeat(40);
    const bad = await s.request('PUT', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, {
      token: dev.token, json: { branch: 'trunk', content: 'x', commit_message: 'm', last_commit_id: stale },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('You are attempting to update a file that has changed since you started editing it.');
    const ok = await s.request('PUT', `/projects/${pid}/repository/files/${enc('docs/intro.md')}`, {
      token: dev.token,
      json: { branch: 'trunk', content: Buffer.from('bonjour\n').toString('base64'), encoding: 'base64', commit_message: 'Translate', last_commit_id: f.body.last_commit_id, author_name: 'Ghost Writer', author_email: 'ghost@example.com' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ file_path: 'docs/intro.md', branch: 'trunk' });
    const c = await s.request('GET', `/projects/${pid}/repository/commits/trunk`, { token: dev.token });
    expect(c.body.author_name).toBe('Ghost Writer');
    expect(c.body.committer_name).toBe('dev1');
    expect(c.body.stats).toEqual({ additions: 1, deletions: 1, total: 2 });
    const side = await s.request('POST', `/projects/${pid}/repository/files/side.txt`, {
      token: dev.token, json: { branch: 'side', start_branch: 'trunk', content: 'side\n', commit_message: 'Side' },
    });
    expect(side.status).toBe(201);
    const del = await s.request('DELETE', `/projects/${pid}/repository/files/side.txt`, {
      token: dev.token, json: { branch: 'side', commit_message: 'Remove side' },
    });
    expect(del.status).toBe(204);
  });

  it('refuses writes below Developer, on archived projects, and hides private projects', async () => {
    const rep = await s.request('POST', `/projects/${pid}/repository/files/r.txt`, {
      token: reporter.token, json: { branch: 'trunk', content: 'x', commit_message: 'm' },
    });
    expect(rep.status).toBe(403);
    const out = await s.request('GET', `/projects/${pid}/repository/tree`, { token: outsider.token });
    expect(out.status).toBe(404);
    expect(out.body).toEqual({ message: '404 Project Not Found' });
    const anon = await s.request('GET', `/projects/${pid}/repository/branches`, { token: null });
    expect(anon.status).toBe(404);
    const pubRead = await s.request('GET', `/projects/${publicId}/repository/files/README.md/raw`, { token: null });
    expect(pubRead.status).toBe(200);
    const anonWrite = await s.request('POST', `/projects/${publicId}/repository/branches`, { token: null, json: { branch: 'x', ref: 'main' } });
    expect(anonWrite.status).toBe(401);
    const outWrite = await s.request('POST', `/projects/${publicId}/repository/branches`, { token: outsider.token, json: { branch: 'x', ref: 'main' } });
    expect(outWrite.status).toBe(403);
    const arch = await s.request('POST', `/projects/${publicId}/archive`, { token: owner.token });
    expect(arch.status).toBe(201);
    const archived = await s.request('POST', `/projects/${publicId}/repository/files/a.txt`, {
      token: owner.token, json: { branch: 'main', content: 'x', commit_message: 'm' },
    });
    expect(archived.status).toBe(403);
    const archRead = await s.request('GET', `/projects/${publicId}/repository/tree`, { token: outsider.token });
    expect(archRead.status).toBe(200);
    await s.request('POST', `/projects/${publicId}/unarchive`, { token: owner.token });
  });
});

describe('branches', () => {
  it('creates, lists, searches, shows and deletes branches (names with /)', async () => {
    const r = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: 'feature/one', ref: 'trunk' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['name', 'commit', 'merged', 'protected', 'developers_can_push', 'developers_can_merge', 'can_push', 'default', 'web_url']);
    expect(r.body.name).toBe('feature/one');
    expect(r.body.merged).toBe(true);
    expect(r.body.can_push).toBe(true);
    expect(r.body.web_url).toBe(`${s.url}/owner1/repo-api/-/tree/feature/one`);
    const list = await s.request('GET', `/projects/${pid}/repository/branches`, { token: reporter.token });
    expect(list.status).toBe(200);
    expect(list.body.map((b: any) => b.name)).toEqual(['feature/one', 'side', 'trunk']);
    expect(list.headers.get('x-total')).toBe('3');
    expect(list.body.find((b: any) => b.name === 'trunk').can_push).toBe(false);
    const search = await s.request('GET', `/projects/${pid}/repository/branches`, { token: dev.token, query: { search: '^feat' } });
    expect(search.body.map((b: any) => b.name)).toEqual(['feature/one']);
    const one = await s.request('GET', `/projects/${pid}/repository/branches/${enc('feature/one')}`, { token: dev.token });
    expect(one.status).toBe(200);
    const del = await s.request('DELETE', `/projects/${pid}/repository/branches/${enc('feature/one')}`, { token: dev.token });
    expect(del.status).toBe(204);
    const gone = await s.request('GET', `/projects/${pid}/repository/branches/${enc('feature/one')}`, { token: dev.token });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: '404 Branch Not Found' });
  });

  it('refuses bad names, duplicates, unknown refs and deleting the default branch', async () => {
    for (const name of ['bad..name', 'has space', '-lead', 'end.lock', 'a~b', 'HEAD', 'x/']) {
      const r = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: name, ref: 'trunk' } });
      expect(r.status, name).toBe(400);
      expect(r.body).toEqual({ message: 'Branch name is invalid' });
    }
    const dup = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: 'side', ref: 'trunk' } });
    expect(dup.body).toEqual({ message: 'Branch already exists' });
    const ref = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: 'new', ref: 'nowhere' } });
    expect(ref.status).toBe(400);
    expect(ref.body).toEqual({ message: 'Invalid reference name: nowhere' });
    const missing = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: {} });
    expect(missing.body).toEqual({ message: '400 Bad request - "branch" not given' });
    const def = await s.request('DELETE', `/projects/${pid}/repository/branches/trunk`, { token: dev.token });
    expect(def.status).toBe(405);
    expect(def.body).toEqual({ message: 'Cannot remove HEAD branch' });
    const unknown = await s.request('DELETE', `/projects/${pid}/repository/branches/nope`, { token: dev.token });
    expect(unknown.status).toBe(404);
    const rep = await s.request('DELETE', `/projects/${pid}/repository/branches/side`, { token: reporter.token });
    expect(rep.status).toBe(403);
  });

  it('deletes merged branches but keeps unmerged ones and the default branch', async () => {
    await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: 'merged-one', ref: 'trunk' } });
    const rep = await s.request('DELETE', `/projects/${pid}/repository/merged_branches`, { token: reporter.token });
    expect(rep.status).toBe(403);
    const r = await s.request('DELETE', `/projects/${pid}/repository/merged_branches`, { token: dev.token });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ message: '202 Accepted' });
    const list = await s.request('GET', `/projects/${pid}/repository/branches`, { token: dev.token });
    // 'side' carries a commit trunk does not have (its file was added then deleted), so it stays.
    expect(list.body.map((b: any) => b.name)).toEqual(['side', 'trunk']);
  });
});

describe('commits', () => {
  it('creates a commit from several actions and reads it back', async () => {
    const r = await s.request('POST', `/projects/${pid}/repository/commits`, {
      token: dev.token,
      json: {
        branch: 'trunk',
        commit_message: 'Many changes\n\nBody text',
        actions: [
          { action: 'create', file_path: 'src/a.ts', content: 'export const a = 1;\n' },
          { action: 'create', file_path: 'bin/run.sh', content: 'echo hi\n', execute_filemode: true },
          { action: 'move', file_path: 'docs/guide.md', previous_path: 'docs/intro.md' },
        ],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.title).toBe('Many changes');
    expect(r.body.stats).toEqual({ additions: 2, deletions: 0, total: 2 });
    expect(r.body.project_id).toBe(pid);
    expect(r.body.web_url).toBe(`${s.url}/owner1/repo-api/-/commit/${r.body.id}`);
    const diff = await s.request('GET', `/projects/${pid}/repository/commits/${r.body.id}/diff`, { token: dev.token });
    expect(diff.status).toBe(200);
    expect(diff.body.map((d: any) => d.new_path).sort()).toEqual(['bin/run.sh', 'docs/guide.md', 'src/a.ts']);
    expect(diff.body.find((d: any) => d.new_path === 'docs/guide.md').renamed_file).toBe(true);
    expect(diff.body.find((d: any) => d.new_path === 'bin/run.sh').b_mode).toBe('100755');
    const chmod = await s.request('POST', `/projects/${pid}/repository/commits`, {
      token: dev.token, json: { branch: 'trunk', commit_message: 'chmod', actions: [{ action: 'chmod', file_path: 'bin/run.sh', execute_filemode: false }] },
    });
    expect(chmod.status).toBe(201);
  });

  it('lists history with ref_name, path, since/until and pagination links', async () => {
    const all = await s.request('GET', `/projects/${pid}/repository/commits`, { token: reporter.token, query: { ref_name: 'trunk' } });
    expect(all.status).toBe(200);
    expect(all.body.length).toBe(4);
    expect(all.body[0].title).toBe('chmod');
    const page = await s.request('GET', `/projects/${pid}/repository/commits`, { token: reporter.token, query: { per_page: 2 } });
    expect(page.body.length).toBe(2);
    expect(page.headers.get('x-next-page')).toBe('2');
    expect(page.headers.get('link')).toContain('rel="next"');
    const last = await s.request('GET', `/projects/${pid}/repository/commits`, { token: reporter.token, query: { per_page: 2, page: 2 } });
    expect(last.body.length).toBe(2);
    expect(last.headers.get('x-next-page')).toBe('');
    const byPath = await s.request('GET', `/projects/${pid}/repository/commits`, { token: reporter.token, query: { path: 'src' } });
    expect(byPath.body.map((c: any) => c.title)).toEqual(['Many changes']);
    const future = await s.request('GET', `/projects/${pid}/repository/commits`, { token: reporter.token, query: { since: '2999-01-01T00:00:00Z' } });
    expect(future.body).toEqual([]);
    const unknown = await s.request('GET', `/projects/${pid}/repository/commits`, { token: reporter.token, query: { ref_name: 'nowhere' } });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual([]);
    const badSince = await s.request('GET', `/projects/${pid}/repository/commits`, { token: reporter.token, query: { since: 'yesterday' } });
    expect(badSince.status).toBe(400);
    // with_stats reads every commit's stats in one git spawn; they equal the single-commit stats.
    const withStats = await s.request('GET', `/projects/${pid}/repository/commits`, { token: reporter.token, query: { with_stats: true, per_page: 100 } });
    expect(withStats.body.length).toBeGreaterThan(2);
    for (const c of withStats.body) {
      const one = await s.request('GET', `/projects/${pid}/repository/commits/${c.id}`, { token: reporter.token });
      expect({ id: c.id, stats: c.stats }).toEqual({ id: c.id, stats: one.body.stats });
    }
    expect(withStats.body.some((c: any) => c.stats.total > 0)).toBe(true);
  });

  it('answers 404 for unknown commits and 400 for bad actions', async () => {
    const nf = await s.request('GET', `/projects/${pid}/repository/commits/${'0'.repeat(40)}`, { token: dev.token });
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ message: '404 Commit Not Found' });
    const badAction = await s.request('POST', `/projects/${pid}/repository/commits`, {
      token: dev.token, json: { branch: 'trunk', commit_message: 'x', actions: [{ action: 'explode', file_path: 'a' }] },
    });
    expect(badAction.status).toBe(400);
    expect(badAction.body).toEqual({ error: 'actions[0][action] does not have a valid value' });
    const noActions = await s.request('POST', `/projects/${pid}/repository/commits`, { token: dev.token, json: { branch: 'trunk', commit_message: 'x', actions: [] } });
    expect(noActions.status).toBe(400);
    const stale = await s.request('POST', `/projects/${pid}/repository/commits`, {
      token: dev.token, json: { branch: 'trunk', commit_message: 'x', actions: [{ action: 'update', file_path: 'src/a.ts', content: 'y', last_commit_id: 'a'.repeat(40) }] },
    });
    expect(stale.status).toBe(400);
    expect(stale.body).toEqual({ message: 'The file has changed since you started editing it: src/a.ts' });
    const before = await s.request('GET', `/projects/${pid}/repository/branches/trunk`, { token: dev.token });
    const halfBad = await s.request('POST', `/projects/${pid}/repository/commits`, {
      token: dev.token, json: { branch: 'trunk', commit_message: 'x', actions: [{ action: 'create', file_path: 'ok.txt', content: 'y' }, { action: 'delete', file_path: 'ghost' }] },
    });
    expect(halfBad.status).toBe(400);
    const after = await s.request('GET', `/projects/${pid}/repository/branches/trunk`, { token: dev.token });
    expect(after.body.commit.id).toBe(before.body.commit.id);
  });
});

describe('compare and tree', () => {
  it('compares two refs', async () => {
    await s.request('POST', `/projects/${pid}/repository/files/only-on-topic.txt`, {
      token: dev.token, json: { branch: 'topic', start_branch: 'trunk', content: 'topic\n', commit_message: 'Topic work' },
    });
    const r = await s.request('GET', `/projects/${pid}/repository/compare`, { token: reporter.token, query: { from: 'trunk', to: 'topic' } });
    expect(r.status).toBe(200);
    expect(r.body.commits.map((c: any) => c.title)).toEqual(['Topic work']);
    expect(r.body.commit.title).toBe('Topic work');
    expect(r.body.diffs.map((d: any) => d.new_path)).toEqual(['only-on-topic.txt']);
    expect(r.body.compare_same_ref).toBe(false);
    const same = await s.request('GET', `/projects/${pid}/repository/compare`, { token: reporter.token, query: { from: 'trunk', to: 'trunk' } });
    expect(same.body.commit).toBeNull();
    expect(same.body.compare_same_ref).toBe(true);
    const bad = await s.request('GET', `/projects/${pid}/repository/compare`, { token: reporter.token, query: { from: 'trunk', to: 'nowhere' } });
    expect(bad.status).toBe(404);
    expect(bad.body).toEqual({ message: '404 Ref Not Found' });
    const missing = await s.request('GET', `/projects/${pid}/repository/compare`, { token: reporter.token });
    expect(missing.body).toEqual({ message: '400 Bad request - "from" not given' });
  });

  it('lists the tree with offset and keyset pagination', async () => {
    const root = await s.request('GET', `/projects/${pid}/repository/tree`, { token: reporter.token });
    expect(root.status).toBe(200);
    expect(root.body.map((e: any) => `${e.type}:${e.path}`)).toEqual(['tree:bin', 'tree:docs', 'tree:src']);
    const rec = await s.request('GET', `/projects/${pid}/repository/tree`, { token: reporter.token, query: { recursive: true } });
    const paths = rec.body.map((e: any) => e.path);
    expect(paths).toContain('src/a.ts');
    const sub = await s.request('GET', `/projects/${pid}/repository/tree`, { token: reporter.token, query: { path: 'docs' } });
    expect(sub.body).toEqual([expect.objectContaining({ name: 'guide.md', path: 'docs/guide.md', type: 'blob', mode: '100644' })]);
    const seen: string[] = [];
    let url: string | null = `${s.api}/projects/${pid}/repository/tree?recursive=true&pagination=keyset&per_page=2`;
    while (url) {
      const page = await s.request('GET', url, { token: reporter.token });
      expect(page.status).toBe(200);
      seen.push(...page.body.map((e: any) => e.path));
      const m = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '');
      url = m ? m[1]! : null;
    }
    expect(seen).toEqual(paths);
    const nf = await s.request('GET', `/projects/${pid}/repository/tree`, { token: reporter.token, query: { path: 'nope' } });
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ message: '404 Tree Not Found' });
    const badToken = await s.request('GET', `/projects/${pid}/repository/tree`, { token: reporter.token, query: { pagination: 'keyset', page_token: 'zzz' } });
    expect(badToken.status).toBe(400);
  });
});

describe('hostile input', () => {
  it('never answers 5xx; refused requests create no branch', async () => {
    const before = await s.request('GET', `/projects/${pid}/repository/branches`, { token: dev.token });
    const weird = ['main:README', '-n', '--all', 'a..b', '@{-1}', 'x y', '%00', 'HEAD~999', '..', '.git/config', 'trunk^{tree}', ''];
    const requests: Array<[string, string, Record<string, unknown>?]> = [];
    for (const w of weird) {
      const e = enc(w || ' ');
      requests.push(['GET', `/projects/${pid}/repository/commits/${e}`]);
      requests.push(['GET', `/projects/${pid}/repository/commits/${e}/diff`]);
      requests.push(['GET', `/projects/${pid}/repository/branches/${e}`]);
      requests.push(['DELETE', `/projects/${pid}/repository/branches/${e}`]);
      requests.push(['GET', `/projects/${pid}/repository/files/${e}?ref=trunk`]);
      requests.push(['GET', `/projects/${pid}/repository/files/README.md/raw?ref=${e}`]);
      requests.push(['GET', `/projects/${pid}/repository/commits?ref_name=${e}&path=${e}`]);
      requests.push(['GET', `/projects/${pid}/repository/tree?ref=${e}&path=${e}`]);
      requests.push(['GET', `/projects/${pid}/repository/compare?from=${e}&to=trunk`]);
      requests.push(['POST', `/projects/${pid}/repository/branches`, { branch: w, ref: w }]);
      requests.push(['POST', `/projects/${pid}/repository/files/${e}`, { branch: 'trunk', content: 'x', commit_message: 'm' }]);
      requests.push(['POST', `/projects/${pid}/repository/commits`, { branch: w, commit_message: 'm', actions: [{ action: 'create', file_path: w, content: 'x' }] }]);
      requests.push(['POST', `/projects/${pid}/repository/commits`, { branch: 'trunk', start_sha: w, commit_message: 'm', actions: [{ action: 'create', file_path: 'ok.txt' }] }]);
    }
    requests.push(['POST', `/projects/${pid}/repository/commits`, { branch: 'trunk', commit_message: 'nul\u0000byte', actions: [{ action: 'create', file_path: 'n.txt', content: 'x' }] }]);
    requests.push(['POST', `/projects/${pid}/repository/commits`, { branch: 'trunk', commit_message: 'm', author_name: '<>', actions: [{ action: 'create', file_path: 'who.txt', content: 'x' }] }]);
    requests.push(['POST', `/projects/${pid}/repository/commits`, { branch: 'trunk', commit_message: 'm', actions: 'nope' }]);
    requests.push(['POST', `/projects/${pid}/repository/commits`, { branch: 'trunk', commit_message: 'm', actions: [{ action: 'move', file_path: 'a' }] }]);
    requests.push(['POST', `/projects/${pid}/repository/commits`, { branch: 'trunk', commit_message: 'm', actions: [{ action: 'chmod', file_path: 'a' }] }]);
    requests.push(['POST', `/projects/${pid}/repository/commits`, { branch: 'trunk', commit_message: 'm', force: true, actions: [{ action: 'create', file_path: 'f.txt' }] }]);
    requests.push(['POST', `/projects/${pid}/repository/files/x.txt`, { branch: 'trunk', content: { a: 1 }, commit_message: 'm' }]);
    requests.push(['GET', `/projects/${pid}/repository/tree?pagination=keyset&page_token=${enc('no/such')}`]);
    // Names git accepts but loose-ref files cannot store, and names GitLab reads as full refs.
    for (const branch of ['b'.repeat(300), `${'b/'.repeat(3000)}c`, 'refs/heads/trunk', 'refs/tags/v1']) {
      requests.push(['POST', `/projects/${pid}/repository/branches`, { branch, ref: 'trunk' }]);
      requests.push(['POST', `/projects/${pid}/repository/commits`, { branch, start_branch: 'trunk', commit_message: 'm', actions: [{ action: 'create', file_path: 'long.txt', content: 'x' }] }]);
    }
    for (const [method, path, json] of requests) {
      const r = await s.request(method, path, { token: dev.token, ...(json ? { json } : {}) });
      expect(r.status, `${method} ${path} ${JSON.stringify(json)} -> ${r.text}`).toBeLessThan(500);
    }
    const after = await s.request('GET', `/projects/${pid}/repository/branches`, { token: dev.token });
    // Odd but valid file names ('-n', 'x y') are committed; no odd branch appears.
    expect(after.body.map((b: any) => b.name)).toEqual(before.body.map((b: any) => b.name));
    const long = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: 'b'.repeat(300), ref: 'trunk' } });
    expect([long.status, long.body]).toEqual([400, { message: 'Branch name is invalid' }]);
    const who = await s.request('GET', `/projects/${pid}/repository/commits/trunk`, { token: dev.token });
    expect(who.body.author_name).toBe('dev1');
  });
});

describe('compare-and-swap race', () => {
  it('concurrent updates of one branch: each gets a 200 or a clear 400, no commit is lost, git fsck passes', async () => {
    const count = async () => {
      const r = await s.request('GET', `/projects/${pid}/repository/commits`, { token: dev.token, query: { ref_name: 'trunk', per_page: 100 } });
      return r.body.length as number;
    };
    const before = await count();
    let ok = 0;
    let refused = 0;
    for (let round = 0; round < 4; round++) {
      const results = await Promise.all([0, 1, 2].map((i) =>
        s.request('PUT', `/projects/${pid}/repository/files/${enc('src/a.ts')}`, {
          token: dev.token, json: { branch: 'trunk', content: `export const a = ${round}${i};\n`, commit_message: `race ${round}-${i}` },
        })));
      for (const r of results) {
        if (r.status === 200) ok++;
        else {
          expect(r.status).toBe(400);
          expect(r.body).toEqual({ message: 'Could not update branch trunk. Please refresh and try again.' });
          refused++;
        }
      }
    }
    // Writers that started from the same tip cannot all win: the compare-and-swap refuses the late ones.
    expect(refused).toBeGreaterThan(0);
    expect(ok).toBeGreaterThan(0);
    expect(await count()).toBe(before + ok);
    const repoPath = join(s.dataDir, 'repositories', `${pid}.git`);
    execFileSync('git', ['--git-dir', repoPath, 'fsck', '--strict'], { stdio: 'pipe' });
  });
});
