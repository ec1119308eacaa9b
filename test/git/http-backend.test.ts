import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffRefs, parseGitPath, readRefs, serveGitHttp } from '../../src/git/http-backend.js';
import { GitRepository, initBareRepository } from '../../src/git/repository.js';
import { alice, cleanupTempDirs, makeTempDir, testGitEnv } from './helpers.js';

const execFileAsync = promisify(execFile);

/** Async on purpose: the server runs in this process, a sync git call would deadlock it. */
async function gitAsync(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, { cwd, env: testGitEnv() });
  return stdout.trim();
}

let root: string;
let server: Server;
let baseUrl: string;
const seen: Array<{ url: string; protocol: string | undefined; status: number }> = [];

beforeAll(async () => {
  root = makeTempDir('labwright-http-');
  server = createServer((req, res) => {
    const parsed = parseGitPath(req.url ?? '');
    if (!parsed || (parsed.service === 'info-refs' && parsed.rpc === null)) {
      res.writeHead(404).end();
      return;
    }
    void serveGitHttp(req, res, { repoPath: join(root, 'repos', `${parsed.repoPath}.git`), pathInfo: parsed.pathInfo, remoteUser: 'alice' })
      .then(({ status }) => seen.push({ url: req.url ?? '', protocol: req.headers['git-protocol'] as string | undefined, status }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  cleanupTempDirs();
});

async function serverRepo(name: string): Promise<GitRepository> {
  const path = join(root, 'repos', 'group', 'sub', `${name}.git`);
  await initBareRepository(path);
  const repo = new GitRepository(path);
  await repo.commitFiles({
    branch: 'main', startSha: null, expectedOldSha: null, message: 'Initial commit', author: alice,
    actions: [{ action: 'create', file_path: 'README.md', content: Buffer.from('# hello\n') }],
  });
  return repo;
}

function post(path: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('smart HTTP end to end', () => {
  it('clones, pushes a new branch and a second commit, and fetches', async () => {
    const repo = await serverRepo('project');
    const work = makeTempDir();
    const clone = join(work, 'clone');
    await gitAsync(work, ['clone', `${baseUrl}/group/sub/project.git`, clone]);
    expect(await gitAsync(clone, ['log', '--format=%s'])).toBe('Initial commit');

    const before = await readRefs(repo.path);
    await gitAsync(clone, ['checkout', '-b', 'feature/push']);
    writeFileSync(join(clone, 'feature.txt'), 'from client\n');
    await gitAsync(clone, ['add', 'feature.txt']);
    await gitAsync(clone, ['commit', '-m', 'client commit']);
    await gitAsync(clone, ['push', 'origin', 'feature/push']);
    expect(await repo.branchSha('feature/push')).toBe(await gitAsync(clone, ['rev-parse', 'HEAD']));

    await gitAsync(clone, ['checkout', 'main']);
    writeFileSync(join(clone, 'README.md'), '# hello\nsecond\n');
    await gitAsync(clone, ['commit', '-am', 'second commit on main']);
    // A tiny post buffer forces a chunked request body (no Content-Length).
    await gitAsync(clone, ['-c', 'http.postBuffer=1024', 'push', 'origin', 'main']);
    const mainSha = await gitAsync(clone, ['rev-parse', 'HEAD']);
    expect(await repo.branchSha('main')).toBe(mainSha);
    const changes = diffRefs(before, await readRefs(repo.path));
    expect(changes.map((c) => [c.ref, c.before === null, c.after])).toEqual([
      ['refs/heads/feature/push', true, await repo.branchSha('feature/push')],
      ['refs/heads/main', false, mainSha],
    ]);

    // New commit on the server, then fetch it.
    const serverSha = await repo.commitFiles({
      branch: 'main', startSha: mainSha, expectedOldSha: mainSha, message: 'server side', author: alice,
      actions: [{ action: 'create', file_path: 'server.txt', content: Buffer.from('s') }],
    });
    await gitAsync(clone, ['fetch', 'origin']);
    expect(await gitAsync(clone, ['rev-parse', 'origin/main'])).toBe(serverSha);

    // Force push (non fast-forward) is allowed by the repository config.
    await gitAsync(clone, ['push', '--force', 'origin', 'HEAD:main']);
    expect(await repo.branchSha('main')).toBe(mainSha);
    await gitAsync(repo.path, ['fsck', '--strict']);
  });

  it('works with protocol v2 and without the .git suffix', async () => {
    const repo = await serverRepo('v2project');
    const work = makeTempDir();
    const count = seen.length;
    await gitAsync(work, ['-c', 'protocol.version=2', 'clone', `${baseUrl}/group/sub/v2project`, 'c']);
    expect(await gitAsync(join(work, 'c'), ['rev-parse', 'HEAD'])).toBe(await repo.branchSha('main'));
    const requests = seen.slice(count);
    expect(requests.some((r) => r.protocol === 'version=2')).toBe(true);
    expect(requests.every((r) => r.status === 200)).toBe(true);
    await gitAsync(join(work, 'c'), ['-c', 'protocol.version=2', 'fetch', 'origin']);
  });

  it('accepts gzip-encoded upload-pack requests', async () => {
    const repo = await serverRepo('gzipped');
    const sha = (await repo.branchSha('main'))!;
    const pkt = (line: string): string => (line.length + 4).toString(16).padStart(4, '0') + line;
    const body = Buffer.from(`${pkt(`want ${sha}\n`)}0000${pkt('done\n')}`);
    const res = await post('/group/sub/gzipped.git/git-upload-pack', gzipSync(body), {
      'Content-Type': 'application/x-git-upload-pack-request',
      'Content-Encoding': 'gzip',
    });
    expect(res.status).toBe(200);
    expect(res.body.subarray(0, 8).toString()).toBe('0008NAK\n');
    expect(res.body.includes(Buffer.from('PACK'))).toBe(true);
  });

  it('answers 404 for unknown repositories and survives aborted requests', async () => {
    const res = await new Promise<number>((resolve, reject) => {
      request(`${baseUrl}/group/missing.git/info/refs?service=git-upload-pack`, (r) => { r.resume(); resolve(r.statusCode ?? 0); })
        .on('error', reject).end();
    });
    expect(res).toBe(404);
    const missingGroup = await new Promise<number>((resolve, reject) => {
      request(`${baseUrl}/nogroup/missing.git/info/refs?service=git-upload-pack`, (r) => { r.resume(); resolve(r.statusCode ?? 0); })
        .on('error', reject).end();
    });
    expect(missingGroup).toBe(404);

    await serverRepo('aborted');
    await new Promise<void>((resolve) => {
      const req = request(`${baseUrl}/group/sub/aborted.git/git-upload-pack`, {
        method: 'POST', headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Transfer-Encoding': 'chunked' },
      });
      req.on('error', () => resolve());
      req.write('0032want ');
      setTimeout(() => { req.destroy(); resolve(); }, 50);
    });
    // The handler finishes (git was killed) instead of hanging on the dead connection.
    for (let i = 0; i < 100 && !seen.some((r) => r.url.endsWith('aborted.git/git-upload-pack')); i += 1) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen.some((r) => r.url.endsWith('aborted.git/git-upload-pack'))).toBe(true);
    const work = makeTempDir();
    await gitAsync(work, ['clone', `${baseUrl}/group/sub/aborted.git`, 'c']);
  });
});

describe('parseGitPath', () => {
  it('parses the three smart HTTP endpoints', () => {
    expect(parseGitPath('/group/sub/project.git/info/refs?service=git-upload-pack')).toEqual({
      repoPath: 'group/sub/project', service: 'info-refs', pathInfo: '/info/refs', rpc: 'upload-pack',
    });
    expect(parseGitPath('/group/project.git/info/refs?service=git-receive-pack')!.rpc).toBe('receive-pack');
    expect(parseGitPath('/group/project.git/info/refs')!.rpc).toBeNull();
    expect(parseGitPath('/group/project.git/git-upload-pack')).toEqual({
      repoPath: 'group/project', service: 'upload-pack', pathInfo: '/git-upload-pack', rpc: 'upload-pack',
    });
    expect(parseGitPath('/group/project/git-receive-pack')).toEqual({
      repoPath: 'group/project', service: 'receive-pack', pathInfo: '/git-receive-pack', rpc: 'receive-pack',
    });
    expect(parseGitPath('/a/my.project-1_x.wiki.git/info/refs')!.repoPath).toBe('a/my.project-1_x.wiki');
  });

  it('refuses a repeated service parameter (authorised as the first, run by git as the last)', () => {
    expect(parseGitPath('/g/p.git/info/refs?service=git-upload-pack&service=git-receive-pack')!.rpc).toBeNull();
    expect(parseGitPath('/g/p.git/info/refs?service=git-receive-pack&service=git-receive-pack')!.rpc).toBeNull();
  });

  it('rejects other or unsafe paths', () => {
    for (const url of ['/group/project.git', '/group/project.git/objects/info/packs', '/info/refs', '/.git/info/refs',
      '/group/../etc/info/refs', '/group/%2e%2e/info/refs', '/group/-x/info/refs', '/group//p/info/refs', '/group/a%2Fb/info/refs',
      'group/p/info/refs', '/g/p.git.git/info/refs', '/g/%zz/info/refs']) {
      expect(parseGitPath(url), url).toBeNull();
    }
  });
});
