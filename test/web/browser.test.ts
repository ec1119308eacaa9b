// A real browser (Debian's Chromium through playwright-core) signs in, registers an application,
// approves and denies consent, and enters a device code. Each page is kept as a screenshot in
// test-artifacts/.
import { mkdirSync } from 'node:fs';
import * as oauth from 'oauth4webapi';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, TEST_DB, type TestServer } from '../helpers/server.js';
import { PASSWORD, pkcePair, tokenRequest } from '../oauth/helpers.js';

const ARTIFACTS = 'test-artifacts';
const CHROMIUM = process.env.LABWRIGHT_CHROMIUM ?? '/usr/bin/chromium';
let s: TestServer;
let browser: Browser;
let page: Page;
let uid = '';
let secret = '';

async function shot(name: string, p: Page = page) {
  await p.screenshot({ path: `${ARTIFACTS}/${TEST_DB}-${name}.png`, fullPage: true });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  s = await startServer();
  await s.createUser('alice');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
  // The client application's redirect target: answer it in the browser instead of the network.
  await context.route('https://client.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p>client callback</p>' }));
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await s?.close();
});

describe('in a real browser', () => {
  it('signs in and registers an application', async () => {
    await page.goto(`${s.url}/user_settings/applications`);
    expect(page.url()).toContain('/users/sign_in');
    await shot('sign-in');
    await page.fill('#login', 'alice');
    await page.fill('#password', 'wrong password');
    await page.click('button[type=submit]');
    await expect(page.locator('[role=alert]').textContent()).resolves.toBe('Invalid login or password.');
    await shot('sign-in-failed');
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${s.url}/user_settings/applications`);
    await shot('applications');

    await page.fill('#name', 'Browser <client>');
    await page.fill('#redirect_uri', 'https://client.example/cb');
    await page.check('input[name="scopes[]"][value=api]');
    await page.check('input[name="scopes[]"][value=read_user]');
    await page.click('main button.primary');
    await page.waitForSelector('#application-secret');
    uid = (await page.textContent('#application-id'))!;
    secret = (await page.textContent('#application-secret'))!;
    expect(secret).toMatch(/^gloas-/);
    expect(await page.textContent('h1')).toBe('Application Browser <client> was created');
    await shot('application-created');
  });

  it('approves consent and the code works at the token endpoint', async () => {
    const { verifier, challenge } = pkcePair();
    const q = new URLSearchParams({ client_id: uid, redirect_uri: 'https://client.example/cb', response_type: 'code', scope: 'api read_user', state: 'a+b/c', code_challenge: challenge, code_challenge_method: 'S256' });
    await page.goto(`${s.url}/oauth/authorize?${q}`);
    expect(await page.textContent('h1')).toBe('Authorize Browser <client> to use your account?');
    await shot('consent');
    await page.click('button[value=approve]');
    await page.waitForURL(/^https:\/\/client\.example\/cb\?/);
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('a+b/c');
    const t = await tokenRequest(s, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: 'https://client.example/cb', client_id: uid, client_secret: secret, code_verifier: verifier });
    expect(t.status).toBe(200);
  });

  it('denies consent', async () => {
    const q = new URLSearchParams({ client_id: uid, redirect_uri: 'https://client.example/cb', response_type: 'code', scope: 'read_user', state: 'deny-me' });
    await page.goto(`${s.url}/oauth/authorize?${q}`);
    await page.click('button[value=deny]');
    await page.waitForURL(/^https:\/\/client\.example\/cb\?/);
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('deny-me');
    expect(back.searchParams.has('code')).toBe(false);
  });

  it('shows an error page for a bad redirect URI, and a phone-sized consent page', async () => {
    await page.goto(`${s.url}/oauth/authorize?${new URLSearchParams({ client_id: uid, redirect_uri: 'https://evil.example/cb', response_type: 'code' })}`);
    expect(await page.textContent('h1')).toBe('An error has occurred');
    await shot('error');
    const phone = await page.context().newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${s.url}/oauth/authorize?${new URLSearchParams({ client_id: uid, redirect_uri: 'https://client.example/cb', response_type: 'code', scope: 'read_user' })}`);
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    expect(overflow).toBe(false);
    await shot('consent-phone', phone);
    await phone.close();
  });

  it('enters a device code and approves the device', async () => {
    const d = (await tokenRequest(s, { client_id: uid, client_secret: secret, scope: 'read_user' }, { path: '/oauth/authorize_device' })).body;
    await page.goto(`${s.url}/oauth/device`);
    await page.fill('#user_code', `${d.user_code.slice(0, 4).toLowerCase()}-${d.user_code.slice(4).toLowerCase()}`);
    await shot('device-entry');
    await page.click('main button.primary');
    await page.waitForSelector('text=Authorize a device?');
    expect(await page.textContent('main')).toContain('Browser <client>');
    await shot('device-confirm');
    await page.click('button[value=approve]');
    await page.waitForSelector('text=Device connected');
    await shot('device-done');
    const t = await tokenRequest(s, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: d.device_code, client_id: uid, client_secret: secret });
    expect(t.status).toBe(200);
    expect(t.body.scope).toBe('read_user');
  });

  it('oauth4webapi runs the PKCE and device flows while the user approves in the browser', async () => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    const issuer = new URL(s.url);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    const client: oauth.Client = { client_id: uid };
    const auth = oauth.ClientSecretPost(secret);

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: uid, redirect_uri: 'https://client.example/cb', response_type: 'code', scope: 'api', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }).toString();
    await page.goto(url.toString());
    await page.click('button[value=approve]');
    await page.waitForURL(/^https:\/\/client\.example\/cb\?/);
    const params = oauth.validateAuthResponse(as, client, new URL(page.url()), state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, 'https://client.example/cb', verifier, insecure));
    const me = await fetch(`${s.api}/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await me.json()).username).toBe('alice');

    const device = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, auth, { scope: 'read_user' }, insecure));
    await page.goto(device.verification_uri_complete!);
    await page.click('main button.primary');
    await page.click('button[value=approve]');
    await page.waitForSelector('text=Device connected');
    const deviceTokens = await oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, insecure));
    expect(deviceTokens.scope).toBe('read_user');
  });

  it('signs out', async () => {
    await page.goto(`${s.url}/user_settings/applications`);
    await page.click('header button.link');
    await page.waitForURL(`${s.url}/users/sign_in`);
    await page.goto(`${s.url}/user_settings/applications`);
    expect(page.url()).toContain('/users/sign_in');
  });
});
