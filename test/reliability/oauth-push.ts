// The OAuth and git-push parts of the crash workload, with their ledgers: authorization codes
// redeemed, tokens refreshed (each family refreshed from one place at a time, as docs/oauth.md asks
// of clients), and new commits and branches pushed with the real git CLI over HTTP. The checks run
// after the last restart: what was acknowledged is there, what was consumed stays consumed.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, csrfFrom } from '../oauth/helpers.js';
import { jsonOrUndefined, ROOT_TOKEN } from './processes.js';
import { note, type Call, type Ledger } from './workload.js';

const REDIRECT_URI = 'https://reliability.example/cb';

// ---------------------------------------------------------------- OAuth

interface Pair {
  access: string;
  refresh: string;
  /** The refresh of this pair got a 200: its refresh token is spent and its access token revoked. */
  spent: boolean;
}

interface Family {
  pairs: Pair[];
  /**
   * live: the last pair is current; revoked: a concurrent double refresh ended the family (the
   * documented strict policy); unknown: a refresh got no answer, so which pair is current is unknown.
   */
  fate: 'live' | 'revoked' | 'unknown';
  busy: boolean;
}

export interface OAuthLedger {
  base: string;
  app: { uid: string; secret: string };
  agent: Agent;
  /** The user who signed in and owns the tokens. */
  userId: number;
  families: Family[];
  /** Codes whose redemption got a 200 (must never redeem again), and those that got no answer. */
  redeemed: string[];
  unknownCodes: string[];
  refreshes: number;
}

interface Answer {
  status: number;
  body: any;
  text: string;
  location: string | null;
}

async function send(url: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Answer> {
  try {
    const r = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(60_000), ...init });
    const text = await r.text();
    const body = jsonOrUndefined(text);
    return { status: r.status, body, text, location: r.headers.get('location') };
  } catch (err) {
    return { status: 0, body: undefined, text: String((err as Error).message), location: null };
  }
}

