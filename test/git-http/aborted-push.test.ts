// A push whose client goes away in the middle of its body must not leave git behind (the server
// kills it). The server dying in the middle of a push is covered by the crash test.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveGit } from '../../src/git-http/serve.js';
import { repoPathFor } from '../../src/services/projects/lookup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitProcessesLeft } from '../helpers/processes.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let owner: { id: number; username: string; token: string };

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('aborter');
  const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'target', path: 'target' } });
  expect(p.status).toBe(201);
});
afterAll(async () => {
  await s?.close();
});

async function abortedPush(declared: number, sent: number): Promise<void> {
  const url = new URL(`${s.url}/aborter/target.git/git-receive-pack`);
  await new Promise<void>((resolve) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-git-receive-pack-request',
        'Content-Length': String(declared),
        Authorization: `Basic ${Buffer.from(`aborter:${owner.token}`).toString('base64')}`,
      },
    });
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.resume();
      res.on('close', () => resolve());
    });
    // A ref update, then the start of its pack (header: one object), then the connection drops:
    // git is left waiting for the rest of the pack.
    const command = `${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/main\0report-status\n`;
    const pkt = (command.length + 4).toString(16).padStart(4, '0') + command;
    const head = Buffer.concat([Buffer.from(pkt + '0000'), Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 1])]);
    req.write(Buffer.concat([head, Buffer.alloc(Math.max(0, sent - head.length), 0x78)]));
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 300);
  });
}

// Linux only: the leftover processes are found through /proc (CI and deployments run on Linux).
describe.skipIf(process.platform !== 'linux')('an interrupted push', () => {
  it('leaves no git process behind when the client left before git started', async () => {
    // The server spends a while (authorising, as under load) before it starts git; the client is
    // gone by then, its request's 'close' already past.
    const projectId = (await s.request('GET', '/projects/aborter%2Ftarget', { token: owner.token })).body.id;
    const server = createServer((req, res) => {
      setTimeout(() => void serveGit(req, res, { repoPath: repoPathFor(s.app.lw, projectId), pathInfo: '/git-receive-pack', env: { GIT_PROJECT_ROOT: s.dataDir } }), 200);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      await new Promise<void>((resolve) => {
        const req = request({ host: '127.0.0.1', port, path: '/x.git/git-receive-pack', method: 'POST', headers: { 'Content-Type': 'application/x-git-receive-pack-request', 'Content-Length': '100000' } });
        req.on('error', () => resolve());
        req.write(Buffer.alloc(64, 0x30));
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 50);
      });
      await new Promise((r) => setTimeout(r, 400));
      expect(await gitProcessesLeft(s.dataDir, 2000)).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('leaves no git process behind', async () => {
    for (let i = 0; i < 3; i++) await abortedPush(100_000, 64);
    expect(await gitProcessesLeft(s.dataDir)).toEqual([]);

    // The server still serves pushes' discovery after the aborted ones.
    const refs = await s.request('GET', `${s.url}/aborter/target.git/info/refs?service=git-receive-pack`, {
      token: null,
      headers: { authorization: `Basic ${Buffer.from(`aborter:${owner.token}`).toString('base64')}` },
    });
    expect(refs.status).toBe(200);
  });
});
