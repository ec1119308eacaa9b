// A write load (users, tokens, rotations, merge requests) with a ledger of what the server
// acknowledged, and the checks that the acknowledged state is all there afterwards.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, type Reply } from './processes.js';

export type Call = (method: string, path: string, opts?: { token?: string | null; json?: unknown; timeoutMs?: number; headers?: Record<string, string> }) => Promise<Reply>;

/** True when the merge requests module is in the tree (its load is added when it is). */
export const HAS_MERGE_REQUESTS = existsSync(join(REPO_ROOT, 'src/api/v4/merge-requests'));

export interface TokenEntry {
  id: number;
  token: string;
  userId: number;
  /** 'rotated' once a rotation of it got a 2xx; 'unknown' when a rotation got no answer. */
  fate: 'live' | 'rotated' | 'unknown';
  chain: number;
}

export interface Ledger {
  users: Map<number, string>;
  tokens: TokenEntry[];
  mrs: Array<{ projectId: number; iid: number; title: string; merged?: boolean }>;
  statuses: Record<string, number>;
  /** Answers the load must never get (5xx), with their bodies. */
  errors: string[];
  chains: number;
}

export function newLedger(): Ledger {
  return { users: new Map(), tokens: [], mrs: [], statuses: {}, errors: [], chains: 0 };
}

export function note(l: Ledger, what: string, r: Pick<Reply, 'status' | 'text'>): void {
  const key = r.status === 0 ? 'no answer' : `${Math.floor(r.status / 100)}xx`;
  l.statuses[key] = (l.statuses[key] ?? 0) + 1;
  if (r.status >= 500) l.errors.push(`${what} -> ${r.status} ${r.text.slice(0, 300)}`);
}

let serial = 0;
const tag = Math.random().toString(36).slice(2, 7);

export async function createUserOp(call: Call, l: Ledger, prefix: string): Promise<void> {
  const username = `${prefix}${tag}${++serial}`;
  const r = await call('POST', '/users', { json: { username, email: `${username}@example.com`, name: username, password: 'password-1234-rel' } });
  note(l, 'POST /users', r);
  if (r.status === 201) l.users.set(r.body.id, username);
}

export async function createTokenOp(call: Call, l: Ledger): Promise<void> {
  const ids = [...l.users.keys()];
  if (!ids.length) return;
  const userId = ids[Math.floor(Math.random() * ids.length)];
  const r = await call('POST', `/users/${userId}/personal_access_tokens`, { json: { name: 'rel', scopes: ['api'] } });
  note(l, 'POST /users/:id/personal_access_tokens', r);
  if (r.status === 201) l.tokens.push({ id: r.body.id, token: r.body.token, userId, fate: 'live', chain: ++l.chains });
}

/** Rotates a live token with itself; `twice` fires two rotations of the same token at once. */
export async function rotateOp(call: Call, l: Ledger, twice = false): Promise<void> {
  const live = l.tokens.filter((t) => t.fate === 'live');
  if (!live.length) return;
  const t = live[Math.floor(Math.random() * live.length)];
  const attempts = await Promise.all(Array.from({ length: twice ? 2 : 1 }, () => call('POST', '/personal_access_tokens/self/rotate', { token: t.token })));
  let wins = 0;
  for (const r of attempts) {
    note(l, 'POST /personal_access_tokens/self/rotate', r);
    if (r.status === 200) {
      wins++;
      t.fate = 'rotated';
      l.tokens.push({ id: r.body.id, token: r.body.token, userId: t.userId, fate: 'live', chain: t.chain });
    } else if (r.status === 0 && t.fate === 'live') t.fate = 'unknown';
  }
  if (wins > 1) l.errors.push(`token ${t.id} was rotated ${wins} times by concurrent requests`);
}

/** A branch off main and a merge request from it. */
export async function mergeRequestOp(call: Call, l: Ledger, projectId: number): Promise<void> {
  const branch = `rel-${tag}-${++serial}`;
  const b = await call('POST', `/projects/${projectId}/repository/branches`, { json: { branch, ref: 'main' } });
  note(l, 'POST /projects/:id/repository/branches', b);
  if (b.status !== 201) return;
  const c = await call('POST', `/projects/${projectId}/repository/commits`, {
    json: { branch, commit_message: `change ${branch}`, actions: [{ action: 'create', file_path: `${branch}.txt`, content: `${branch}\n` }] },
  });
  note(l, 'POST /projects/:id/repository/commits', c);
  const title = `mr ${branch}`;
  const r = await call('POST', `/projects/${projectId}/merge_requests`, { json: { source_branch: branch, target_branch: 'main', title } });
  note(l, 'POST /projects/:id/merge_requests', r);
  if (r.status === 201) l.mrs.push({ projectId, iid: r.body.iid, title });
}

