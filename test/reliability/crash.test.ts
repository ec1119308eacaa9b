// Crash safety: a server process is SIGKILLed at random moments during a write load (users, tokens
// created and rotated, branches, commits and merge requests when those modules exist, OAuth codes
// redeemed and tokens refreshed, git pushes over HTTP), restarted on the same data, and everything
// it acknowledged must still be there, and nothing it consumed (refresh tokens, codes) usable again.
// And a server killed in the middle of pushes leaves no git process running: their git children
// read the end of a body cut short, which git 2.39's http-backend, told a CONTENT_LENGTH, looped
// on forever at 100 % CPU; Labwright lets git read the body to its end, so they fail and exit.
import BetterSqlite3 from 'better-sqlite3';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { gitProcessesLeft, gitProcessesUnder } from '../helpers/processes.js';
import { call, createInstallation, DB_KIND, freePort, ROOT_TOKEN, startProcess, type Installation, type ServerProcess } from './processes.js';
import { cleanUpPushes, codeOp, fsckProblems, pushOp, refreshOp, setUpOAuth, setUpPushes, verifyOAuth, verifyPushes, type OAuthLedger, type PushLedger } from './oauth-push.js';
import { createTokenOp, createUserOp, mergeAgreement, mergeOp, mergeRequestOp, newLedger, rotateOp, setUpProject, verifyLedger, type Call } from './workload.js';

const CYCLES = Number(process.env.CRASH_CYCLES ?? 3);
const WIDTH = 4;

let inst: Installation;
let proc: ServerProcess | null = null;
let pushes: PushLedger | null = null;

beforeAll(async () => {
  inst = await createInstallation(DB_KIND);
}, 60_000);

afterAll(async () => {
  await proc?.kill('SIGKILL');
  await inst?.destroy();
  cleanUpPushes(pushes);
});

/** Runs random write operations until `stop()` is true. */
async function writeLoad(c: Call, l: ReturnType<typeof newLedger>, projectId: number | null, o: OAuthLedger, p: PushLedger, stop: () => boolean): Promise<void> {
  async function worker() {
    while (!stop()) {
      const roll = Math.random();
      if (roll < 0.12 || l.users.size < 3) await createUserOp(c, l, 'crash');
      else if (roll < 0.24) await createTokenOp(c, l);
      else if (roll < 0.4) await rotateOp(c, l, Math.random() < 0.3);
      else if (roll < 0.48 || !o.families.some((f) => f.fate === 'live' && !f.busy)) await codeOp(o, l, Math.random() < 0.15);
      else if (roll < 0.64) await refreshOp(o, l, Math.random() < 0.15);
      else if (roll < 0.76 || projectId === null) await pushOp(p, l, o);
      else if (roll < 0.88 || !l.mrs.some((m) => !m.merged)) await mergeRequestOp(c, l, projectId);
      else await mergeOp(c, l);
    }
  }
  await Promise.all(Array.from({ length: WIDTH }, worker));
}

function sqliteIntegrity(dataDir: string): string {
  const db = new BetterSqlite3(join(dataDir, 'labwright.sqlite3'), { readonly: true });
  try {
    return (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

it(`SIGKILL during writes loses nothing acknowledged (${DB_KIND}, ${CYCLES} kills)`, async () => {
  const t0 = Date.now();
  const port = await freePort();
  proc = await startProcess(inst, {}, port);
  const c: Call = (method, path, opts) => call(proc!.url, method, path, opts);
  const l = newLedger();
  const projectId = await setUpProject(c, `crash-${Date.now()}`);
  const oauth = await setUpOAuth(c, proc.url, `crashoauth${Date.now()}`);
  pushes = await setUpPushes(c, proc.url, `crash-push-${Date.now()}`, oauth);
  const logs: string[] = [];
  const tSetUp = Date.now();
  // A few open merge requests up front, so merges (git ref moves plus rows) are in flight when the kills come.
  if (projectId !== null) for (let i = 0; i < 4; i++) await mergeRequestOp(c, l, projectId);
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    let stopped = false;
    const load = writeLoad(c, l, projectId, oauth, pushes, () => stopped);
    // Let the load build up, then kill mid-flight at a random moment.
    await new Promise((r) => setTimeout(r, 800 + Math.random() * 2200));
    const victim = proc!;
    victim.child.kill('SIGKILL');
    await victim.exited;
    stopped = true;
    await load;
    logs.push(victim.output().slice(-2000));
    if (DB_KIND === 'sqlite') expect(sqliteIntegrity(inst.dataDir)).toBe('ok');
    proc = await startProcess(inst, {}, port);
  }
  // A last stretch of load after the final restart: the restarted server keeps working.
  let stopped = false;
  const tail = writeLoad(c, l, projectId, oauth, pushes, () => stopped);
  await new Promise((r) => setTimeout(r, 1000));
  stopped = true;
  await tail;
  const tLoad = Date.now();
  console.log(`crash summary ${JSON.stringify({ db: DB_KIND, kills: CYCLES, users: l.users.size, tokens: l.tokens.length, mergeRequests: l.mrs.length, merged: l.mrs.filter((m) => m.merged).length, oauthFamilies: oauth.families.length, refreshes: oauth.refreshes, pushes: pushes.pushes, pushesFailed: pushes.failed, statuses: l.statuses })}`);
  if (process.env.CRASH_VERBOSE) console.log(pushes.failures.join('\n'));
  expect(l.errors, logs.join('\n---\n')).toEqual([]);
  expect(l.users.size).toBeGreaterThan(3);
  expect(await verifyLedger(c, l)).toEqual([]);
  // Repositories live at <data dir>/repositories/<project id>.git.
  const repoPath = (id: number) => join(inst.dataDir, 'repositories', `${id}.git`);
  expect(await mergeAgreement(c, l, repoPath)).toEqual([]);
  expect(await verifyPushes(c, pushes, repoPath(pushes.projectId))).toEqual([]);
  expect(oauth.families.length).toBeGreaterThan(0);
  expect(await verifyOAuth(oauth)).toEqual([]);
  for (const id of [projectId, pushes.projectId]) if (id !== null) expect(fsckProblems(repoPath(id))).toEqual([]);
  console.log(`crash phases (s) ${JSON.stringify({ setUp: (tSetUp - t0) / 1000, load: (tLoad - tSetUp) / 1000, verify: (Date.now() - tLoad) / 1000 })}`);
  await proc!.kill('SIGTERM');
  proc = null;
  if (DB_KIND === 'sqlite') expect(sqliteIntegrity(inst.dataDir)).toBe('ok');
  // git children of killed servers see their request end and exit: none is left running (git 2.39's
  // http-backend, given a CONTENT_LENGTH, spun at 100 % CPU forever on a body cut short).
  expect(await gitProcessesLeft(inst.dataDir, 10_000)).toEqual([]);
}, 240_000);

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
