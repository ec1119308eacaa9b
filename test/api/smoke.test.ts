import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.close();
});

describe('foundation smoke', () => {
  it('GET /user with the initial root token returns root', async () => {
    const r = await s.request('GET', '/user');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body.username).toBe('root');
    expect(r.body.id).toBe(1);
    expect(r.body.web_url).toBe(`${s.url}/root`);
  });

  it('creates a user and a token that authenticates', async () => {
    const alice = await s.createUser('alice');
    const r = await s.request('GET', '/user', { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.body.username).toBe('alice');
    expect(r.body.is_admin).toBeUndefined();
  });
});
