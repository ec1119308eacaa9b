// Crash safety: a server process is SIGKILLed at random moments during a write load (users, tokens
// created and rotated, branches, commits and merge requests when those modules exist), restarted on
// the same data, and everything it acknowledged must still be there.
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, createInstallation, DB_KIND, freePort, startProcess, type Installation, type ServerProcess } from './processes.js';
import { createTokenOp, createUserOp, mergeAgreement, mergeOp, mergeRequestOp, newLedger, rotateOp, setUpProject, verifyLedger, type Call } from './workload.js';

const CYCLES = Number(process.env.CRASH_CYCLES ?? 3);
const WIDTH = 4;

let inst: Installation;
let proc: ServerProcess | null = null;

beforeAll(async () => {
  inst = await createInstallation(DB_KIND);
}, 60_000);

afterAll(async () => {
  await proc?.kill('SIGKILL');
  await inst?.destroy();
});

/** Runs random write operations until `stop()` is true. */
async function writeLoad(c: Call, l: ReturnType<typeof newLedger>, projectId: number | null, stop: () => boolean): Promise<void> {
  async function worker() {
    while (!stop()) {
      const roll = Math.random();
      if (roll < 0.2 || l.users.size < 3) await createUserOp(c, l, 'crash');
      else if (roll < 0.4) await createTokenOp(c, l);
      else if (roll < 0.65 || projectId === null) await rotateOp(c, l, Math.random() < 0.3);
      else if (roll < 0.8 || !l.mrs.some((m) => !m.merged)) await mergeRequestOp(c, l, projectId);
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
  const port = await freePort();
  proc = await startProcess(inst, {}, port);
  const c: Call = (method, path, opts) => call(proc!.url, method, path, opts);
  const l = newLedger();
  const projectId = await setUpProject(c, `crash-${Date.now()}`);
  const logs: string[] = [];
  // A few open merge requests up front, so merges (git ref moves plus rows) are in flight when the kills come.
  if (projectId !== null) for (let i = 0; i < 4; i++) await mergeRequestOp(c, l, projectId);
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    let stopped = false;
    const load = writeLoad(c, l, projectId, () => stopped);
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
  const tail = writeLoad(c, l, projectId, () => stopped);
  await new Promise((r) => setTimeout(r, 1000));
  stopped = true;
  await tail;
  console.log(`crash summary ${JSON.stringify({ db: DB_KIND, kills: CYCLES, users: l.users.size, tokens: l.tokens.length, mergeRequests: l.mrs.length, merged: l.mrs.filter((m) => m.merged).length, statuses: l.statuses })}`);
  expect(l.errors, logs.join('\n---\n')).toEqual([]);
  expect(l.users.size).toBeGreaterThan(3);
  expect(await verifyLedger(c, l)).toEqual([]);
  // Repositories live at <data dir>/repositories/<project id>.git.
  expect(await mergeAgreement(c, l, (id) => join(inst.dataDir, 'repositories', `${id}.git`))).toEqual([]);
  await proc!.kill('SIGTERM');
  proc = null;
  if (DB_KIND === 'sqlite') expect(sqliteIntegrity(inst.dataDir)).toBe('ok');
}, 240_000);