/** Merges an open acknowledged merge request; a 2xx must leave it merged with its commit on main. */
export async function mergeOp(call: Call, l: Ledger): Promise<void> {
  const open = l.mrs.filter((m) => !m.merged);
  if (!open.length) return;
  const m = open[Math.floor(Math.random() * open.length)];
  const r = await call('PUT', `/projects/${m.projectId}/merge_requests/${m.iid}/merge`, { json: {} });
  note(l, 'PUT /projects/:id/merge_requests/:iid/merge', r);
  if (r.status === 200) m.merged = true;
}

/**
 * The database and the repository agree: every merge request the API calls merged (acknowledged or
 * not) has a merge commit that main contains; every acknowledged merge is merged.
 */
export async function mergeAgreement(call: Call, l: Ledger, repoPath: (projectId: number) => string): Promise<string[]> {
  const problems: string[] = [];
  for (const pid of new Set(l.mrs.map((m) => m.projectId))) {
    const list = await call('GET', `/projects/${pid}/merge_requests?state=all&per_page=100`);
    for (const mr of list.body as Array<{ iid: number; state: string; merge_commit_sha: string | null; squash_commit_sha: string | null }>) {
      const acked = l.mrs.find((m) => m.projectId === pid && m.iid === mr.iid);
      if (acked?.merged && mr.state !== 'merged') problems.push(`!${mr.iid}: merge acknowledged but state is ${mr.state}`);
      if (mr.state !== 'merged') continue;
      const sha = mr.merge_commit_sha ?? mr.squash_commit_sha;
      if (!sha) {
        problems.push(`!${mr.iid}: merged without a merge commit sha`);
        continue;
      }
      const onMain = spawnSync('git', ['-C', repoPath(pid), 'merge-base', '--is-ancestor', sha, 'refs/heads/main']);
      if (onMain.status !== 0) problems.push(`!${mr.iid}: merged but ${sha} is not on main (${onMain.stderr.toString().trim()})`);
    }
  }
  return problems;
}

/** A project to hold merge requests, or null when the modules for it are not there. */
export async function setUpProject(call: Call, name: string): Promise<number | null> {
  if (!HAS_MERGE_REQUESTS) return null;
  const r = await call('POST', '/projects', { json: { name, initialize_with_readme: true } });
  return r.status === 201 ? r.body.id : null;
}

/** Everything the ledger says was acknowledged is there; no rotated token works; iids are gap-free. */
export async function verifyLedger(call: Call, l: Ledger): Promise<string[]> {
  const problems: string[] = [];
  for (const [id, username] of l.users) {
    const r = await call('GET', `/users/${id}`);
    if (r.status !== 200 || r.body.username !== username) problems.push(`user ${id} (${username}) acknowledged but GET gives ${r.status}`);
  }
  const byChain = new Map<number, number>();
  for (const t of l.tokens) {
    const row = await call('GET', `/personal_access_tokens/${t.id}`);
    if (row.status !== 200) problems.push(`token ${t.id} acknowledged but GET gives ${row.status}`);
    const use = await call('GET', '/user', { token: t.token });
    if (t.fate === 'rotated' && use.status !== 401) problems.push(`token ${t.id} was rotated but still answers ${use.status}`);
    if (use.status === 200) byChain.set(t.chain, (byChain.get(t.chain) ?? 0) + 1);
  }
  for (const [chain, n] of byChain) if (n > 1) problems.push(`${n} tokens of one rotation chain (${chain}) are usable`);
  const projects = new Set(l.mrs.map((m) => m.projectId));
  for (const m of l.mrs) {
    const r = await call('GET', `/projects/${m.projectId}/merge_requests/${m.iid}`);
    if (r.status !== 200 || r.body.title !== m.title) problems.push(`merge request !${m.iid} of project ${m.projectId} acknowledged but GET gives ${r.status}`);
  }
  for (const pid of projects) problems.push(...(await iidProblems(call, pid)));
  return problems;
}

/** Per-project iids are unique and run 1..n without gaps. */
export async function iidProblems(call: Call, projectId: number): Promise<string[]> {
  const iids: number[] = [];
  for (let page = 1; page < 50; page++) {
    const r = await call('GET', `/projects/${projectId}/merge_requests?state=all&per_page=100&page=${page}`);
    if (r.status !== 200) return [`listing merge requests of project ${projectId}: ${r.status}`];
    iids.push(...(r.body as Array<{ iid: number }>).map((m) => m.iid));
    if ((r.body as unknown[]).length < 100) break;
  }
  const sorted = [...iids].sort((a, b) => a - b);
  const out: string[] = [];
  if (new Set(sorted).size !== sorted.length) out.push(`project ${projectId}: duplicate iids ${sorted.join(',')}`);
  if (sorted.some((iid, i) => iid !== i + 1)) out.push(`project ${projectId}: iids not gap-free: ${sorted.join(',')}`);
  return out;
}