function tokenRequest(o: OAuthLedger, form: Record<string, string>): Promise<Answer> {
  const body = new URLSearchParams({ client_id: o.app.uid, client_secret: o.app.secret, ...form }).toString();
  return send(`${o.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
}

function apiUser(o: OAuthLedger, access: string): Promise<Answer> {
  return send(`${o.base}/api/v4/user`, { headers: { authorization: `Bearer ${access}` } });
}

/**
 * A trusted application (no consent page) and a signed-in browser session of a new user: codes then
 * come straight from GET /oauth/authorize, as for a user who approved once.
 */
export async function setUpOAuth(call: Call, base: string, username: string): Promise<OAuthLedger> {
  const password = 'password-1234-rel';
  const u = await call('POST', '/users', { json: { username, email: `${username}@example.com`, name: username, password } });
  if (u.status !== 201) throw new Error(`oauth user: ${u.status} ${u.text}`);
  const app = await call('POST', '/applications', { json: { name: 'reliability', redirect_uri: REDIRECT_URI, scopes: 'api read_user', trusted: true, confidential: true } });
  if (app.status !== 201) throw new Error(`oauth application: ${app.status} ${app.text}`);
  const agent = new Agent(base);
  const page = await agent.get('/users/sign_in');
  const signIn = await agent.post('/users/sign_in', { authenticity_token: csrfFrom(page.text), login: username, password, redirect_to: '/' });
  if (signIn.status !== 303) throw new Error(`sign in: ${signIn.status}`);
  return { base, app: { uid: app.body.application_id, secret: app.body.secret }, agent, userId: u.body.id, families: [], redeemed: [], unknownCodes: [], refreshes: 0 };
}

/**
 * Sign-in session → code → token pair: a new family. `twice` redeems the code twice at once: one
 * wins, and the loser's reuse revokes what the winner got (docs/oauth.md, strict policy).
 */
export async function codeOp(o: OAuthLedger, l: Ledger, twice = false): Promise<void> {
  const q = new URLSearchParams({ client_id: o.app.uid, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api read_user', state: 'rel' });
  let page;
  try {
    page = await o.agent.get(`/oauth/authorize?${q}`);
  } catch {
    return; // the server went away: no code was handed out
  }
  note(l, 'GET /oauth/authorize', { status: page.status, text: page.text });
  if (page.status !== 302 || !page.location) return;
  const location = new URL(page.location, o.base);
  if (!location.href.startsWith(REDIRECT_URI)) {
    // The session was acknowledged at sign-in; a restart must not end it.
    l.errors.push(`GET /oauth/authorize -> ${page.status} to ${page.location} (session lost?)`);
    return;
  }
  const code = location.searchParams.get('code')!;
  const answers = await Promise.all(Array.from({ length: twice ? 2 : 1 }, () => tokenRequest(o, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI })));
  for (const a of answers) note(l, 'POST /oauth/token (authorization_code)', a);
  for (const a of answers) if (a.status !== 0 && a.status !== 200 && !(twice && a.status === 400 && a.body?.error === 'invalid_grant')) l.errors.push(`a fresh code was refused: ${a.status} ${a.text.slice(0, 200)}`);
  const wins = answers.filter((a) => a.status === 200);
  const unanswered = answers.some((a) => a.status === 0);
  if (wins.length > 1) l.errors.push(`one code was redeemed ${wins.length} times by concurrent requests`);
  if (twice && !wins.length && !unanswered) l.errors.push('neither of two redemptions of a fresh code succeeded');
  if (wins.length) {
    o.redeemed.push(code);
    const fate = !twice ? 'live' : unanswered ? 'unknown' : 'revoked';
    o.families.push({ pairs: [{ access: wins[0].body.access_token, refresh: wins[0].body.refresh_token, spent: false }], fate, busy: false });
  } else if (unanswered) o.unknownCodes.push(code);
}

/** Refreshes the current pair of a live family; `twice` sends the same refresh token twice at once. */
export async function refreshOp(o: OAuthLedger, l: Ledger, twice = false): Promise<void> {
  const idle = o.families.filter((f) => f.fate === 'live' && !f.busy);
  if (!idle.length) return;
  const f = idle[Math.floor(Math.random() * idle.length)];
  const current = f.pairs[f.pairs.length - 1];
  f.busy = true;
  try {
    const answers = await Promise.all(Array.from({ length: twice ? 2 : 1 }, () => tokenRequest(o, { grant_type: 'refresh_token', refresh_token: current.refresh })));
    const wins = answers.filter((a) => a.status === 200);
    for (const a of answers) note(l, 'POST /oauth/token (refresh_token)', a);
    for (const a of answers) if (a.status !== 0 && a.status !== 200 && !(twice && a.status === 400 && a.body?.error === 'invalid_grant')) l.errors.push(`refresh of a live family -> ${a.status} ${a.text.slice(0, 200)}`);
    if (wins.length > 1) l.errors.push(`one refresh token was redeemed ${wins.length} times by concurrent requests`);
    if (twice && !wins.length && answers.every((a) => a.status !== 0)) l.errors.push('neither of two refreshes of a live refresh token succeeded');
    if (wins.length) {
      o.refreshes++;
      current.spent = true;
      f.pairs.push({ access: wins[0].body.access_token, refresh: wins[0].body.refresh_token, spent: false });
    }
    if (answers.some((a) => a.status === 0)) f.fate = 'unknown';
    // Both answered: one winner, and the loser's reuse revoked the family (docs/oauth.md, strict policy).
    else if (twice) f.fate = 'revoked';
  } finally {
    f.busy = false;
  }
}

/** The access token of an idle live family, held (busy) until `release`: a refresh must not revoke it meanwhile. */
export function borrowAccessToken(o: OAuthLedger): { token: string; release(): void } | null {
  const idle = o.families.filter((f) => f.fate === 'live' && !f.busy);
  if (!idle.length) return null;
  const f = idle[Math.floor(Math.random() * idle.length)];
  f.busy = true;
  return { token: f.pairs[f.pairs.length - 1].access, release: () => void (f.busy = false) };
}

/**
 * After the last restart. First what must work (current access tokens, current refresh tokens),
 * then what must not (spent access tokens, spent refresh tokens, redeemed codes): reusing a spent
 * refresh token revokes its family by design, so the positive checks come first.
 */
export async function verifyOAuth(o: OAuthLedger): Promise<string[]> {
  const problems: string[] = [];
  const latest = new Map<Family, Pair>();
  for (const [i, f] of o.families.entries()) {
    const statuses = [];
    for (const p of f.pairs) statuses.push((await apiUser(o, p.access)).status);
    const usable = statuses.filter((s) => s === 200).length;
    if (f.fate === 'live') {
      if (statuses[statuses.length - 1] !== 200) problems.push(`family ${i}: the current access token (acknowledged) answers ${statuses[statuses.length - 1]}`);
      statuses.slice(0, -1).forEach((s, j) => s !== 401 && problems.push(`family ${i}: access token ${j}, superseded by an acknowledged refresh, answers ${s}`));
    } else if (f.fate === 'revoked') {
      if (usable) problems.push(`family ${i}: revoked by a concurrent reuse but ${usable} access tokens work`);
    } else {
      statuses.slice(0, -1).forEach((s, j) => s !== 401 && problems.push(`family ${i}: access token ${j}, superseded by an acknowledged refresh, answers ${s}`));
      if (usable > 1) problems.push(`family ${i}: ${usable} access tokens of one family work`);
    }
  }
  // The current refresh token of each live family still refreshes once.
  for (const [i, f] of o.families.entries()) {
    if (f.fate !== 'live') continue;
    const current = f.pairs[f.pairs.length - 1];
    const r = await tokenRequest(o, { grant_type: 'refresh_token', refresh_token: current.refresh });
    if (r.status !== 200) {
      problems.push(`family ${i}: the current refresh token (acknowledged) gives ${r.status} ${r.text.slice(0, 200)}`);
      continue;
    }
    current.spent = true;
    const next: Pair = { access: r.body.access_token, refresh: r.body.refresh_token, spent: false };
    f.pairs.push(next);
    latest.set(f, next);
    const use = await apiUser(o, next.access);
    if (use.status !== 200) problems.push(`family ${i}: a fresh access token answers ${use.status}`);
  }
  // No refresh token is good twice.
  for (const [i, f] of o.families.entries()) {
    for (const [j, p] of f.pairs.entries()) {
      if (!p.spent && f.fate !== 'revoked') continue;
      const r = await tokenRequest(o, { grant_type: 'refresh_token', refresh_token: p.refresh });
      if (r.status !== 400 || r.body?.error !== 'invalid_grant') problems.push(`family ${i}: refresh token ${j} (already used) gives ${r.status} ${r.text.slice(0, 120)}`);
    }
    // Reuse revokes the family: the pair issued just above stops working.
    const next = latest.get(f);
    if (next) {
      const use = await apiUser(o, next.access);
      if (use.status !== 401) problems.push(`family ${i}: after a refresh token reuse the family's access token still answers ${use.status}`);
    }
  }
  // No code redeems twice.
  for (const code of o.redeemed) {
    const r = await tokenRequest(o, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    if (r.status !== 400 || r.body?.error !== 'invalid_grant') problems.push(`a redeemed code redeems again: ${r.status} ${r.text.slice(0, 120)}`);
  }
  for (const code of o.unknownCodes) {
    const r = await tokenRequest(o, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    if (r.status !== 200 && !(r.status === 400 && r.body?.error === 'invalid_grant')) problems.push(`a code whose redemption got no answer gives ${r.status} ${r.text.slice(0, 120)}`);
  }
  return problems;
}

// ---------------------------------------------------------------- pushes

const GIT_ENV = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Reliability',
  GIT_AUTHOR_EMAIL: 'reliability@example.com',
  GIT_COMMITTER_NAME: 'Reliability',
  GIT_COMMITTER_EMAIL: 'reliability@example.com',
};

