// Project webhooks (GitLab's project hooks API) against a real HTTP receiver: the API, the events
// each writer sends (push through the API and through `git push`, tag push, merge requests, notes,
// releases), GitLab's headers, the branch filter, test deliveries, the delivery log and resends,
// URL variables and custom headers, and secrets kept out of responses, logs and the database.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encryptValue } from '../../src/services/webhooks/crypto.js';
import { deliveriesSettled } from '../../src/services/webhooks/dispatch.js';
import { hooksChanged } from '../../src/services/webhooks/hooks.js';
import { git } from '../helpers/git.js';
import { queryOutside, until } from '../helpers/outside.js';
import { startServer, type TestServer } from '../helpers/server.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
}

let s: TestServer;
let receiver: Server;
let hookBase: string;
let received: Received[] = [];
/** What the receiver answers next (status and body). */
let answer = { status: 200, body: '{"ok":true}' };
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let pid: number;

function startReceiver(): Promise<void> {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* keep text */
      }
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(answer.status, { 'content-type': 'application/json', 'x-echo': req.url! });
      res.end(answer.body);
    });
  });
  return new Promise((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
}

async function settled(): Promise<void> {
  await deliveriesSettled(s.app.lw);
}

async function addHook(json: Record<string, unknown>, projectId = pid) {
  const r = await s.request('POST', `/projects/${projectId}/hooks`, { token: owner.token, json: { url: `${hookBase}/hook`, ...json } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function removeAllHooks(projectId = pid) {
  const list = await s.request('GET', `/projects/${projectId}/hooks`, { token: owner.token });
  for (const h of list.body) await s.request('DELETE', `/projects/${projectId}/hooks/${h.id}`, { token: owner.token });
}

function events(kind: string): Received[] {
  return received.filter((r) => r.headers['x-gitlab-event'] === kind);
}

async function commit(branch: string, file: string, extra: Record<string, unknown> = {}) {
  const r = await s.request('POST', `/projects/${pid}/repository/commits`, {
    token: owner.token,
    json: { branch, commit_message: `add ${file}\n\nbody of ${file}`, actions: [{ action: 'create', file_path: file, content: file }], ...extra },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** A clone of the project as its owner, handed to `fn` and removed afterwards. */
async function withClone(fn: (dir: string) => Promise<void>): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'labwright-hookpush-'));
  try {
    const remote = `http://oauth2:${owner.token}@${s.url.replace('http://', '')}/hookowner/hooked.git`;
    await git(work, 'clone', '-q', remote, 'repo');
    await fn(join(work, 'repo'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Writes a file in a clone and commits it; the new commit's sha. */
async function commitInClone(dir: string, name: string, content = name, message = `add ${name}`): Promise<string> {
  writeFileSync(join(dir, name), content);
  await git(dir, 'add', name);
  await git(dir, 'commit', '-q', '-m', message);
  return (await git(dir, 'rev-parse', 'HEAD')).trim();
}

beforeAll(async () => {
  await startReceiver();
  const addr = receiver.address();
  hookBase = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  s = await startServer({ LABWRIGHT_WEBHOOK_ALLOW_LOCAL: 'true' });
  owner = await s.createUser('hookowner');
  dev = await s.createUser('hookdev');
  await s.request('PUT', '/user', { token: owner.token, json: {} });
  const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'hooked', initialize_with_readme: true } });
  expect(p.status).toBe(201);
  pid = p.body.id;
  expect((await s.request('POST', `/projects/${pid}/members`, { token: owner.token, json: { user_id: dev.id, access_level: 30 } })).status).toBe(201);
});

afterAll(async () => {
  await s?.close();
  await new Promise((r) => receiver?.close(r));
});

beforeEach(async () => {
  // Every test starts without hooks, whatever the one before left.
  await removeAllHooks();
  await settled();
  received = [];
  answer = { status: 200, body: '{"ok":true}' };
});

describe('the hooks API', () => {
  it('creates a hook (201) with GitLab\'s entity: push events on by default, no token shown', async () => {
    const h = await addHook({ token: 'sekrit-token', name: 'ci', description: 'tells CI', merge_requests_events: true, url_variables: [{ key: 'pathvar', value: 'x' }], custom_headers: [{ key: 'X-Custom', value: 'custom-secret' }] });
    expect(Object.keys(h)).toEqual([
      'id', 'url', 'name', 'description', 'created_at', 'push_events', 'tag_push_events', 'merge_requests_events', 'repository_update_events',
      'enable_ssl_verification', 'alert_status', 'disabled_until', 'url_variables', 'push_events_branch_filter', 'branch_filter_strategy',
      'custom_webhook_template', 'custom_headers', 'project_id', 'issues_events', 'confidential_issues_events', 'note_events',
      'confidential_note_events', 'pipeline_events', 'wiki_page_events', 'deployment_events', 'feature_flag_events', 'job_events',
      'releases_events', 'milestone_events', 'emoji_events', 'resource_access_token_events', 'resource_deploy_token_events', 'vulnerability_events',
    ]);
    expect(h).toMatchObject({
      url: `${hookBase}/hook`, name: 'ci', description: 'tells CI', push_events: true, tag_push_events: false, merge_requests_events: true,
      repository_update_events: false, enable_ssl_verification: true, alert_status: 'executable', disabled_until: null,
      url_variables: [{ key: 'pathvar' }], custom_headers: [{ key: 'X-Custom' }], push_events_branch_filter: null, branch_filter_strategy: 'wildcard',
      project_id: pid, confidential_note_events: null, note_events: false,
    });
    expect(h.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(JSON.stringify(h)).not.toContain('sekrit-token');
    expect(JSON.stringify(h)).not.toContain('custom-secret');
    const list = await s.request('GET', `/projects/${pid}/hooks`, { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).not.toHaveProperty('url_variables');
    expect(list.body[0]).not.toHaveProperty('custom_headers');
    const one = await s.request('GET', `/projects/${pid}/hooks/${h.id}`, { token: owner.token });
    expect(one.body).toEqual(h);
    await removeAllHooks();
  });

  it('keeps the token, URL, variables and headers encrypted in the database', async () => {
    const h = await addHook({ url: hookBase.replace('http://', 'http://user:pass-secret-123@') + '/creds', token: 'db-token-456', custom_headers: [{ key: 'X-Api-Key', value: 'header-value-789' }] });
    // Credentials in the URL are shown to Maintainers as saved (GitLab's entity; clients send the
    // URL back on every edit), masked in the delivery log, and sent as Basic auth.
    expect(h.url).toBe(hookBase.replace('http://', 'http://user:pass-secret-123@') + '/creds');
    const edited = await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { url: h.url, note_events: true } });
    expect(edited.body.url).toBe(h.url);
    expect((await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/push_events`, { token: owner.token })).status).toBe(201);
    expect(received[0]!.headers.authorization).toBe(`Basic ${Buffer.from('user:pass-secret-123').toString('base64')}`);
    // The same URL sent back kept the token.
    expect(received[0]!.headers['x-gitlab-token']).toBe('db-token-456');
    const logs = await s.request('GET', `/projects/${pid}/hooks/${h.id}/events`, { token: owner.token });
    expect(logs.body[0].url).toBe(hookBase.replace('http://', 'http://*****:*****@') + '/creds');
    expect(JSON.stringify(logs.body)).not.toContain('pass-secret-123');
    const rows = await queryOutside({ dataDir: s.dataDir, databaseUrl: s.app.lw.config.databaseUrl }, 'select * from web_hooks where id = ?', [h.id]);
    const dump = JSON.stringify(rows);
    expect(rows).toHaveLength(1);
    for (const secret of ['db-token-456', 'header-value-789', 'pass-secret-123']) expect(dump).not.toContain(secret);
    await removeAllHooks();
  });

  it('updates: flags and name change, a new URL drops the token unless one comes with it', async () => {
    const h = await addHook({ token: 'first' });
    const up = await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { tag_push_events: true, name: 'renamed' } });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ tag_push_events: true, push_events: true, name: 'renamed' });
    await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { url: `${hookBase}/moved` } });
    await commit('main', 'after-move.txt');
    await settled();
    const push = events('Push Hook');
    expect(push).toHaveLength(1);
    expect(push[0]!.url).toBe('/moved');
    expect(push[0]!.headers['x-gitlab-token']).toBeUndefined();
    expect((await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: {} })).body).toEqual({ error: 'No parameters provided' });
    await removeAllHooks();
  });

  it('deletes (204, empty body); an unknown hook is GitLab\'s 404', async () => {
    const h = await addHook({});
    const del = await s.request('DELETE', `/projects/${pid}/hooks/${h.id}`, { token: owner.token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const gone = await s.request('GET', `/projects/${pid}/hooks/${h.id}`, { token: owner.token });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: '404 Not found' });
    expect((await s.request('GET', `/projects/${pid}/hooks/abc`, { token: owner.token })).body).toEqual({ error: 'hook_id is invalid' });
    // If-Unmodified-Since older than the hook's last change: 412, the hook stays.
    const kept = await addHook({});
    const stale = await s.request('DELETE', `/projects/${pid}/hooks/${kept.id}`, { token: owner.token, headers: { 'if-unmodified-since': new Date(Date.now() - 3600_000).toUTCString() } });
    expect(stale.status).toBe(412);
    expect((await s.request('GET', `/projects/${pid}/hooks/${kept.id}`, { token: owner.token })).status).toBe(200);
  });

  it('is for Maintainers: a Developer gets 403, a stranger 404, no token 401', async () => {
    expect((await s.request('GET', `/projects/${pid}/hooks`, { token: dev.token })).status).toBe(403);
    expect((await s.request('POST', `/projects/${pid}/hooks`, { token: dev.token, json: { url: `${hookBase}/x` } })).status).toBe(403);
    const stranger = await s.createUser('hookstranger');
    expect((await s.request('GET', `/projects/${pid}/hooks`, { token: stranger.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${pid}/hooks`, { token: null })).status).toBe(401);
  });

  it('refuses bad input with GitLab\'s errors and saves nothing', async () => {
    const bad = async (json: Record<string, unknown>) => s.request('POST', `/projects/${pid}/hooks`, { token: owner.token, json });
    expect((await bad({})).body).toEqual({ message: '400 Bad request - "url" not given' });
    for (const url of ['ftp://example.com/x', 'not a url', 'http://', 'javascript:alert(1)', `${hookBase}/{missing}`, 'http:{slashes}u:p@example.com/']) {
      const r = await bad({ url });
      expect(r.status, url).toBe(422);
      expect(r.body).toEqual({ error: 'Invalid url given' });
    }
    expect((await bad({ url: `${hookBase}/x`, push_events_branch_filter: 'bad..name' })).body).toEqual({ error: 'Invalid branch filter given' });
    expect((await bad({ url: `${hookBase}/x`, push_events_branch_filter: '(unclosed', branch_filter_strategy: 'regex' })).body).toEqual({ error: 'Invalid branch filter given' });
    expect((await bad({ url: `${hookBase}/x`, branch_filter_strategy: 'fuzzy' })).body).toEqual({ error: 'branch_filter_strategy does not have a valid value' });
    expect((await bad({ url: `${hookBase}/x`, token: 'a\nb' })).body).toEqual({ error: 'Token is invalid' });
    expect((await bad({ url: `${hookBase}/x`, custom_headers: [{ key: 'bad key', value: 'v' }] })).body).toEqual({ error: 'Custom headers must be a valid json schema' });
    expect((await bad({ url: `${hookBase}/x`, url_variables: [{ key: 'k' }] })).body).toEqual({ message: '400 Bad request - "url_variables[value]" not given' });
    expect((await bad({ url: `${hookBase}/x`, push_events: 'maybe' })).status).toBe(400);
    const list = await s.request('GET', `/projects/${pid}/hooks`, { token: owner.token });
    expect(list.body).toEqual([]);
  });

  it('after the instance secret changed: shows the hook, refuses edits that need its old secrets with a 422, takes a new URL', async () => {
    const h = await addHook({ url: `${hookBase}/sealed`, token: 'old-token', custom_headers: [{ key: 'X-A', value: 'a' }] });
    // The columns as another instance secret would have sealed them.
    await s.app.lw.db.updateTable('web_hooks').set({
      encrypted_url: encryptValue('another-secret', `${hookBase}/sealed`),
      encrypted_token: encryptValue('another-secret', 'old-token'),
      encrypted_custom_headers: encryptValue('another-secret', '{"X-A":"a"}'),
    }).where('id', '=', h.id).execute();
    await s.settle();
    hooksChanged();
    const shown = await s.request('GET', `/projects/${pid}/hooks/${h.id}`, { token: owner.token });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ url: `${hookBase}/sealed`, custom_headers: [] });
    const unreadable = { error: "The hook's URL and secrets were saved under another instance secret: save the hook again with its url (and token, URL variables and custom headers)" };
    expect((await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { name: 'x' } })).body).toEqual(unreadable);
    expect((await s.request('PUT', `/projects/${pid}/hooks/${h.id}/custom_headers/X-B`, { token: owner.token, json: { value: 'v' } })).body).toEqual(unreadable);
    const test = await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/push_events`, { token: s.rootToken });
    expect(test.status).toBe(422);
    const saved = await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { url: `${hookBase}/resealed`, token: 'new-token' } });
    expect(saved.status).toBe(200);
    await commit('main', 'resealed.txt');
    await settled();
    expect(received.map((r) => [r.url, r.headers['x-gitlab-token']])).toEqual([['/resealed', 'new-token']]);
  });

  it('keeps an oversized payload out of the log (`{"oversize": true}`, not resent) and bounds what a template may render', async () => {
    const h = await addHook({ note_events: true, push_events: false });
    await commit('big-src', 'big.txt', { start_branch: 'main' });
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: owner.token, json: { source_branch: 'big-src', target_branch: 'main', title: 'Big', description: 'x'.repeat(100_000) } });
    await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: owner.token, json: { body: 'hi' } });
    await settled();
    expect(received[0]!.body.merge_request.description).toHaveLength(100_000);
    const logs = await s.request('GET', `/projects/${pid}/hooks/${h.id}/events`, { token: owner.token });
    expect(logs.body[0].request_data).toEqual({ oversize: true });
    const resend = await s.request('POST', `/projects/${pid}/hooks/${h.id}/events/${logs.body[0].id}/resend`, { token: s.rootToken });
    expect(resend.body).toEqual({ message: 'The payload of this log entry was too large to be kept, and it cannot be retried' });
    // A template repeating the description would render 1.2 MB: refused before it is built.
    await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { custom_webhook_template: `[${Array(12).fill('"{{merge_request.description}}"').join(',')}]` } });
    received = [];
    await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: owner.token, json: { body: 'again' } });
    await settled();
    expect(received).toEqual([]);
    const failed = await s.request('GET', `/projects/${pid}/hooks/${h.id}/events`, { token: owner.token });
    expect(failed.body[0]).toMatchObject({ response_status: 'internal error' });
  });

  it('caps a project at 100 hooks (GitLab\'s plan limit), also against simultaneous creations', async () => {
    const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'many-hooks' } });
    for (let i = 0; i < 95; i++) await addHook({ url: `${hookBase}/h${i}` }, p.body.id);
    const racing = await Promise.all(Array.from({ length: 12 }, (_, i) => s.request('POST', `/projects/${p.body.id}/hooks`, { token: owner.token, json: { url: `${hookBase}/r${i}` } })));
    expect(racing.filter((r) => r.status === 201)).toHaveLength(5);
    const over = await s.request('POST', `/projects/${p.body.id}/hooks`, { token: owner.token, json: { url: `${hookBase}/h100` } });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({ error: 'Maximum number of project hooks (100) exceeded' });
    const page = await s.request('GET', `/projects/${p.body.id}/hooks`, { token: owner.token, query: { per_page: 100 } });
    expect(page.body).toHaveLength(100);
    expect(page.headers.get('x-total')).toBe('100');
    // Deleting the project deletes its hooks.
    expect((await s.request('DELETE', `/projects/${p.body.id}`, { token: owner.token })).status).toBe(202);
  });
});

describe('push events', () => {
  it('a commit through the API sends GitLab\'s Push Hook with its headers and payload', async () => {
    await addHook({ token: 'hook-token' });
    const before = (await s.request('GET', `/projects/${pid}/repository/branches/main`, { token: owner.token })).body.commit.id;
    const c = await commit('main', 'pushed.txt');
    await settled();
    const push = events('Push Hook');
    expect(push).toHaveLength(1);
    const { headers, body, method } = push[0]!;
    expect(method).toBe('POST');
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toMatch(/^GitLab\/\d+\.\d+/);
    expect(headers['x-gitlab-token']).toBe('hook-token');
    expect(headers['x-gitlab-instance']).toBe(s.url);
    expect(headers['x-gitlab-webhook-uuid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(headers['x-gitlab-event-uuid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys(body)).toEqual([
      'object_kind', 'event_name', 'before', 'after', 'ref', 'ref_protected', 'checkout_sha', 'message', 'user_id', 'user_name', 'user_username',
      'user_email', 'user_avatar', 'project_id', 'project', 'commits', 'total_commits_count', 'push_options', 'repository',
    ]);
    expect(body).toMatchObject({
      object_kind: 'push', event_name: 'push', before, after: c.id, ref: 'refs/heads/main', ref_protected: true, checkout_sha: c.id,
      user_id: owner.id, user_username: 'hookowner', project_id: pid, total_commits_count: 1, push_options: {},
    });
    expect(body.project).toMatchObject({ id: pid, name: 'hooked', path_with_namespace: 'hookowner/hooked', default_branch: 'main', visibility_level: 0, web_url: `${s.url}/hookowner/hooked`, git_http_url: `${s.url}/hookowner/hooked.git` });
    expect(body.repository).toEqual({
      name: 'hooked', url: body.project.git_ssh_url, description: body.project.description, homepage: `${s.url}/hookowner/hooked`,
      git_http_url: `${s.url}/hookowner/hooked.git`, git_ssh_url: body.project.git_ssh_url, visibility_level: 0,
    });
    expect(body.commits).toEqual([
      {
        id: c.id, message: 'add pushed.txt\n\nbody of pushed.txt', title: 'add pushed.txt', timestamp: expect.any(String), url: `${s.url}/hookowner/hooked/-/commit/${c.id}`,
        author: { name: expect.any(String), email: expect.any(String) }, added: ['pushed.txt'], modified: [], removed: [],
      },
    ]);
    await removeAllHooks();
  });

  it('a real `git push` of several commits sends one event listing them, oldest first; creating and deleting a branch send theirs', async () => {
    await addHook({});
    await withClone(async (dir) => {
      const shas: string[] = [];
      for (const name of ['one.txt', 'two.txt', 'three.txt']) shas.push(await commitInClone(dir, name));
      shas.push(await commitInClone(dir, 'one.txt', 'changed', 'change one'));
      await git(dir, 'push', '-q', 'origin', 'main');
      await git(dir, 'push', '-q', 'origin', 'main:feature/x');
      await git(dir, 'push', '-q', 'origin', ':feature/x');
      await until(() => events('Push Hook').length >= 3, 5000);
      await settled();
      const [main, created, deleted] = events('Push Hook').map((e) => e.body);
      expect(main.ref).toBe('refs/heads/main');
      expect(main.total_commits_count).toBe(4);
      expect(main.commits.map((x: any) => x.id)).toEqual(shas);
      expect(main.commits[3]).toMatchObject({ added: [], modified: ['one.txt'], removed: [] });
      expect(created).toMatchObject({ ref: 'refs/heads/feature/x', before: '0'.repeat(40), after: shas[3], total_commits_count: 0, ref_protected: false });
      expect(deleted).toMatchObject({ ref: 'refs/heads/feature/x', before: shas[3], after: '0'.repeat(40), checkout_sha: null, commits: [], total_commits_count: 0 });
    });
  });

  it('lists only the newest 20 commits of a push, oldest first, and counts them all', async () => {
    await addHook({});
    await withClone(async (dir) => {
      const shas: string[] = [];
      for (let i = 0; i < 25; i++) shas.push(await commitInClone(dir, `n${i}.txt`, String(i), `n${i}`));
      await git(dir, 'push', '-q', 'origin', 'main');
      await until(() => events('Push Hook').length >= 1, 5000);
      await settled();
      const [push] = events('Push Hook').map((e) => e.body);
      expect(push.total_commits_count).toBe(25);
      expect(push.commits.map((c: any) => c.id)).toEqual(shas.slice(5));
      expect(push.commits[19].added).toEqual(['n24.txt']);
    });
  });

  it('follows the branch filter: wildcard, regex, all branches; tags are never filtered', async () => {
    const wild = await addHook({ url: `${hookBase}/wild`, push_events_branch_filter: 'release/*', tag_push_events: true });
    await addHook({ url: `${hookBase}/regex`, push_events_branch_filter: '^feat-[0-9]+$', branch_filter_strategy: 'regex' });
    await addHook({ url: `${hookBase}/all`, push_events_branch_filter: 'ignored', branch_filter_strategy: 'all_branches' });
    await commit('release/1.0', 'r.txt', { start_branch: 'main' });
    await commit('feat-12', 'f.txt', { start_branch: 'main' });
    await commit('feat-x', 'g.txt', { start_branch: 'main' });
    expect((await s.request('POST', `/projects/${pid}/repository/tags`, { token: owner.token, json: { tag_name: 'v9.0', ref: 'main', message: 'annotated' } })).status).toBe(201);
    await settled();
    const at = (path: string) => received.filter((r) => r.url === path).map((r) => r.body.ref);
    expect(at('/wild')).toEqual(['refs/heads/release/1.0', 'refs/tags/v9.0']);
    expect(at('/regex')).toEqual(['refs/heads/feat-12']);
    expect(at('/all')).toEqual(['refs/heads/release/1.0', 'refs/heads/feat-12', 'refs/heads/feat-x']);
    const tag = received.find((r) => r.headers['x-gitlab-event'] === 'Tag Push Hook')!.body;
    expect(tag, JSON.stringify(tag)).toMatchObject({ object_kind: 'tag_push', event_name: 'tag_push', ref: 'refs/tags/v9.0', before: '0'.repeat(40), message: 'annotated', total_commits_count: 1 });
    expect(tag.checkout_sha).toBe(tag.commits[0].id);
    const shown = await s.request('GET', `/projects/${pid}/hooks/${wild.id}`, { token: owner.token });
    expect(shown.body).toMatchObject({ push_events_branch_filter: 'release/*', branch_filter_strategy: 'wildcard' });
    await removeAllHooks();
  });
});

describe('merge request, note and release events', () => {
  it('sends open, update (with changes), close, reopen, approval and merge, and the merge\'s push', async () => {
    await addHook({ merge_requests_events: true, push_events: true });
    await commit('mr-src', 'mr.txt', { start_branch: 'main' });
    await settled();
    received = [];
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: owner.token, json: { source_branch: 'mr-src', target_branch: 'main', title: 'Hooked MR', assignee_ids: [dev.id] } });
    expect(mr.status).toBe(201);
    const iid = mr.body.iid;
    await s.request('PUT', `/projects/${pid}/merge_requests/${iid}`, { token: owner.token, json: { title: 'Hooked MR v2', labels: 'bug' } });
    await s.request('PUT', `/projects/${pid}/merge_requests/${iid}`, { token: owner.token, json: { state_event: 'close' } });
    await s.request('PUT', `/projects/${pid}/merge_requests/${iid}`, { token: owner.token, json: { state_event: 'reopen' } });
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${iid}/approve`, { token: dev.token })).status).toBe(201);
    const merged = await s.request('PUT', `/projects/${pid}/merge_requests/${iid}/merge`, { token: owner.token, json: { should_remove_source_branch: true } });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    await settled();
    const mrEvents = events('Merge Request Hook').map((e) => e.body);
    expect(mrEvents.map((e) => e.object_attributes.action)).toEqual(['open', 'update', 'close', 'reopen', 'approved', 'merge']);
    const [open, update, close] = mrEvents;
    expect(Object.keys(open)).toEqual(['object_kind', 'event_type', 'user', 'project', 'object_attributes', 'labels', 'changes', 'repository', 'assignees']);
    expect(open).toMatchObject({ object_kind: 'merge_request', event_type: 'merge_request', changes: {} });
    expect(open.user).toEqual({ id: owner.id, name: expect.any(String), username: 'hookowner', avatar_url: null, email: '[REDACTED]' });
    expect(open.object_attributes).toMatchObject({
      iid, title: 'Hooked MR', state: 'opened', state_id: 1, source_branch: 'mr-src', target_branch: 'main', assignee_ids: [dev.id], assignee_id: dev.id,
      url: `${s.url}/hookowner/hooked/-/merge_requests/${iid}`, work_in_progress: false, draft: false, action: 'open',
    });
    expect(open.object_attributes.last_commit.id).toBe(mr.body.sha);
    expect(open.assignees).toEqual([{ id: dev.id, name: expect.any(String), username: 'hookdev', avatar_url: null, email: '[REDACTED]' }]);
    expect(update.changes.title).toEqual({ previous: 'Hooked MR', current: 'Hooked MR v2' });
    expect(update.changes.labels.previous).toEqual([]);
    expect(update.changes.labels.current).toEqual([expect.objectContaining({ title: 'bug', type: 'ProjectLabel', project_id: pid })]);
    expect(update.labels).toEqual([expect.objectContaining({ title: 'bug' })]);
    expect(close.object_attributes).toMatchObject({ state: 'closed', action: 'close' });
    expect(close.changes.state_id).toEqual({ previous: 1, current: 2 });
    expect(mrEvents[4].user.username).toBe('hookdev');
    expect(mrEvents[5].object_attributes).toMatchObject({ state: 'merged', state_id: 3, action: 'merge', merge_commit_sha: merged.body.merge_commit_sha });
    // The merge moved main and removed the source branch: two pushes.
    const pushes = events('Push Hook').map((e) => e.body);
    expect(pushes.map((p) => [p.ref, p.after === '0'.repeat(40)])).toEqual([['refs/heads/main', false], ['refs/heads/mr-src', true]]);
    expect(pushes[0].after).toBe(merged.body.merge_commit_sha);
    await removeAllHooks();
  });

  it('a push to a merge request\'s source branch sends it an update with oldrev; a rebase too', async () => {
    await commit('oldrev-src', 'o1.txt', { start_branch: 'main' });
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: owner.token, json: { source_branch: 'oldrev-src', target_branch: 'main', title: 'Moving' } });
    await addHook({ merge_requests_events: true, push_events: false });
    const before = mr.body.sha;
    const c = await commit('oldrev-src', 'o2.txt');
    await commit('main', 'o3.txt');
    await settled();
    const updates = events('Merge Request Hook').map((e) => e.body.object_attributes);
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ iid: mr.body.iid, action: 'update', oldrev: before, last_commit: expect.objectContaining({ id: c.id }) });
    expect(Object.keys(updates[0]).slice(-2)).toEqual(['action', 'oldrev']);
    received = [];
    expect((await s.request('PUT', `/projects/${pid}/merge_requests/${mr.body.iid}/rebase`, { token: owner.token })).status).toBe(202);
    await settled();
    const rebased = events('Merge Request Hook').map((e) => e.body.object_attributes);
    expect(rebased.map((a) => [a.action, a.oldrev])).toEqual([['update', c.id]]);
  });

  it('a commit comment sends a Note Hook with the commit', async () => {
    await addHook({ note_events: true, push_events: false });
    const head = (await s.request('GET', `/projects/${pid}/repository/branches/main`, { token: owner.token })).body.commit.id;
    expect((await s.request('POST', `/projects/${pid}/repository/commits/${head}/comments`, { token: dev.token, json: { note: 'nice commit' } })).status).toBe(201);
    await settled();
    const [note] = events('Note Hook').map((e) => e.body);
    expect(note.object_attributes).toMatchObject({ note: 'nice commit', noteable_type: 'Commit', commit_id: head, internal: false });
    expect(note.object_attributes.url).toMatch(new RegExp(`/-/commit/${head}#note_\\d+$`));
    expect(note.commit).toMatchObject({ id: head });
    expect(note).not.toHaveProperty('merge_request');
    const test = await s.request('POST', `/projects/${pid}/hooks/${(await s.request('GET', `/projects/${pid}/hooks`, { token: owner.token })).body[0].id}/test/note_events`, { token: owner.token });
    expect(test.status).toBe(201);
  });

  it('counts the push limit per kind of change: four new tags send none, the branch pushed with them still does', async () => {
    await addHook({ tag_push_events: true });
    await withClone(async (dir) => {
      await commitInClone(dir, 'tags.txt', 'x', 'tagged');
      for (const t of ['t1', 't2', 't3', 't4']) await git(dir, 'tag', t);
      await git(dir, 'push', '-q', 'origin', 'main', 't1', 't2', 't3', 't4');
      await until(() => events('Push Hook').length >= 1, 5000);
      await settled();
      expect(events('Push Hook')).toHaveLength(1);
      expect(events('Tag Push Hook')).toHaveLength(0);
      await git(dir, 'tag', 't5');
      await git(dir, 'push', '-q', 'origin', 't5');
      await until(() => events('Tag Push Hook').length >= 1, 5000);
      const tag = events('Tag Push Hook')[0]!.body;
      expect(tag.commits[0]).toMatchObject({ added: ['tags.txt'], modified: [], removed: [] });
    });
  });

  it('sends note events (create, update) with the merge request; internal notes only to confidential note hooks', async () => {
    await commit('note-src', 'note.txt', { start_branch: 'main' });
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: owner.token, json: { source_branch: 'note-src', target_branch: 'main', title: 'Discussed' } });
    await addHook({ url: `${hookBase}/notes`, note_events: true, push_events: false });
    await addHook({ url: `${hookBase}/confidential`, confidential_note_events: true, push_events: false });
    const note = await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: dev.token, json: { body: 'Looks good, mail me at someone@example.com' } });
    expect(note.status).toBe(201);
    await s.request('PUT', `/projects/${pid}/merge_requests/${mr.body.iid}/notes/${note.body.id}`, { token: dev.token, json: { body: 'Edited' } });
    await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: owner.token, json: { body: 'internal only', internal: true } });
    await settled();
    const plain = received.filter((r) => r.url === '/notes');
    expect(plain.map((r) => [r.headers['x-gitlab-event'], r.body.object_attributes.action])).toEqual([['Note Hook', 'create'], ['Note Hook', 'update']]);
    const created = plain[0]!.body;
    expect(Object.keys(created)).toEqual(['object_kind', 'event_type', 'user', 'project_id', 'project', 'object_attributes', 'repository', 'merge_request']);
    expect(created.object_attributes).toMatchObject({ id: note.body.id, note: 'Looks good, mail me at someone@example.com', noteable_type: 'MergeRequest', system: false, internal: false, url: `${s.url}/hookowner/hooked/-/merge_requests/${mr.body.iid}#note_${note.body.id}` });
    expect(created.merge_request).toMatchObject({ iid: mr.body.iid, title: 'Discussed', state: 'opened' });
    expect(created.merge_request).not.toHaveProperty('action');
    const confidential = received.filter((r) => r.url === '/confidential');
    expect(confidential).toHaveLength(1);
    expect(confidential[0]!.headers['x-gitlab-event']).toBe('Confidential Note Hook');
    expect(confidential[0]!.body).toMatchObject({ event_type: 'confidential_note', object_attributes: { note: 'internal only' } });
    await removeAllHooks();
  });

  it('sends emoji events for awards on merge requests and their notes (award, revoke)', async () => {
    await commit('emoji-src', 'e.txt', { start_branch: 'main' });
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: owner.token, json: { source_branch: 'emoji-src', target_branch: 'main', title: 'Liked' } });
    const note = await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: owner.token, json: { body: 'like me' } });
    const h = await addHook({ emoji_events: true, push_events: false });
    const award = await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/award_emoji`, { token: dev.token, json: { name: 'thumbsup' } });
    expect(award.status).toBe(201);
    await s.request('DELETE', `/projects/${pid}/merge_requests/${mr.body.iid}/award_emoji/${award.body.id}`, { token: dev.token });
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes/${note.body.id}/award_emoji`, { token: dev.token, json: { name: 'tada' } })).status).toBe(201);
    await settled();
    const emoji = events('Emoji Hook').map((e) => e.body);
    expect(emoji.map((e) => [e.event_type, e.object_attributes.name, e.object_attributes.awardable_type])).toEqual([['award', 'thumbsup', 'MergeRequest'], ['revoke', 'thumbsup', 'MergeRequest'], ['award', 'tada', 'Note']]);
    expect(Object.keys(emoji[0])).toEqual(['object_kind', 'event_type', 'user', 'project_id', 'project', 'object_attributes', 'merge_request']);
    expect(emoji[0]).toMatchObject({ object_kind: 'emoji', user: { username: 'hookdev' }, object_attributes: { awarded_on_url: `${s.url}/hookowner/hooked/-/merge_requests/${mr.body.iid}` }, merge_request: { iid: mr.body.iid } });
    expect(emoji[2].note).toMatchObject({ id: note.body.id, note: 'like me' });
    expect(emoji[2].object_attributes.awarded_on_url).toBe(`${s.url}/hookowner/hooked/-/merge_requests/${mr.body.iid}#note_${note.body.id}`);
    expect((await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/emoji_events`, { token: s.rootToken })).status).toBe(201);
  });

  it('sends an award on an internal note only to hooks that take confidential notes', async () => {
    await commit('emoji-int', 'ei.txt', { start_branch: 'main' });
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: owner.token, json: { source_branch: 'emoji-int', target_branch: 'main', title: 'Secretly liked' } });
    const note = await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: owner.token, json: { body: 'internal plan', internal: true } });
    await addHook({ url: `${hookBase}/emoji-only`, emoji_events: true, push_events: false });
    await addHook({ url: `${hookBase}/emoji-confidential`, emoji_events: true, confidential_note_events: true, push_events: false });
    expect((await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes/${note.body.id}/award_emoji`, { token: owner.token, json: { name: 'eyes' } })).status).toBe(201);
    await settled();
    expect(received.map((r) => r.url)).toEqual(['/emoji-confidential']);
  });

  it('sends pipeline events on each change of a pipeline\'s status (commit statuses)', async () => {
    const h = await addHook({ pipeline_events: true, push_events: false });
    const c = await commit('main', 'ci.txt');
    for (const state of ['running', 'running', 'success']) {
      expect((await s.request('POST', `/projects/${pid}/statuses/${c.id}`, { token: owner.token, json: { state, name: 'ci/build' } })).status).toBe(201);
    }
    await settled();
    const pipelines = events('Pipeline Hook').map((e) => e.body);
    // running, then success: the repeated running changed nothing.
    expect(pipelines.map((p) => [p.object_attributes.status, p.object_attributes.detailed_status])).toEqual([['running', 'running'], ['success', 'passed']]);
    const done = pipelines[1];
    expect(Object.keys(done)).toEqual(['object_kind', 'object_attributes', 'merge_request', 'user', 'project', 'commit', 'builds']);
    expect(done.object_attributes).toMatchObject({ ref: 'main', tag: false, sha: c.id, source: 'external', stages: ['external'], protected_ref: true, variables: [], url: expect.stringMatching(/\/-\/pipelines\/\d+$/) });
    expect(done.object_attributes.duration).toEqual(expect.any(Number));
    expect(done).toMatchObject({ merge_request: null, user: { username: 'hookowner' }, commit: { id: c.id }, builds: [] });
    expect(done.project).not.toHaveProperty('homepage');
    expect((await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/pipeline_events`, { token: s.rootToken })).status).toBe(201);
  });

  it('sends deployment events when a deployment is recorded and when its status changes', async () => {
    await addHook({ deployment_events: true, push_events: false });
    const c = await commit('main', 'deploy.txt');
    const d = await s.request('POST', `/projects/${pid}/deployments`, { token: owner.token, json: { environment: 'staging', sha: c.id, ref: 'main', tag: false, status: 'running' } });
    expect(d.status).toBe(201);
    await s.request('PUT', `/projects/${pid}/deployments/${d.body.id}`, { token: owner.token, json: { status: 'running' } });
    await s.request('PUT', `/projects/${pid}/deployments/${d.body.id}`, { token: owner.token, json: { status: 'success' } });
    await settled();
    const deployments = events('Deployment Hook').map((e) => e.body);
    expect(deployments.map((x) => x.status)).toEqual(['running', 'success']);
    expect(deployments[1]).toMatchObject({
      object_kind: 'deployment', deployment_id: d.body.id, environment: 'staging', environment_tier: 'staging', environment_slug: 'staging',
      short_sha: c.id.slice(0, 8), commit_url: `${s.url}/hookowner/hooked/-/commit/${c.id}`, commit_title: 'add deploy.txt',
      user: { username: 'hookowner' }, user_url: `${s.url}/hookowner`, deployable_id: null, ref: 'main',
    });
  });

  it('sends release events (create, update, delete)', async () => {
    await addHook({ releases_events: true, push_events: false });
    expect((await s.request('POST', `/projects/${pid}/releases`, { token: owner.token, json: { tag_name: 'v1.0-rel', ref: 'main', name: 'One', assets: { links: [{ name: 'docs', url: 'https://example.com/docs' }] } } })).status).toBe(201);
    await s.request('PUT', `/projects/${pid}/releases/v1.0-rel`, { token: owner.token, json: { name: 'One!' } });
    await s.request('DELETE', `/projects/${pid}/releases/v1.0-rel`, { token: owner.token });
    await settled();
    const rel = events('Release Hook').map((e) => e.body);
    expect(rel.map((r) => r.action)).toEqual(['create', 'update', 'delete']);
    expect(rel[0]).toMatchObject({ object_kind: 'release', tag: 'v1.0-rel', name: 'One', url: `${s.url}/hookowner/hooked/-/releases/v1.0-rel` });
    expect(rel[0].assets.count).toBe(5);
    expect(rel[0].assets.links).toEqual([{ id: expect.any(Number), external: true, link_type: 'other', name: 'docs', url: 'https://example.com/docs' }]);
    expect(rel[0].assets.sources[0]).toEqual({ format: 'zip', url: `${s.url}/hookowner/hooked/-/archive/v1.0-rel/hooked-v1.0-rel.zip` });
    expect(rel[0].commit.id).toMatch(/^[0-9a-f]{40}$/);
    expect(rel[2].assets.links).toHaveLength(1);
    expect(rel[1].name).toBe('One!');
    await removeAllHooks();
  });

  it('blocks a hook from running again in its own event chain (a receiver that writes back with X-Gitlab-Event-UUID)', async () => {
    await addHook({ note_events: true, push_events: false });
    await commit('chain-src', 'chain.txt', { start_branch: 'main' });
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: owner.token, json: { source_branch: 'chain-src', target_branch: 'main', title: 'Chained' } });
    await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: owner.token, json: { body: 'first' } });
    await settled();
    const uuid = events('Note Hook')[0]!.headers['x-gitlab-event-uuid'] as string;
    // The bot answers the note with a note of its own, passing the header on: no second delivery.
    await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: owner.token, json: { body: 'bot reply' }, headers: { 'X-Gitlab-Event-UUID': uuid } });
    await settled();
    expect(events('Note Hook')).toHaveLength(1);
    // Without the header it is a new event.
    await s.request('POST', `/projects/${pid}/merge_requests/${mr.body.iid}/notes`, { token: owner.token, json: { body: 'human reply' } });
    await settled();
    expect(events('Note Hook').map((e) => e.body.object_attributes.note)).toEqual(['first', 'human reply']);
  });

  it('sends nothing for events a hook did not ask for', async () => {
    await addHook({ push_events: false });
    await commit('main', 'quiet.txt');
    await settled();
    expect(received).toEqual([]);
    await removeAllHooks();
  });
});

describe('test deliveries, the log and resends', () => {
  it('tests a hook: 201 on a 2xx answer, 422 with the receiver\'s body otherwise, GitLab\'s messages without data', async () => {
    const h = await addHook({});
    const ok = await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/push_events`, { token: owner.token });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ message: '201 Created' });
    expect(received).toHaveLength(1);
    expect(received[0]!.body).toMatchObject({ object_kind: 'push', ref: 'refs/heads/main' });
    answer = { status: 500, body: '{"message":"Error response"}' };
    const failed = await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/merge_requests_events`, { token: owner.token });
    expect(failed.status).toBe(422);
    expect(failed.body).toEqual({ message: '{"message":"Error response"}' });
    const none = await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/issues_events`, { token: owner.token });
    expect(none.body).toEqual({ message: 'Ensure the project has issues.' });
    expect((await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/bogus_events`, { token: owner.token })).body).toEqual({ error: 'trigger does not have a valid value' });
    // Five tests a minute per project and user.
    let limited;
    for (let i = 0; i < 5; i++) limited = await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/releases_events`, { token: owner.token });
    expect(limited!.status).toBe(429);
    expect(limited!.body).toEqual({ message: { error: 'This endpoint has been requested too many times. Try again later.' } });
    await removeAllHooks();
  });

  it('logs each delivery (token, custom headers and e-mail addresses redacted), filters by status, and resends with the same Idempotency-Key', async () => {
    const h = await addHook({ token: 'log-token', custom_headers: [{ key: 'X-Secret', value: 'shh' }] });
    await s.request('PUT', '/user', { token: owner.token, json: {} });
    await commit('main', 'logged.txt', { author_email: 'author@example.com', author_name: 'Author' });
    answer = { status: 404, body: 'nope' };
    await commit('main', 'logged2.txt');
    await settled();
    expect(received[0]!.headers['x-secret']).toBe('shh');
    const logs = await s.request('GET', `/projects/${pid}/hooks/${h.id}/events`, { token: owner.token });
    expect(logs.status).toBe(200);
    expect(logs.body).toHaveLength(2);
    const [latest, first] = logs.body;
    expect(Object.keys(first)).toEqual(['id', 'url', 'trigger', 'request_headers', 'request_data', 'response_headers', 'response_body', 'execution_duration', 'response_status', 'created_at']);
    expect(first).toMatchObject({ url: `${hookBase}/hook`, trigger: 'push_hooks', response_status: '200', response_body: '{"ok":true}' });
    expect(first.request_headers['X-Gitlab-Token']).toBe('[REDACTED]');
    expect(first.request_headers['X-Secret']).toBe('[REDACTED]');
    expect(first.request_headers['X-Gitlab-Event']).toBe('Push Hook');
    expect(first.request_data.commits[0].author.email).toBe('[REDACTED]');
    expect(first.response_headers['x-echo']).toBe('/hook');
    expect(typeof first.execution_duration).toBe('number');
    expect(latest.response_status).toBe('404');
    expect(JSON.stringify(logs.body)).not.toContain('log-token');
    const failures = await s.request('GET', `/projects/${pid}/hooks/${h.id}/events`, { token: owner.token, query: { status: 'client_failure' } });
    expect(failures.body.map((l: any) => l.id)).toEqual([latest.id]);
    expect((await s.request('GET', `/projects/${pid}/hooks/${h.id}/events`, { token: owner.token, query: { status: 'weird' } })).body).toEqual({ error: 'status does not have a valid value' });
    expect((await s.request('GET', `/projects/${pid}/hooks/${h.id}/events`, { token: owner.token, query: { per_page: 21 } })).body).toEqual({ error: 'per_page does not have a valid value' });

    received = [];
    answer = { status: 200, body: 'fine' };
    const resent = await s.request('POST', `/projects/${pid}/hooks/${h.id}/events/${latest.id}/resend`, { token: owner.token });
    expect(resent.status).toBe(201);
    expect(resent.body).toEqual({ response_status: 200 });
    expect(received[0]!.headers['idempotency-key']).toBe(latest.request_headers['Idempotency-Key']);
    expect(received[0]!.headers['x-gitlab-token']).toBe('log-token');
    expect((await s.request('POST', `/projects/${pid}/hooks/${h.id}/events/999999/resend`, { token: owner.token })).body).toEqual({ message: '404 Not found' });
    await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { url: `${hookBase}/elsewhere` } });
    const stale = await s.request('POST', `/projects/${pid}/hooks/${h.id}/events/${latest.id}/resend`, { token: owner.token });
    expect(stale.status).toBe(422);
    expect(stale.body).toEqual({ message: 'The hook URL has changed, and this log entry cannot be retried' });
    await removeAllHooks();
  });

  it('renders a custom webhook template as the body; a template that is not JSON fails as an internal error', async () => {
    const h = await addHook({ custom_webhook_template: '{"text":"{{user_username}} pushed to {{ref}}","n":{{total_commits_count}},"p":{{project}}}' });
    await commit('main', 'templated.txt');
    await settled();
    expect(received[0]!.body).toMatchObject({ text: 'hookowner pushed to refs/heads/main', n: 1, p: { id: pid, name: 'hooked' } });
    await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { custom_webhook_template: '{"a": {{commits.0}}}' } });
    // (as root: the owner's five tests a minute are spent by the tests before)
    const t = await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/push_events`, { token: s.rootToken });
    expect(t.body).toEqual({ message: 'Error while parsing rendered custom webhook template: You may be trying to access an array value, which is not supported.' });
    await s.request('PUT', `/projects/${pid}/hooks/${h.id}`, { token: owner.token, json: { custom_webhook_template: 'not json {{ref}}' } });
    const bad = await s.request('POST', `/projects/${pid}/hooks/${h.id}/test/push_events`, { token: s.rootToken });
    expect(bad.body.message).toMatch(/^Error while parsing rendered custom webhook template: /);
  });

  it('fills URL variables in, shows them masked, and sets or unsets them one at a time', async () => {
    const h = await addHook({ url: `${hookBase}/{route}/in`, url_variables: [{ key: 'route', value: 'hidden-route' }] });
    expect(h.url).toBe(`${hookBase}/{route}/in`);
    await commit('main', 'var.txt');
    await settled();
    expect(received.map((r) => r.url)).toEqual(['/hidden-route/in']);
    const logs = await s.request('GET', `/projects/${pid}/hooks/${h.id}/events`, { token: owner.token });
    expect(logs.body[0].url).toBe(`${hookBase}/{route}/in`);
    expect(logs.body[0].response_headers['x-echo']).toBe('/{route}/in');
    expect((await s.request('PUT', `/projects/${pid}/hooks/${h.id}/url_variables/route`, { token: owner.token, json: { value: 'other' } })).status).toBe(204);
    expect((await s.request('PUT', `/projects/${pid}/hooks/${h.id}/url_variables/bad%20key`, { token: owner.token, json: { value: 'v' } })).body).toEqual({ error: 'Illegal key or value' });
    expect((await s.request('PUT', `/projects/${pid}/hooks/${h.id}/custom_headers/X-Extra`, { token: owner.token, json: { value: 'v' } })).status).toBe(204);
    const shown = await s.request('GET', `/projects/${pid}/hooks/${h.id}`, { token: owner.token });
    expect(shown.body.custom_headers).toEqual([{ key: 'X-Extra' }]);
    received = [];
    await commit('main', 'var2.txt');
    await settled();
    expect(received.map((r) => [r.url, r.headers['x-extra']])).toEqual([['/other/in', 'v']]);
    expect((await s.request('DELETE', `/projects/${pid}/hooks/${h.id}/url_variables/nothere`, { token: owner.token })).body).toEqual({ message: '404 URL variable Not Found' });
    expect((await s.request('DELETE', `/projects/${pid}/hooks/${h.id}/custom_headers/X-Extra`, { token: owner.token })).status).toBe(204);
    expect((await s.request('DELETE', `/projects/${pid}/hooks/${h.id}/custom_headers/X-Extra`, { token: owner.token })).body).toEqual({ message: '404 Custom header Not Found' });
    await removeAllHooks();
  });
});

describe('with @gitbeaker/rest', () => {
  it('adds, lists, edits, shows and removes hooks (ProjectHooks)', async () => {
    const { Gitlab } = await import('@gitbeaker/rest');
    const api = new Gitlab({ host: s.url, token: owner.token });
    const added = await api.ProjectHooks.add(pid, `${hookBase}/gb`, { pushEvents: false, mergeRequestsEvents: true, token: 'gb-token' });
    expect(added).toMatchObject({ url: `${hookBase}/gb`, push_events: false, merge_requests_events: true });
    expect((await api.ProjectHooks.all(pid)).map((h) => h.id)).toEqual([added.id]);
    const edited = await api.ProjectHooks.edit(pid, added.id, `${hookBase}/gb2`, { tagPushEvents: true });
    expect(edited).toMatchObject({ url: `${hookBase}/gb2`, tag_push_events: true, merge_requests_events: true });
    expect((await api.ProjectHooks.show(pid, added.id)).url_variables).toEqual([]);
    await api.ProjectHooks.remove(pid, added.id);
    await expect(api.ProjectHooks.show(pid, added.id)).rejects.toMatchObject({ cause: { description: '404 Not found' } });
  });
});
