// Sign-in, sign-out, session cookie, lock-out, CSRF on forms, and the applications page.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { advanceClock, resetClock } from '../../src/oauth/clock.js';
import { escapeHtml, html } from '../../src/web/html.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { Agent, countRows, csrfFrom, PASSWORD, signIn } from '../oauth/helpers.js';

let s: TestServer;
let dave: { id: number; token: string };

beforeAll(async () => {
  s = await startServer();
  await s.createUser('alice');
  dave = await s.createUser('dave');
});
afterAll(() => s.close());
afterEach(() => resetClock());

async function attempt(agent: Agent, login: string, password: string) {
  const page = await agent.get('/users/sign_in');
  return agent.post('/users/sign_in', { authenticity_token: csrfFrom(page.text), login, password, redirect_to: '/oauth/device' });
}

describe('html escaping', () => {
  it('escapes interpolations but not nested templates', () => {
    expect(html`<p>${'<b>"x" & \'y\'</b>'}</p>`.value).toBe('<p>&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;</p>');
    expect(html`<ul>${['<a>', html`<li>ok</li>`]}</ul>`.value).toBe('<ul>&lt;a&gt;<li>ok</li></ul>');
    expect(escapeHtml('`')).toBe('&#96;');
  });
});

describe('sign in', () => {
  it('by username or email; the cookie is HttpOnly, SameSite=Lax; only a digest is stored', async () => {
    for (const login of ['alice', 'ALICE@example.com']) {
      const a = new Agent(s.url);
      const r = await attempt(a, login, PASSWORD);
      expect(r.status).toBe(303);
      expect(r.location).toBe('/oauth/device');
      const cookie = r.headers.getSetCookie().find((c) => c.startsWith('_labwright_session='))!;
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Lax/i);
      expect(cookie).not.toMatch(/Secure/i);
      const id = a.cookies.get('_labwright_session')!;
      const rows = await s.app.lw.db.selectFrom('web_sessions').selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(id);
      expect((await a.get('/user_settings/applications')).status).toBe(200);
    }
  });
  it('marks the cookie Secure behind an https external URL', async () => {
    const t = await startServer({ LABWRIGHT_EXTERNAL_URL: 'https://forge.example' });
    try {
      const a = new Agent(t.url);
      const r = await attempt(a, 'root', 'root-password-123');
      expect(r.status).toBe(303);
      expect(r.headers.getSetCookie().find((c) => c.startsWith('_labwright_session='))).toMatch(/Secure/i);
    } finally {
      await t.close();
    }
  });
  it('refuses a POST without a valid CSRF token', async () => {
    const a = new Agent(s.url);
    await a.get('/users/sign_in');
    const r = await a.post('/users/sign_in', { authenticity_token: 'forged', login: 'alice', password: PASSWORD });
    expect(r.status).toBe(403);
    expect(a.cookies.has('_labwright_session')).toBe(false);
  });
  it('ignores off-site return paths', async () => {
    for (const target of ['https://evil.example/', '//evil.example/', '/\\evil.example']) {
      const a = new Agent(s.url);
      const page = await a.get('/users/sign_in');
      const r = await a.post('/users/sign_in', { authenticity_token: csrfFrom(page.text), login: 'alice', password: PASSWORD, redirect_to: target });
      expect(r.location).toBe('/user_settings/applications');
    }
  });
  it('sign out ends the session server-side', async () => {
    const a = await signIn(s, 'alice');
    const stolen = a.cookies.get('_labwright_session')!;
    const page = await a.get('/user_settings/applications');
    const r = await a.post('/users/sign_out', { authenticity_token: csrfFrom(page.text) });
    expect(r.status).toBe(303);
    const replay = new Agent(s.url);
    replay.cookies.set('_labwright_session', stolen);
    expect((await replay.get('/user_settings/applications')).status).toBe(302);
  });
});

