// The server dying in the middle of a push must not leave git running. Its git children then read
// the end of a request body cut short: git 2.39's http-backend, when told a CONTENT_LENGTH, loops on
// that end-of-file forever at 100 % CPU (one process per push in flight); Labwright lets git read
// the body to its end instead, so they fail the push and exit.
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { gitProcessesLeft, gitProcessesUnder } from '../helpers/processes.js';
import { call, createInstallation, DB_KIND, freePort, ROOT_TOKEN, startProcess, type Installation, type ServerProcess } from './processes.js';

let inst: Installation;
let proc: ServerProcess | null = null;

beforeAll(async () => {
  inst = await createInstallation(DB_KIND);
}, 60_000);

afterAll(async () => {
  await proc?.kill('SIGKILL');
  await inst?.destroy();
});

/** A push's ref update and the start of its pack, on a connection left open. */
function startPush(url: string, path: string): void {
  const command = `${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/main\0report-status\n`;
  const pkt = (command.length + 4).toString(16).padStart(4, '0') + command;
  const body = Buffer.concat([Buffer.from(pkt + '0000'), Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 1])]);
  const req = request(new URL(`${url}/${path}.git/git-receive-pack`), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-git-receive-pack-request',
      'Content-Length': String(body.length + 100_000),
      Authorization: `Basic ${Buffer.from(`root:${ROOT_TOKEN}`).toString('base64')}`,
    },
  });
  req.on('error', () => undefined);
  req.write(body);
}

// Linux only: the leftover processes are found through /proc (CI and deployments run on Linux).
it.skipIf(process.platform !== 'linux')(`SIGKILL during pushes leaves no git process running (${DB_KIND})`, async () => {
  proc = await startProcess(inst, {}, await freePort());
  const created = await call(proc.url, 'POST', '/projects', { json: { name: 'killed-push', path: 'killed-push' } });
  expect(created.status).toBe(201);
  for (let i = 0; i < 3; i++) startPush(proc.url, 'root/killed-push');
  // Wait until git is reading the bodies, then kill the server.
  for (let i = 0; i < 100 && gitProcessesUnder(inst.dataDir).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(gitProcessesUnder(inst.dataDir).length).toBeGreaterThan(0);
  await new Promise((r) => setTimeout(r, 300));
  await proc.kill('SIGKILL');
  proc = null;
  expect(await gitProcessesLeft(inst.dataDir, 5000)).toEqual([]);
}, 60_000);
