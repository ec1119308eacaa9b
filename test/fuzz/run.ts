// The fuzz loop: every discovered route gets `runsPerRoute` generated requests against a real server
// running in this process; each response is checked against the oracles.
import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { TestServer } from '../helpers/server.js';
import { discoverParamNames, discoverRoutes, type FuzzRoute } from './discover.js';
import { caseArb, learnHints, type FuzzCase, type RouteHints } from './requests.js';
import { heal, seed, type Pools } from './seed.js';
import { schemaProblems } from './schema-oracle.js';
import { countRows, diffCounts, heapAfterGc, listTables, movedRefs, prototypePollution, refsDigests } from './state.js';

export interface FuzzOptions {
  runsPerRoute: number;
  /** When set, the cases of the whole run (FUZZ_RUNS), spread evenly over the routes; overrides runsPerRoute. */
  totalRuns?: number;
  seed: number;
  /** Past this many ms, the remaining routes get one case each (every route is still fuzzed). */
  budgetMs?: number;
  /** Only routes whose `METHOD path` matches (FUZZ_ROUTE). */
  filter?: RegExp;
  log?: (line: string) => void;
}

export interface FuzzFailure {
  route: string;
  problem: string;
  method: string;
  target: string;
  token: string;
  body: string;
  status: number;
  response: string;
  count: number;
}

export interface FuzzReport {
  routes: number;
  cases: number;
  durationMs: number;
  statuses: Record<string, number>;
  failures: FuzzFailure[];
  heapSamplesMb: number[];
  heapGrowthMb: number;
  healed: number;
}

interface Sent {
  status: number;
  contentType: string;
  body: Buffer;
}

const STACK_TRACE = /\n\s+at [^\n]*:\d+:\d+|\bat (?:async )?[\w.$<>]+ \((?:file:\/\/)?\/[^)\n]+:\d+:\d+\)|\/work\/main\/|node_modules\/|\/src\/[\w/-]+\.ts\b/;

/**
 * One request on a fresh connection (keep-alive races with the server's idle timeout would show up
 * as resets that are the client's fault). When the server answers before reading a large body and
 * closes, the write fails after the response arrived: that is the answer, not a failure.
 */