describe('lock-out (security case 34)', () => {
  it('ten failures lock for ten minutes with one uniform message; tokens keep working', async () => {
    const a = new Agent(s.url);
    const unknown = await attempt(a, 'nobody', 'x');
    expect(unknown.status).toBe(401);
    const message = /<p class="error" role="alert">([^<]+)<\/p>/.exec(unknown.text)![1];
    expect(message).toBe('Invalid login or password.');
    for (let i = 0; i < 10; i++) {
      const r = await attempt(a, 'dave', `wrong-${i}`);
      expect(r.status).toBe(401);
      expect(r.text).toContain(message);
    }
    const locked = await attempt(a, 'dave', PASSWORD);
    expect(locked.status).toBe(401);
    expect(locked.text).toContain(message);
    expect((await s.request('GET', '/user', { token: dave.token })).status).toBe(200);
    advanceClock(10 * 60 * 1000 + 1000);
    const after = await attempt(a, 'dave', PASSWORD);
    expect(after.status).toBe(303);
  });
  it('blocked users cannot sign in and see the same message', async () => {
    const eve = await s.createUser('eve');
    await s.request('POST', `/users/${eve.id}/block`);
    const r = await attempt(new Agent(s.url), 'eve', PASSWORD);
    expect(r.status).toBe(401);
    expect(r.text).toContain('Invalid login or password.');
  });
});

describe('applications page', () => {
  it('registers an application, shows the secret once, renews and deletes it', async () => {
    const a = await signIn(s, 'alice');
    const page = await a.get('/user_settings/applications');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const csrf = csrfFrom(page.text);
    const created = await a.post('/user_settings/applications', {
      authenticity_token: csrf,
      name: 'My <b>tool</b>',
      redirect_uri: 'https://tool.example/cb\nhttp://127.0.0.1/cb',
      'scopes[]': ['api', 'read_user'],
    });
    expect(created.status).toBe(201);
    expect(created.text).toContain('My &lt;b&gt;tool&lt;/b&gt;');
    const secret = /id="application-secret">([^<]+)</.exec(created.text)![1];
    const uid = /id="application-id">([^<]+)</.exec(created.text)![1];
    const row = await s.app.lw.db.selectFrom('oauth_applications').selectAll().where('uid', '=', uid).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ confidential: 0, scopes: 'api read_user', redirect_uri: 'https://tool.example/cb\nhttp://127.0.0.1/cb' });
    const list = await a.get('/user_settings/applications');
    expect(list.text).toContain(uid);
    expect(list.text).not.toContain(secret);

    // Another user can neither see nor touch it.
    const bob = await s.createUser('bob2');
    void bob;
    const other = await signIn(s, 'bob2');
    const otherPage = await other.get('/user_settings/applications');
    expect(otherPage.text).not.toContain(uid);
    const steal = await other.post(`/user_settings/applications/${row.id}/renew_secret`, { authenticity_token: csrfFrom(otherPage.text) });
    expect(steal.status).toBe(404);
    expect((await other.post(`/user_settings/applications/${row.id}/delete`, { authenticity_token: csrfFrom(otherPage.text) })).status).toBe(404);

    const renewed = await a.post(`/user_settings/applications/${row.id}/renew_secret`, { authenticity_token: csrf });
    expect(renewed.status).toBe(200);
    expect(/id="application-secret">([^<]+)</.exec(renewed.text)![1]).not.toBe(secret);
    const noCsrf = await a.post(`/user_settings/applications/${row.id}/delete`, {});
    expect(noCsrf.status).toBe(403);
    const del = await a.post(`/user_settings/applications/${row.id}/delete`, { authenticity_token: csrf });
    expect(del.status).toBe(303);
    expect(await s.app.lw.db.selectFrom('oauth_applications').select('id').where('id', '=', row.id).executeTakeFirst()).toBeUndefined();
  });
  it('shows validation errors and creates nothing for bad input', async () => {
    const a = await signIn(s, 'alice');
    const csrf = csrfFrom((await a.get('/user_settings/applications')).text);
    const before = await s.app.lw.db.selectFrom('oauth_applications').select('id').execute();
    for (const form of [{ name: '', redirect_uri: 'https://x.example/cb', 'scopes[]': 'api' }, { name: 'x', redirect_uri: 'javascript:alert(1)', 'scopes[]': 'api' }, { name: 'x', redirect_uri: 'https://x.example/cb' }, { name: 'x', redirect_uri: 'https://x.example/cb', 'scopes[]': 'bogus' }] as Array<Record<string, string>>) {
      const r = await a.post('/user_settings/applications', { authenticity_token: csrf, ...form });
      expect(r.status).toBe(422);
      expect(r.text).toContain('role="alert"');
    }
    expect((await s.app.lw.db.selectFrom('oauth_applications').select('id').execute()).length).toBe(before.length);
    expect(await countRows(s, 'web_sessions')).toBeGreaterThan(0);
  });
  it('signed-out visitors are sent to sign in', async () => {
    const r = await new Agent(s.url).get('/user_settings/applications');
    expect(r.status).toBe(302);
    expect(r.location).toBe('/users/sign_in?redirect_to=%2Fuser_settings%2Fapplications');
  });
});