function git(cwd: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('git', args, { cwd, env: GIT_ENV, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code as number) || 1 : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

async function gitOk(cwd: string, args: string[], input?: string): Promise<string> {
  const r = await git(cwd, args, input);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

interface PushedBranch {
  name: string;
  /** The sha git last reported pushed, or null if no push of the branch was reported. */
  acked: string | null;
  /** After a push git did not report as done: the sha it tried (the ref may hold either). */
  attempted: string | null;
  busy: boolean;
}

export interface PushLedger {
  base: string;
  projectId: number;
  path: string;
  local: string;
  root: string;
  branches: PushedBranch[];
  pushes: number;
  failed: number;
  /** git's words for the failed pushes (for the summary). */
  failures: string[];
  serial: number;
}

/** A project to push to (the OAuth user a Developer of it) and a local repository holding its first commit. */
export async function setUpPushes(call: Call, base: string, name: string, o: OAuthLedger): Promise<PushLedger> {
  const p = await call('POST', '/projects', { json: { name, initialize_with_readme: true } });
  if (p.status !== 201) throw new Error(`push project: ${p.status} ${p.text}`);
  const m = await call('POST', `/projects/${p.body.id}/members`, { json: { user_id: o.userId, access_level: 30 } });
  if (m.status !== 201) throw new Error(`push project member: ${m.status} ${m.text}`);
  const root = mkdtempSync(join(tmpdir(), 'lw-rel-push-'));
  const local = join(root, 'local');
  await gitOk(root, ['init', '-q', '--bare', local]);
  const l: PushLedger = { base, projectId: p.body.id, path: p.body.path_with_namespace, local, root, branches: [], pushes: 0, failed: 0, failures: [], serial: 0 };
  const basic = Buffer.from(`root:${ROOT_TOKEN}`).toString('base64');
  await gitOk(local, ['-c', `http.extraHeader=Authorization: Basic ${basic}`, 'fetch', '-q', `${base}/${l.path}.git`, 'main:refs/heads/main']);
  return l;
}

/** A new commit (a file of its own) on top of `parent`, made with plumbing so concurrent workers share the local repository. */
async function newCommit(p: PushLedger, parent: string, name: string): Promise<string> {
  const file = `${name}-${++p.serial}.txt`;
  const blob = await gitOk(p.local, ['hash-object', '-w', '--stdin'], `${file} ${Date.now()} ${Math.random()}\n`);
  const base = await gitOk(p.local, ['ls-tree', parent]);
  const tree = await gitOk(p.local, ['mktree'], `${base}\n100644 blob ${blob}\t${file}\n`);
  return gitOk(p.local, ['commit-tree', tree, '-p', parent, '-m', `push ${name}`]);
}

/**
 * Pushes a new branch or a fast-forward of a branch pushed before, authenticated by the root PAT
 * or, when `oauth` lends one, by an OAuth access token (user oauth2).
 */
export async function pushOp(p: PushLedger, l: Ledger, o: OAuthLedger | null): Promise<void> {
  const settled = p.branches.filter((b) => b.acked && !b.attempted && !b.busy);
  let branch: PushedBranch;
  if (settled.length && Math.random() < 0.4) branch = settled[Math.floor(Math.random() * settled.length)];
  else {
    branch = { name: `push-${++p.serial}-${Math.random().toString(36).slice(2, 6)}`, acked: null, attempted: null, busy: false };
    p.branches.push(branch);
  }
  branch.busy = true;
  const lent = o && Math.random() < 0.5 ? borrowAccessToken(o) : null;
  try {
    const parent = branch.acked ?? (await gitOk(p.local, ['rev-parse', 'refs/heads/main']));
    const sha = await newCommit(p, parent, branch.name);
    // Credentials sent up front: without them git first gets a 401, and when the server then dies
    // mid-push git reports "Authentication failed", which would hide a real refusal among the kills.
    const basic = Buffer.from(lent ? `oauth2:${lent.token}` : `root:${ROOT_TOKEN}`).toString('base64');
    const r = await git(p.local, ['-c', `http.extraHeader=Authorization: Basic ${basic}`, 'push', '-q', '--porcelain', `${p.base}/${p.path}.git`, `${sha}:refs/heads/${branch.name}`]);
    p.pushes++;
    const key = 'git push';
    if (r.code === 0) {
      l.statuses[key] = (l.statuses[key] ?? 0) + 1;
      branch.acked = sha;
    } else {
      p.failed++;
      l.statuses[`${key} failed`] = (l.statuses[`${key} failed`] ?? 0) + 1;
      branch.attempted = sha;
      p.failures.push((r.stderr + r.stdout).trim().slice(0, 200));
      // A kill shows as a refused or reset connection; an answer refusing the push is a finding.
      if (/\b(401|403|404|500|502|503)\b|Authentication failed|could not read Username|rejected|not allowed|not found/i.test(r.stderr + r.stdout)) {
        const check = lent ? await apiUserAt(p.base, lent.token) : null;
        l.errors.push(`git push ${branch.name} as ${lent ? `oauth2 (the token now answers ${check})` : 'root'} -> ${(r.stderr + r.stdout).trim().slice(0, 300)}`);
      }
    }
  } finally {
    lent?.release();
    branch.busy = false;
  }
}

async function apiUserAt(base: string, access: string): Promise<number> {
  return (await send(`${base}/api/v4/user`, { headers: { authorization: `Bearer ${access}` } })).status;
}

function refOnDisk(repo: string, name: string): string | null {
  const r = spawnSync('git', ['--git-dir', repo, 'rev-parse', '--verify', '-q', `refs/heads/${name}`], { env: GIT_ENV });
  return r.status === 0 ? r.stdout.toString().trim() : null;
}

/** Every push git reported done has its ref at the pushed sha, on disk and through the API. */
export async function verifyPushes(call: Call, p: PushLedger, repoPath: string): Promise<string[]> {
  const problems: string[] = [];
  for (const b of p.branches) {
    const onDisk = refOnDisk(repoPath, b.name);
    const allowed = b.attempted ? [b.acked, b.attempted] : [b.acked];
    if (!allowed.includes(onDisk)) problems.push(`branch ${b.name}: ${onDisk ?? 'missing'} on disk, pushed ${b.acked ?? 'nothing'}${b.attempted ? ` (or ${b.attempted}, unanswered)` : ''}`);
    if (!b.acked) continue;
    const api = await call('GET', `/projects/${p.projectId}/repository/branches/${encodeURIComponent(b.name)}`);
    if (api.status !== 200 || !allowed.includes(api.body?.commit?.id)) problems.push(`branch ${b.name}: API gives ${api.status} ${api.body?.commit?.id ?? ''}, pushed ${b.acked}`);
  }
  return problems;
}

/** `git fsck --strict` of a bare repository: empty when it is sound. */
export function fsckProblems(repo: string): string[] {
  const r = spawnSync('git', ['--git-dir', repo, 'fsck', '--strict', '--no-progress'], { env: GIT_ENV });
  const out = `${r.stdout}${r.stderr}`.split('\n').filter((line) => line && !line.startsWith('dangling '));
  return r.status === 0 && out.length === 0 ? [] : [`git fsck ${repo} (exit ${r.status}): ${out.join('; ').slice(0, 600)}`];
}

export function cleanUpPushes(p: PushLedger | null): void {
  if (p) rmSync(p.root, { recursive: true, force: true });
}
