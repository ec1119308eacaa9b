// Every route the app registers has an entry in the response registry (src/api/v4/schemas), so the
// fuzzer's schema oracle judges every 2xx answer: a new route must say what it answers.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RESPONSES, responseFor } from '../../src/api/v4/schemas/registry.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { discoverRoutes } from './discover.js';

let s: TestServer;

beforeAll(async () => {
  s = await startServer();
});

afterAll(async () => {
  await s?.close();
});

it('every discovered route has a response entry', () => {
  const routes = discoverRoutes(s.app);
  expect(routes.length).toBeGreaterThan(100);
  const missing = routes.filter((r) => !responseFor(r.method, r.path)).map((r) => `${r.method} ${r.path}`);
  expect(missing).toEqual([]);
});

it('every registry entry names a route the app registers', () => {
  const shape = (k: string) => k.replace(/:[A-Za-z0-9_]+/g, ':');
  const known = new Set(discoverRoutes(s.app).map((r) => shape(`${r.method} ${r.path}`)));
  // HEAD routes registered on their own are hidden behind their GET by discovery.
  const stale = Object.keys(RESPONSES).filter((k) => !known.has(shape(k)) && !(k.startsWith('HEAD ') && known.has(shape(k.replace(/^HEAD /, 'GET ')))));
  expect(stale).toEqual([]);
});

it('every schema compiles', () => {
  const ajv = new Ajv({ strict: false });
  for (const [key, spec] of Object.entries(RESPONSES)) {
    if (spec.kind !== 'json') continue;
    expect(() => ajv.compile(spec.schema), key).not.toThrow();
  }
});

it('a schema lists nullability: null passes where a presenter may emit it and fails where it may not', async () => {
  const ajv = new Ajv({ strict: false });
  const user = await s.request('GET', '/user');
  expect(user.status).toBe(200);
  const validate = ajv.compile((responseFor('GET', '/api/v4/user') as { schema: object }).schema);
  expect(validate(user.body)).toBe(true);
  expect(validate({ ...user.body, public_email: null })).toBe(true);
  expect(validate({ ...user.body, id: String(user.body.id) })).toBe(false);
  expect(validate({ ...user.body, username: null })).toBe(false);
  const { email: _email, ...withoutEmail } = user.body;
  expect(validate(withoutEmail)).toBe(false);
  expect(validate({ ...user.body, some_future_field: 1 })).toBe(true);
});
