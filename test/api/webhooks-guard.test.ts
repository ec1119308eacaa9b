// Where webhooks may not go and what failing hooks come to: with local requests not allowed
// (the default) hooks to this machine, the local network and link-local addresses are refused
// when saved and again when sent; redirects; timeouts; auto-disabling of a failing hook.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesSettled } from '../../src/services/webhooks/dispatch.js';
import { networkInterfaces } from 'node:os';
import { regexFilterMatches, regexFilterValid } from '../../src/services/webhooks/branch-regex.js';
import { maskUrl } from '../../src/services/webhooks/hooks.js';
import { blockedAddressReason, checkHookUrl, guardedLookup } from '../../src/services/webhooks/url-guard.js';
import { until } from '../helpers/outside.js';
import { startServer, type TestServer } from '../helpers/server.js';

let receiver: Server;
let hookBase: string;
let hits: Array<{ method: string; url: string; body: string }> = [];
/** Per path: what the receiver does. */
const behaviour = new Map<string, (res: import('node:http').ServerResponse) => void>();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ method: req.method!, url: req.url!, body: Buffer.concat(chunks).toString('utf8') });
      const act = behaviour.get(req.url!);
      if (act) return act(res);
      res.writeHead(200);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const addr = receiver.address();
  hookBase = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