function sendOnce(url: URL, c: FuzzCase, token: string | null): Promise<Sent> {
  const headers: Record<string, string> = { connection: 'close' };
  let target = c.target;
  if (token && c.tokenVia === 'private-token') headers['PRIVATE-TOKEN'] = token;
  if (token && c.tokenVia === 'bearer') headers.authorization = `Bearer ${token}`;
  if (token && c.tokenVia === 'query') target += `${target.includes('?') ? '&' : '?'}private_token=${encodeURIComponent(token)}`;
  if (c.contentType) headers['content-type'] = c.contentType;
  if (c.body) headers['content-length'] = String(c.body.length);
  return new Promise((resolve, reject) => {
    let answered: Sent | null = null;
    const req = httpRequest({ host: url.hostname, port: url.port, method: c.method, path: target, headers, agent: false, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      const head = { status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? '') };
      answered = { ...head, body: Buffer.alloc(0) };
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ ...head, body: Buffer.concat(chunks) }));
      res.on('error', () => resolve({ ...head, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout after 60 s')));
    req.on('error', (err) => (answered ? resolve(answered) : reject(err)));
    if (c.body) req.end(c.body);
    else req.end();
  });
}

/** A reset before any answer is retried once: a server that never answers the same request twice is the finding. */
async function send(url: URL, c: FuzzCase, token: string | null): Promise<Sent> {
  try {
    return await sendOnce(url, c, token);
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_UNESCAPED_CHARACTERS') throw err;
    return await sendOnce(url, c, token);
  }
}

const DEAD_TOKENS = new Set<string>(['revoked', 'expired', 'garbage', 'oauth_expired', 'oauth_revoked']);
const READ_ONLY_TOKENS = new Set<string>(['read_api', 'oauth_read_user']);

/** The oracles that need only the response. */
function responseProblems(c: FuzzCase, r: Sent): string[] {
  const out: string[] = [];
  const text = r.body.toString('latin1');
  if (r.status >= 500) out.push(`status ${r.status}`);
  if (STACK_TRACE.test(text)) out.push('stack trace or source path in body');
  // Token oracles (API only: pages and git over HTTP read no API token). A dead token is refused
  // everywhere, even where anonymous callers are welcome; a read-only token never writes.
  if (c.target.startsWith('/api/') && r.status >= 200 && r.status < 300) {
    if (DEAD_TOKENS.has(c.token)) out.push(`${c.token} token accepted`);
    if (READ_ONLY_TOKENS.has(c.token) && c.method !== 'GET' && c.method !== 'HEAD') out.push(`${c.token} token wrote`);
  }
  const isJson = r.contentType.startsWith('application/json');
  if (isJson && c.method !== 'HEAD') {
    if (r.body.length === 0 && r.status !== 204) out.push('empty body with a JSON content type');
    else if (r.body.length > 0) {
      try {
        JSON.parse(r.body.toString('utf8'));
      } catch {
        out.push('JSON content type but the body does not parse');
      }
    }
  }
  return out;
}

function describe(route: FuzzRoute, c: FuzzCase, status: number, problem: string, response: string): FuzzFailure {
  return {
    route: `${route.method} ${route.path}`,
    problem,
    method: c.method,
    target: c.target.length > 300 ? `${c.target.slice(0, 300)}… (${c.target.length} chars)` : c.target,
    token: `${c.token} via ${c.tokenVia}`,
    body: c.contentType ? `${c.contentType}: ${c.bodyNote.slice(0, 400)}` : 'none',
    status,
    response: response.slice(0, 400),
    count: 1,
  };
}

export async function runFuzz(s: TestServer, opts: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const ctx = s.app.lw;
  const log = opts.log ?? (() => undefined);
  const url = new URL(s.url);
  const routes = discoverRoutes(s.app).filter((r) => !opts.filter || opts.filter.test(`${r.method} ${r.path}`));
  const names = discoverParamNames(fileURLToPath(new URL('../../src', import.meta.url)));
  const pools: Pools = await seed(s);
  const tables = await listTables(ctx);
  log(`fuzz: seeded in ${Date.now() - started} ms; ${routes.length} routes, ${names.length} param names, ${tables.length} tables, ${opts.totalRuns ? `${opts.totalRuns} cases in all` : `${opts.runsPerRoute} cases per route`}, seed ${opts.seed}`);

  const failures = new Map<string, FuzzFailure>();
  const statuses: Record<string, number> = {};
  const heapSamplesMb: number[] = [];
  let cases = 0;
  let healed = 0;
  function fail(f: FuzzFailure) {
    const key = `${f.route} | ${f.problem}`;
    const prev = failures.get(key);
    if (prev) prev.count++;
    else {
      failures.set(key, f);
      log(`FAIL ${key}: ${f.method} ${f.target.slice(0, 160)} [${f.token}] body=${f.body.slice(0, 160)} -> ${f.status} ${f.response.slice(0, 200)}`);
    }
  }

  async function runOne(route: FuzzRoute, c: FuzzCase, hints: RouteHints): Promise<void> {
    cases++;
    const before = await countRows(ctx, tables);
    const refsBefore = refsDigests(ctx.reposDir);
    let r: Sent;
    try {
      r = await send(url, c, pools.tokens[c.token]);
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_UNESCAPED_CHARACTERS') return; // our client refused the target
      fail(describe(route, c, 0, `no response: ${(err as Error).message}`, ''));
      return;
    }
    const cls = `${Math.floor(r.status / 100)}xx`;
    statuses[cls] = (statuses[cls] ?? 0) + 1;
    const text = r.body.toString('latin1');
    learnHints(hints, r.status, text);
    for (const p of responseProblems(c, r)) fail(describe(route, c, r.status, p, text));
    for (const p of schemaProblems(route, { method: c.method, status: r.status, contentType: r.contentType, body: r.body })) fail(describe(route, c, r.status, p, text));
    if (r.status >= 400 && r.status < 500) {
      const changed = diffCounts(before, await countRows(ctx, tables));
      if (changed.length) fail(describe(route, c, r.status, `4xx changed rows (${changed.join('; ')})`, text));
      const moved = movedRefs(refsBefore, refsDigests(ctx.reposDir));
      if (moved.length) fail(describe(route, c, r.status, `4xx moved git refs (${moved.join(', ')})`, text));
    }
    for (const p of prototypePollution()) fail(describe(route, c, r.status, `prototype pollution: ${p}`, text));
    if (r.status < 300 && c.method !== 'GET' && c.method !== 'HEAD') {
      healed += (await heal(s, pools)).length;
      await settle(ctx.reposDir);
    }
    if (cases % 100 === 0) heapSamplesMb.push(heapAfterGc());
  }

  const families = familySizes(routes);
  const runsPerRoute = opts.totalRuns ? Math.max(1, Math.ceil(opts.totalRuns / families.size)) : opts.runsPerRoute;
  for (const [i, route] of routes.entries()) {
    const hints: RouteHints = new Set();
    const arb = caseArb(route, names, pools, ctx.config.maxQueryLength, hints);
    // Generated families (git over HTTP at every depth) share one handler: split their budget.
    const size = families.get(familyKey(route)) ?? 1;
    let numRuns = size > 1 ? Math.max(1, Math.ceil((runsPerRoute * 3) / size)) : runsPerRoute;
    if (opts.budgetMs !== undefined && Date.now() - started > opts.budgetMs) numRuns = 1;
    await fc.assert(
      fc.asyncProperty(arb, async (c) => {
        await runOne(route, c, hints);
        return true;
      }),
      { numRuns, seed: opts.seed + i, endOnFailure: true },
    );
    if (i % 20 === 19) log(`fuzz: ${i + 1}/${routes.length} routes, ${cases} cases, ${Math.round((Date.now() - started) / 1000)} s`);
  }
  heapSamplesMb.push(heapAfterGc());
  return {
    routes: routes.length,
    cases,
    durationMs: Date.now() - started,
    statuses,
    failures: [...failures.values()],
    heapSamplesMb,
    heapGrowthMb: heapGrowth(heapSamplesMb),
    healed,
  };
}

/**
 * Waits until no repository appears, vanishes or moves for 100 ms: some writes finish on the
 * repository store after answering (repositories of deleted users' projects are removed by a timer),
 * and that must not be blamed on the next request.
 */
async function settle(reposDir: string): Promise<void> {
  let prev = JSON.stringify([...refsDigests(reposDir)]);
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const now = JSON.stringify([...refsDigests(reposDir)]);
    if (now === prev) return;
    prev = now;
  }
}

/** Routes that differ only in how many `:sN` segments they take are one family. */
function familyKey(r: FuzzRoute): string {
  return `${r.method} ${r.path.replace(/(?:\/:s\d+)+/g, '/:s*')}`;
}

function familySizes(routes: FuzzRoute[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of routes) m.set(familyKey(r), (m.get(familyKey(r)) ?? 0) + 1);
  return m;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : 0;
}

/** Median heap of the last quarter of samples minus that of the first quarter (after the first sample's warm-up). */
export function heapGrowth(samples: number[]): number {
  if (samples.length < 3) return 0;
  const body = samples.slice(1);
  const q = Math.max(1, Math.floor(body.length / 4));
  return median(body.slice(-q)) - median(body.slice(0, q));
}
