import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { configureSpam, settingsFromEnv } from '../../src/services/merge-requests/spam.js';
import { closeServer, addMember, commit, createProject } from './mr-helpers.js';

let s: TestServer;
let pid: number;
let alice: { id: number; token: string };
beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  pid = (await createProject(s, 'spam')).id;
  await addMember(s, pid, alice.id, 30);
  await commit(s, pid, 's1', { 'a.txt': 'a' }, { from: 'main' });
});
afterAll(async () => {
  await closeServer(s);
});

const spammy = { source_branch: 's1', target_branch: 'main', title: 'Buy cheap pills now', description: 'cheap pills' };

async function spamLogs() {
  return s.app.lw.db.selectFrom('spam_logs').selectAll().orderBy('id').execute();
}

describe('spam check on merge requests', () => {
  it('reads rules from LABWRIGHT_SPAM_PATTERNS', () => {
    const settings = settingsFromEnv({ LABWRIGHT_SPAM_PATTERNS: 'cheap\\s+pills\n\nviagra' });
    expect(settings.patterns.map((p) => p.source)).toEqual(['cheap\\s+pills', 'viagra']);
    expect(settings.captchaSiteKey).toBeNull();
    expect(() => settingsFromEnv({ LABWRIGHT_SPAM_PATTERNS: '(' })).toThrow(/invalid regular expression/);
  });

  it('without a CAPTCHA service the request is refused and logged, nothing created', async () => {
    configureSpam(s.app.lw, { ...settingsFromEnv({ LABWRIGHT_SPAM_PATTERNS: 'cheap\\s+pills' }) });
    const r = await s.request('POST', `/projects/${pid}/merge_requests`, { token: alice.token, json: spammy });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: { error: 'Your merge request has been recognized as spam and has been discarded.' } });
    expect((await s.request('GET', `/projects/${pid}/merge_requests`)).body).toEqual([]);
    const logs = await spamLogs();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ user_id: alice.id, title: 'Buy cheap pills now', noteable_type: 'MergeRequest' });
    // Administrators are not checked; clean content passes.
    const clean = await s.request('POST', `/projects/${pid}/merge_requests`, { token: alice.token, json: { ...spammy, title: 'Fine', description: '' } });
    expect(clean.status).toBe(201);
    const upd = await s.request('PUT', `/projects/${pid}/merge_requests/${clean.body.iid}`, { token: alice.token, json: { description: 'cheap  pills' } });
    expect(upd.status).toBe(400);
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${clean.body.iid}`)).body.description).toBe('');
    await s.request('PUT', `/projects/${pid}/merge_requests/${clean.body.iid}`, { json: { state_event: 'close' } });
  });

  it('with a CAPTCHA service: 409 with needs_captcha_response, then a verified resubmission passes', async () => {
    const seen: string[] = [];
    configureSpam(s.app.lw, {
      captchaSiteKey: 'site-key-1',
      verifier: async (response) => {
        seen.push(response);
        return response === 'good-token';
      },
      checkers: [(input) => input.title.includes('external-spam')],
    });
    const r = await s.request('POST', `/projects/${pid}/merge_requests`, { token: alice.token, json: spammy });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ message: { error: expect.stringContaining('spam') }, needs_captcha_response: true, captcha_site_key: 'site-key-1' });
    const logId = r.body.spam_log_id;
    expect(typeof logId).toBe('number');
    const wrong = await s.request('POST', `/projects/${pid}/merge_requests`, { token: alice.token, json: spammy, headers: { 'X-Service-Captcha-Response': 'bad-token', 'X-Service-Spam-Log-Id': String(logId) } });
    expect(wrong.status).toBe(409);
    const ok = await s.request('POST', `/projects/${pid}/merge_requests`, { token: alice.token, json: spammy, headers: { 'X-Service-Captcha-Response': 'good-token', 'X-Service-Spam-Log-Id': String(logId) } });
    expect(ok.status).toBe(201);
    expect(seen).toEqual(['bad-token', 'good-token']);
    expect((await spamLogs()).find((l) => l.id === logId)!.recaptcha_verified).toBe(1);
    // The pluggable external checker.
    const ext = await s.request('POST', `/projects/${pid}/merge_requests`, { token: alice.token, json: { source_branch: 's1', target_branch: 'other', title: 'external-spam' } });
    expect(ext.status).toBe(409);
  });
});
