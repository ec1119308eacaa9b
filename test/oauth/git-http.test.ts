// Tokens at work (issue 6 item 5): an OAuth access token clones over HTTP with username oauth2;
// after refresh or revocation the old token is refused by git at once.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { codeFlowTokens, createApp, signIn, tokenRequest, type TestApp } from './helpers.js';

const run = promisify(execFile);
let s: TestServer;
let app: TestApp;
let work: string;

beforeAll(async () => {
  s = await startServer();
  const alice = await s.createUser('alice');
  const p = await s.request('POST', '/projects', { token: alice.token, json: { name: 'demo', initialize_with_readme: true } });
  if (p.status !== 201) throw new Error(`project: ${p.status} ${p.text}`);
  app = await createApp(s, { scopes: 'read_repository read_user', redirectUri: 'https://git.example/cb' });
  work = mkdtempSync(join(tmpdir(), 'lw-oauth-git-'));
});
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await s.close();
});

async function clone(token: string, dir: string): Promise<boolean> {
  const url = new URL(`${s.url}/alice/demo.git`);
  url.username = 'oauth2';
  url.password = token;
  try {
    await run('git', ['clone', '--quiet', url.toString(), join(work, dir)], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '/bin/false' } });
    return true;
  } catch {
    return false;
  }
}

describe('git over HTTP with an OAuth token', () => {
  it('clones with a fresh token; refreshed and revoked tokens are refused', async () => {
    const agent = await signIn(s, 'alice');
    const t1 = await codeFlowTokens(s, agent, app, 'read_repository');
    expect(await clone(t1.access_token, 'one')).toBe(true);
    const t2 = (await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: t1.refresh_token, client_id: app.uid, client_secret: app.secret })).body;
    expect(await clone(t1.access_token, 'two')).toBe(false);
    expect(await clone(t2.access_token, 'three')).toBe(true);
    await tokenRequest(s, { token: t2.access_token, client_id: app.uid, client_secret: app.secret }, { path: '/oauth/revoke' });
    expect(await clone(t2.access_token, 'four')).toBe(false);
  }, 30_000);
});