describe('addresses', () => {
  it('classifies local, private and link-local addresses as GitLab\'s UrlBlocker does', () => {
    const cases: Array<[string, string | null]> = [
      ['127.0.0.1', 'Requests to localhost are not allowed'],
      ['127.5.6.7', 'Requests to localhost are not allowed'],
      ['0.0.0.0', 'Requests to localhost are not allowed'],
      ['::1', 'Requests to localhost are not allowed'],
      ['::', 'Requests to localhost are not allowed'],
      ['::ffff:127.0.0.1', 'Requests to localhost are not allowed'],
      ['::ffff:7f00:1', 'Requests to localhost are not allowed'],
      ['10.1.2.3', 'Requests to the local network are not allowed'],
      ['172.20.0.1', 'Requests to the local network are not allowed'],
      ['192.168.0.10', 'Requests to the local network are not allowed'],
      ['::ffff:192.168.0.10', 'Requests to the local network are not allowed'],
      ['fc00::1', 'Requests to the local network are not allowed'],
      ['fd12:3456::1', 'Requests to the local network are not allowed'],
      ['100.64.0.1', 'Requests to the local network are not allowed'],
      ['169.254.169.254', 'Requests to the link local network are not allowed'],
      ['fe80::1', 'Requests to the link local network are not allowed'],
      ['255.255.255.255', 'Requests to the limited broadcast address are not allowed'],
      ['224.0.0.1', 'Requests to the local network are not allowed'],
      ['8.8.8.8', null],
      ['2001:4860:4860::8888', null],
      ['172.32.0.1', null],
    ];
    for (const [address, reason] of cases) expect(blockedAddressReason(address), address).toBe(reason);
  });

  it('refuses local URLs in every spelling when saved; allows them when the instance allows local requests', async () => {
    for (const url of ['http://127.0.0.1/x', 'http://localhost/x', 'http://LOCALHOST./x', 'http://sub.localhost/x', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://2130706433/x', 'http://0x7f.1/x', 'http://017700000001/x', 'http://0/x', 'http://10.0.0.1/x', 'http://169.254.169.254/latest/meta-data']) {
      await expect(checkHookUrl(url, false), url).rejects.toThrow(/not allowed/);
      await expect(checkHookUrl(url, true), url).resolves.toBeInstanceOf(URL);
    }
    await expect(checkHookUrl('gopher://example.com/', true)).rejects.toThrow('Only allowed schemes are http, https');
  });

  it('counts this machine\'s own addresses as localhost, and IPv4 carried in IPv6 in every form', () => {
    const own = Object.values(networkInterfaces()).flat().map((a) => a!.address.split('%')[0]!);
    for (const a of own) expect(blockedAddressReason(a), a).toBe('Requests to localhost are not allowed');
    for (const a of ['::7f00:1', '::127.0.0.1', '::ffff:0:7f00:1', '2002:7f00:1::', '64:ff9b::127.0.0.1']) expect(blockedAddressReason(a), a).toBe('Requests to localhost are not allowed');
    for (const a of ['64:ff9b:1::1', '100::1', '::ffff:0:a00:1']) expect(blockedAddressReason(a), a).not.toBeNull();
    expect(blockedAddressReason('2002:808:808::1')).toBeNull();
  });

  it('takes only the plain http:// and https:// forms, and masks credentials however the authority is written', async () => {
    for (const url of ['http:/u:p@example.com/x', 'http:u:p@example.com/x', 'http:\\\\u:p@example.com/x', 'HTTPS:example.com']) {
      await expect(checkHookUrl(url, true), url).rejects.toThrow('URI is invalid');
    }
    expect(maskUrl('http://\\alice:pw@example.com/x')).toBe('http://\\*****:*****@example.com/x');
    expect(maskUrl('http://alice:p@ss@example.com/x')).toBe('http://*****:*****@example.com/x');
    expect(maskUrl('https://u:p@{host}:{port}/x')).toBe('https://*****:*****@{host}:{port}/x');
    expect(maskUrl('http://example.com/a@b')).toBe('http://example.com/a@b');
  });

  it('runs regex branch filters in linear time: what cannot run so is refused; many patterns leave it working', () => {
    for (let i = 0; i < 500; i++) expect(regexFilterValid(`^feat-[0-9]{1,5}-${i}$`)).toBe(true);
    for (let i = 0; i < 300; i++) expect(regexFilterMatches(`^rel-${i}-`, `rel-${i}-x`)).toBe(true);
    for (const bad of ['.{1,1000}', '(\\pL{1,10}){1,100}', 'a{1,20}', '(a)\\1', '(?<=a)b', '(?=a)a', '(unclosed', '(?:.*){16}'.repeat(3), 'x'.repeat(256)]) expect(regexFilterValid(bad), bad).toBe(false);
    // The largest filters taken stay cheap on the longest branch names.
    const big = `${'(.*)'.repeat(15)}x`;
    expect(regexFilterValid(big)).toBe(true);
    const t0 = performance.now();
    regexFilterMatches(big, 'a'.repeat(1024));
    expect(performance.now() - t0).toBeLessThan(100);
    // A pattern that backtracks exponentially elsewhere answers at once.
    const started = performance.now();
    expect(regexFilterMatches('^(a+)+$', `${'a'.repeat(5000)}b`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
    expect(regexFilterMatches('main', 'not-main-branch')).toBe(true);
    expect(regexFilterMatches('^main$', 'not-main')).toBe(false);
    expect(regexFilterValid('(?i)^main$')).toBe(false);
    expect(regexFilterValid('^main$')).toBe(true);
  });

  it('refuses, at connection time, a name that resolves to a blocked address', async () => {
    const lookup = guardedLookup(false);
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('localhost', { all: true }, (e) => resolve(e)));
    expect(err?.message).toBe('URL is blocked: Requests to localhost are not allowed');
    const ok = await new Promise<NodeJS.ErrnoException | null>((resolve) => guardedLookup(true)('localhost', { all: true }, (e) => resolve(e)));
    expect(ok).toBeNull();
  });
});

describe('with local requests not allowed (the default)', () => {
  let open: TestServer;
  let closed: TestServer;
  let pid: number;
  let hookId: number;

  beforeAll(async () => {
    open = await startServer({ LABWRIGHT_WEBHOOK_ALLOW_LOCAL: 'true' });
    const p = await open.request('POST', '/projects', { json: { name: 'guarded-hooks', initialize_with_readme: true } });
    pid = p.body.id;
    const h = await open.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}/saved-while-allowed` } });
    hookId = h.body.id;
    // A second process on the same data with the default setting: the hook saved by the first is
    // refused when sent.
    closed = await startServer({ LABWRIGHT_DATA_DIR: open.dataDir, DATABASE_URL: open.app.lw.config.databaseUrl ?? '' });
  });

  afterAll(async () => {
    await closed?.close();
    await open?.close();
  });

  it('refuses hooks to local addresses with GitLab\'s 422, and saves nothing', async () => {
    for (const url of [`${hookBase}/x`, 'http://localhost:9/x', 'http://[::1]:9/x', 'http://10.0.0.1/x', 'http://169.254.169.254/x']) {
      const r = await closed.request('POST', `/projects/${pid}/hooks`, { json: { url } });
      expect(r.status, url).toBe(422);
      expect(r.body).toEqual({ error: 'Invalid url given' });
    }
    const edit = await closed.request('PUT', `/projects/${pid}/hooks/${hookId}`, { json: { url: 'http://127.0.0.2/x' } });
    expect(edit.body).toEqual({ error: 'Invalid url given' });
    expect((await closed.request('GET', `/projects/${pid}/hooks`)).body).toHaveLength(1);
  });

  it('accepts a name that does not resolve yet (as GitLab), and its delivery fails as an internal error', async () => {
    const r = await closed.request('POST', `/projects/${pid}/hooks`, { json: { url: 'http://hook-target.invalid/x' } });
    expect(r.status).toBe(201);
    const t = await closed.request('POST', `/projects/${pid}/hooks/${r.body.id}/test/push_events`);
    expect(t.status).toBe(422);
    expect(t.body).toEqual({ message: 'URL is blocked: Host cannot be resolved or invalid' });
    const logs = await closed.request('GET', `/projects/${pid}/hooks/${r.body.id}/events`);
    expect(logs.body[0]).toMatchObject({ response_status: 'internal error', response_body: '' });
    await closed.request('DELETE', `/projects/${pid}/hooks/${r.body.id}`);
  });

  it('refuses to send to a local address when the delivery is made, whatever was saved', async () => {
    hits = [];
    const t = await closed.request('POST', `/projects/${pid}/hooks/${hookId}/test/push_events`);
    expect(t.status).toBe(422);
    expect(t.body).toEqual({ message: 'URL is blocked: Requests to localhost are not allowed' });
    expect(hits).toEqual([]);
    // The process that allows local requests sends it.
    expect((await open.request('POST', `/projects/${pid}/hooks/${hookId}/test/push_events`)).status).toBe(201);
    expect(hits.map((h) => h.url)).toEqual(['/saved-while-allowed']);
  });
});

describe('failing receivers', () => {
  let s: TestServer;
  let pid: number;

  beforeAll(async () => {
    s = await startServer({ LABWRIGHT_WEBHOOK_ALLOW_LOCAL: 'true', LABWRIGHT_WEBHOOK_AUTO_DISABLE: 'true', LABWRIGHT_WEBHOOK_TIMEOUT: '1' });
    const p = await s.request('POST', '/projects', { json: { name: 'failing-hooks', initialize_with_readme: true } });
    pid = p.body.id;
  });

  afterAll(async () => {
    await s?.close();
  });

  async function commit(file: string) {
    const r = await s.request('POST', `/projects/${pid}/repository/commits`, { json: { branch: 'main', commit_message: file, actions: [{ action: 'create', file_path: file, content: file }] } });
    expect(r.status).toBe(201);
  }

  it('follows redirects: 307 keeps the POST, 302 becomes a GET; a loop ends as an internal error', async () => {
    behaviour.set('/r307', (res) => { res.writeHead(307, { location: '/after307' }); res.end(); });
    behaviour.set('/r302', (res) => { res.writeHead(302, { location: `${hookBase}/after302` }); res.end(); });
    behaviour.set('/loop', (res) => { res.writeHead(307, { location: '/loop' }); res.end(); });
    hits = [];
    for (const path of ['/r307', '/r302']) {
      const h = await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}${path}` } });
      expect((await s.request('POST', `/projects/${pid}/hooks/${h.body.id}/test/push_events`)).status).toBe(201);
      await s.request('DELETE', `/projects/${pid}/hooks/${h.body.id}`);
    }
    expect(hits.map((h) => [h.method, h.url, h.body.length > 0])).toEqual([
      ['POST', '/r307', true], ['POST', '/after307', true], ['POST', '/r302', true], ['GET', '/after302', false],
    ]);
    const loop = await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}/loop` } });
    const t = await s.request('POST', `/projects/${pid}/hooks/${loop.body.id}/test/push_events`);
    expect(t.body).toEqual({ message: 'redirect too deep' });
    await s.request('DELETE', `/projects/${pid}/hooks/${loop.body.id}`);
  });

  it('leaves the token and custom headers behind on a redirect to another origin', async () => {
    const other = hookBase.replace('127.0.0.1', 'localhost');
    behaviour.set('/cross', (res) => { res.writeHead(307, { location: `${other}/landed` }); res.end(); });
    const h = await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}/cross`, token: 'origin-token', custom_headers: [{ key: 'X-Api-Key', value: 'origin-key' }] } });
    const seen: Array<[string, unknown, unknown]> = [];
    const listener = (req: import('node:http').IncomingMessage) => seen.push([req.url!, req.headers['x-gitlab-token'], req.headers['x-api-key']]);
    receiver.on('request', listener);
    try {
      expect((await s.request('POST', `/projects/${pid}/hooks/${h.body.id}/test/push_events`)).status).toBe(201);
    } finally {
      receiver.off('request', listener);
    }
    expect(seen).toEqual([['/cross', 'origin-token', 'origin-key'], ['/landed', undefined, undefined]]);
    await s.request('DELETE', `/projects/${pid}/hooks/${h.body.id}`);
  });

  it('refuses custom headers that frame the request or steer proxies', async () => {
    for (const key of ['Host', 'Content-Length', 'Transfer-Encoding', 'Connection', 'Expect', 'Proxy-Authorization', 'TE']) {
      const r = await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}/x`, custom_headers: [{ key, value: 'v' }] } });
      expect(r.body, key).toEqual({ error: 'Custom headers must be a valid json schema' });
    }
    const odd = await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}/x`, custom_headers: [{ key: 'X-Odd', value: 'caf\u0100' }] } });
    expect(odd.status).toBe(422);
  });

  it('serves projects in turn: one project\'s hanging hooks do not hold back another\'s deliveries', async () => {
    const slow = await s.request('POST', '/projects', { json: { name: 'slow-hooks', initialize_with_readme: true } });
    for (let i = 0; i < 6; i++) await s.request('POST', `/projects/${slow.body.id}/hooks`, { json: { url: `${hookBase}/hang` } });
    const fast = await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}/fast` } });
    hits = [];
    behaviour.set('/hang', () => undefined);
    await s.request('POST', `/projects/${slow.body.id}/repository/commits`, { json: { branch: 'main', commit_message: 'x', actions: [{ action: 'create', file_path: 'x', content: 'x' }] } });
    await commit('fair.txt');
    const t0 = Date.now();
    await until(() => hits.some((h) => h.url === '/fast'), 3000);
    expect(Date.now() - t0).toBeLessThan(900);
    await deliveriesSettled(s.app.lw);
    await s.request('DELETE', `/projects/${slow.body.id}`);
    await s.request('DELETE', `/projects/${pid}/hooks/${fast.body.id}`);
  });

  it('sends a queued delivery with the hook as it is when its turn comes: a hook deleted meanwhile gets nothing', async () => {
    behaviour.set('/slowish', (res) => setTimeout(() => { res.writeHead(200); res.end('ok'); }, 400));
    const ids: number[] = [];
    // Four run at once for one project (half the concurrency); the fifth waits its turn.
    for (const path of ['/slowish', '/slowish', '/slowish', '/slowish', '/waiting']) {
      ids.push((await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}${path}` } })).body.id);
    }
    hits = [];
    await commit('queued.txt');
    expect((await s.request('DELETE', `/projects/${pid}/hooks/${ids[4]}`)).status).toBe(204);
    await deliveriesSettled(s.app.lw);
    expect(hits.filter((h) => h.url === '/slowish')).toHaveLength(4);
    expect(hits.filter((h) => h.url === '/waiting')).toHaveLength(0);
    for (const id of ids.slice(0, 4)) await s.request('DELETE', `/projects/${pid}/hooks/${id}`);
  });

  it('gives up on a receiver that does not answer in time (LABWRIGHT_WEBHOOK_TIMEOUT)', async () => {
    behaviour.set('/hang', () => undefined);
    const h = await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}/hang` } });
    const started = Date.now();
    const t = await s.request('POST', `/projects/${pid}/hooks/${h.body.id}/test/push_events`);
    expect(t.status).toBe(422);
    expect(t.body).toEqual({ message: 'execution expired' });
    expect(Date.now() - started).toBeLessThan(5000);
    await s.request('DELETE', `/projects/${pid}/hooks/${h.body.id}`);
  });

  it('rests a hook from its 4th failure in a row, sends nothing while it rests, and a successful test wakes it', async () => {
    behaviour.set('/fail', (res) => { res.writeHead(500); res.end('down'); });
    const h = await s.request('POST', `/projects/${pid}/hooks`, { json: { url: `${hookBase}/fail` } });
    hits = [];
    for (let i = 0; i < 5; i++) {
      await commit(`f${i}.txt`);
      await deliveriesSettled(s.app.lw);
    }
    // Four deliveries failed; the fifth event found the hook resting.
    expect(hits.filter((x) => x.url === '/fail')).toHaveLength(4);
    const shown = await s.request('GET', `/projects/${pid}/hooks/${h.body.id}`);
    expect(shown.body.alert_status).toBe('temporarily_disabled');
    const until = Date.parse(shown.body.disabled_until);
    expect(until - Date.now()).toBeGreaterThan(50_000);
    expect(until - Date.now()).toBeLessThanOrEqual(60_000);
    behaviour.set('/fail', (res) => { res.writeHead(200); res.end('up'); });
    // (another administrator: root's five tests a minute on this project are spent above)
    const admin = await s.createUser('wakeadmin', { admin: true });
    expect((await s.request('POST', `/projects/${pid}/hooks/${h.body.id}/test/push_events`, { token: admin.token })).status).toBe(201);
    const woken = await s.request('GET', `/projects/${pid}/hooks/${h.body.id}`);
    expect(woken.body).toMatchObject({ alert_status: 'executable', disabled_until: null });
    await commit('after.txt');
    await deliveriesSettled(s.app.lw);
    expect(hits.filter((x) => x.url === '/fail')).toHaveLength(6);
  });
});
