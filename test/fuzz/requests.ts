// fast-check arbitraries for one HTTP request against a discovered route: plausible values most of
// the time, mutated ones (wrong types, nulls, 1 MB strings, bad UTF-8 and percent-encoding,
// duplicate and prototype keys, Rack forms, oversize query strings) the rest, in every token state.
import fc from 'fast-check';
import type { FuzzRoute } from './discover.js';
import { isOAuthState, type Pools, type TokenState } from './seed.js';

export interface FuzzCase {
  method: string;
  /** Request target as sent on the wire; may hold raw bytes 0x80–0xff (sent as latin1). */
  target: string;
  token: TokenState;
  tokenVia: 'private-token' | 'bearer' | 'query';
  contentType: string | null;
  body: Buffer | null;
  /** What the body was, for failure reports (bodies can be 1 MB). */
  bodyNote: string;
}

const MB_STRING = 'x'.repeat(1 << 20);
const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);

const NASTY_SEGMENTS = [
  '%zz', '%', '%C3%28', '%FF%FE', '\xff\xfe', '__proto__', 'constructor', 'prototype', 'self', '..', '%2E%2E', '.',
  'a%2Fb', 'a/b', '%00', '%0A', '%2F', '~', '%20', 'null', 'undefined', 'true', '-', '*', '%25', 'x'.repeat(5000),
  '%E2%80%AE', '%F0%9F%98%80', '%ED%A0%80', 'HEAD', 'main..feature', 'refs%2Fheads%2Fmain', '@', '%40',
];
const NASTY_INTS = ['0', '-1', '2147483648', '9007199254740993', '99999999999999999999999', '1.5', '1e3', '0x1f', '00', '+1', ' 1'];

/** Plausible string values for a param, by naming convention (the fuzzer knows no route schemas). */
function plausible(name: string, pools: Pools): fc.Arbitrary<unknown> {
  const ids = [...pools.userIds, ...pools.projects.map((p) => p.id), ...pools.groups.map((g) => g.id), ...pools.tokenIds];
  if (name === 'scopes') return fc.subarray(['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'openid'], { minLength: 1 });
  if (name === 'visibility') return fc.constantFrom('private', 'internal', 'public');
  if (name === 'email' || name.endsWith('_email')) return word.map((w) => `${w}@example.com`);
  if (name === 'password') return fc.constant('password-1234-fuzz');
  if (name.endsWith('_at') || name.endsWith('_date') || name.endsWith('_after') || name.endsWith('_before')) {
    return fc.constantFrom('2030-01-01', '2020-01-01', '2030-01-01T00:00:00Z', 'yesterday', '2024-02-30');
  }
  if (name.endsWith('_iid') || name === 'iids') return fc.constantFrom(...pools.mrIids);
  if (name === 'id' || name.endsWith('_id') || name.endsWith('_ids')) return ids.length ? fc.constantFrom(...ids) : fc.nat(50);
  if (name.includes('branch') || name === 'ref' || name === 'from' || name === 'to') return fc.constantFrom(...pools.branches);
  if (name === 'sha' || name.endsWith('_sha')) return fc.constantFrom(...pools.shas);
  if (name === 'file_path' || name === 'path' && pools.files.length > 0) return fc.oneof(word, fc.constantFrom(...pools.files));
  if (name === 'per_page' || name === 'page' || name === 'access_level' || name === 'limit') return fc.constantFrom(1, 2, 10, 20, 30, 40, 50, 100);
  if (name === 'order_by' || name === 'sort') return fc.constantFrom('id', 'name', 'created_at', 'updated_at', 'asc', 'desc', 'path');
  if (name === 'state') return fc.constantFrom('opened', 'closed', 'merged', 'all', 'active', 'inactive', 'close', 'reopen');
  return fc.oneof(word, fc.boolean(), fc.nat(1000));
}

/** Wrong types and hostile values any param may get. */
const mutated: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, '', ' ', 'null', 'true', 'True', '0', '1') },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('\ud800', '\u0000', '<script>alert(1)</script>', '../../../etc/passwd', "' or 1=1 --", '%s%n', '\u202e') },
  { weight: 1, arbitrary: fc.constant(MB_STRING) },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.nat(), fc.constant(null)), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('a', 'key', '__proto__', 'constructor'), fc.string({ maxLength: 8 }), { maxKeys: 3 }) },
);

const valueCache = new WeakMap<Pools, Map<string, fc.Arbitrary<unknown>>>();

/** Built once per name and pool set: building arbitraries (regex parsing) costs more than drawing from them. */
function valueFor(name: string, pools: Pools): fc.Arbitrary<unknown> {
  let byName = valueCache.get(pools);
  if (!byName) valueCache.set(pools, (byName = new Map()));
  let arb = byName.get(name);
  if (!arb) {
    arb = fc.oneof({ weight: 3, arbitrary: plausible(name, pools) }, { weight: 2, arbitrary: mutated });
    byName.set(name, arb);
  }
  return arb;
}

/** name → value pairs; duplicates and prototype keys are added by the encoders. */
function fields(names: string[], pools: Pools): fc.Arbitrary<Array<[string, unknown]>> {
  const pick = fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
  return fc.array(pick.chain((n) => valueFor(n, pools).map((v) => [n, v] as [string, unknown])), { maxLength: 8 });
}

const PROTO_JSON = ['"__proto__":{"polluted":"yes","is_admin":true}', '"constructor":{"prototype":{"polluted":"yes"}}', '"__proto__":null', '"prototype":{"admin":true}'];

function jsonBody(entries: Array<[string, unknown]>, dup: boolean, proto: number | null, badUtf8: boolean): Buffer {
  const parts = entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`);
  if (dup && entries.length > 0) parts.push(`${JSON.stringify(entries[0][0])}:${JSON.stringify(['dup', null])}`);
  if (proto !== null) parts.splice(proto % (parts.length + 1), 0, PROTO_JSON[proto % PROTO_JSON.length]);
  const text = `{${parts.join(',')}}`;
  if (!badUtf8) return Buffer.from(text);
  // A string holding bytes that are not UTF-8 (0xC3 0x28, a lone 0xFF).
  return Buffer.concat([Buffer.from(text.slice(0, -1) + (parts.length ? ',' : '') + '"bad":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
}

function enc(s: string): string {
  // encodeURIComponent throws on lone surrogates; those are sent raw (a client bug the server must survive).
  try {
    return encodeURIComponent(s);
  } catch {
    return s.replace(/[^\x21-\x7e]/g, '%ED%A0%80');
  }
}

/** Rack form encoding of one pair: `k=v`, `k[]=a&k[]=b`, `k[sub]=v`. */
function formPairs(k: string, v: unknown, out: string[]): void {
  if (Array.isArray(v)) for (const item of v) out.push(`${enc(k)}[]=${enc(String(item))}`);
  else if (v !== null && typeof v === 'object') for (const [sk, sv] of Object.entries(v)) out.push(`${enc(k)}[${enc(sk)}]=${enc(String(sv))}`);
  else out.push(`${enc(k)}=${v === null ? '' : enc(String(v))}`);
}

const HOSTILE_FORM = ['__proto__[polluted]=yes', 'constructor[prototype][polluted]=yes', '__proto__=x', 'a[__proto__][b]=1', '%zz=%zz', 'name=%C3%28', 'x[=1', 'y]=2', '[]=3', 'z[][]=4', 'scopes[][a]=1', '%=%'];

function formText(entries: Array<[string, unknown]>, hostile: number[]): string {
  const out: string[] = [];
  for (const [k, v] of entries) formPairs(k, v, out);
  for (const h of hostile) out.push(HOSTILE_FORM[h % HOSTILE_FORM.length]);
  return out.join('&');
}

function multipartBody(entries: Array<[string, unknown]>, boundary: string): Buffer {
  const chunks: string[] = [];
  for (const [k, v] of entries) {
    const value = typeof v === 'string' ? v : JSON.stringify(v) ?? '';
    chunks.push(`--${boundary}\r\nContent-Disposition: form-data; name="${k.replace(/["\r\n]/g, '')}"\r\n\r\n${value}\r\n`);
  }
  chunks.push(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n`);
  return Buffer.from(chunks.join('') + `--${boundary}--\r\n`, 'latin1');
}

function segmentFor(param: string, route: FuzzRoute, pools: Pools): fc.Arbitrary<string> {
  const existing = existingValues(param, route, pools);
  return fc.oneof(
    { weight: 6, arbitrary: existing.length ? fc.constantFrom(...existing) : fc.constant('1') },
    { weight: 2, arbitrary: fc.constantFrom(...NASTY_INTS).map(enc) },
    { weight: 2, arbitrary: fc.constantFrom(...NASTY_SEGMENTS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map(enc) },
  );
}

/** Existing ids or names for a path param, chosen by the param's name and the route's resource. */
function existingValues(param: string, route: FuzzRoute, pools: Pools): string[] {
  const p = route.path;
  const projectIds = pools.projects.flatMap((x) => [String(x.id), enc(x.path)]);
  const groupIds = pools.groups.flatMap((x) => [String(x.id), enc(x.path)]);
  if (/^s\d+$/.test(param)) {
    // git over HTTP: /:namespace/:project.git/info/refs, split over segments.
    const i = Number(param.slice(1));
    return pools.projects.flatMap((x) => {
      const parts = x.path.split('/');
      if (i >= parts.length) return [];
      return i === parts.length - 1 ? [parts[i], `${parts[i]}.git`] : [parts[i]];
    });
  }
  if (param === 'id') {
    if (p.includes('/projects/')) return projectIds;
    if (p.includes('/groups/')) return groupIds;
    if (p.includes('/personal_access_tokens/')) return [...pools.tokenIds.map(String), 'self'];
    if (p.includes('/users/')) return [...pools.userIds.map(String), ...pools.usernames];
    if (p.includes('/applications/')) return pools.appIds.map(String);
    return [...projectIds, ...groupIds, ...pools.userIds.map(String)];
  }
  if (param === 'user_id') return pools.userIds.map(String);
  if (param === 'project_id') return projectIds;
  if (param === 'group_id') return groupIds;
  if (param.endsWith('_iid')) return pools.mrIids.map(String);
  if (param === 'branch' || param === 'ref') return pools.branches;
  if (param === 'sha') return pools.shas;
  if (param === 'file_path' || param === '*') return pools.files.map(enc);
  return [...pools.userIds.map(String), ...projectIds];
}

function fillPath(route: FuzzRoute, values: string[]): string {
  let i = 0;
  let out = route.path.replace(/:([A-Za-z0-9_]+)/g, () => values[i++] ?? 'x');
  if (out.includes('*')) out = out.replace('*', values[i] ?? 'x');
  return out;
}

/** Required params learned from the route's own 400s (`"name" not given`, Grape's "name is missing"), so later cases get past validation. */
export type RouteHints = Set<string>;

export function learnHints(hints: RouteHints, status: number, body: string): void {
  if (status !== 400) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return;
  }
  const texts = [(parsed as { error?: unknown })?.error, (parsed as { message?: unknown })?.message].filter((t): t is string => typeof t === 'string');
  for (const text of texts) {
    for (const one of text.matchAll(/([a-z_]+)(?:\[\])? is missing/g)) hints.add(one[1]);
    for (const one of text.matchAll(/"([a-z_]+)(?:\[\])?" not given/g)) hints.add(one[1]);
    const many = /^([a-z_]+(?:, [a-z_]+)+) are missing/.exec(text);
    if (many) for (const n of many[1].split(', ')) hints.add(n);
  }
}

/** A plausible value for a hinted param, picked by a drawn number (so cases stay reproducible by seed). */
function hintValue(name: string, pools: Pools, n: number): unknown {
  const pick = <T>(xs: T[]): T | undefined => (xs.length ? xs[n % xs.length] : undefined);
  if (name === 'scopes') return ['api'];
  if (name === 'visibility') return 'private';
  if (name === 'email') return `fz${n}@example.com`;
  if (name === 'password') return 'password-1234-fuzz';
  if (name.endsWith('_at')) return '2030-01-01';
  if (name.endsWith('_iid')) return pick(pools.mrIids);
  if (name === 'user_id') return pick(pools.userIds) ?? 1;
  if (name.endsWith('_id')) return pick(pools.projects.map((p) => p.id)) ?? 1;
  if (name.includes('branch') || name === 'ref') return pick(pools.branches);
  if (name === 'access_level') return pick([10, 20, 30, 40]);
  if (name === 'actions') return [{ action: 'create', file_path: `f${n}.txt`, content: 'x' }];
  return `fz${n.toString(36)}`;
}

const RAW_BODIES: Array<{ contentType: string; body: Buffer; note: string }> = [
  { contentType: 'application/json', body: Buffer.from('{"a":'), note: 'truncated json' },
  { contentType: 'application/json', body: Buffer.from('[1,2,3]'), note: 'json array' },
  { contentType: 'application/json', body: Buffer.from('"str"'), note: 'json string' },
  { contentType: 'application/json', body: Buffer.from('null'), note: 'json null' },
  { contentType: 'application/json', body: Buffer.from(''), note: 'empty json' },
  { contentType: 'text/plain', body: Buffer.from('hello'), note: 'text/plain' },
  { contentType: 'application/xml', body: Buffer.from('<a/>'), note: 'xml' },
  { contentType: 'application/json; charset=utf-16', body: Buffer.from('{}', 'utf16le'), note: 'utf-16 json' },
  { contentType: 'multipart/form-data', body: Buffer.from('garbage'), note: 'multipart without boundary' },
];

const RAW_QUERIES = ['%', '%zz=1', 'a=%C3%28', '&&&=&', '=', 'per_page[]=1', 'page[a]=b', '\xff=\xfe', 'page=-1', 'per_page=100000', 'page=99999999999999999999'];

/** One request for the route. */
export function caseArb(route: FuzzRoute, names: string[], pools: Pools, maxQueryLength: number, hints: RouteHints = new Set()): fc.Arbitrary<FuzzCase> {
  const writes = route.method !== 'GET' && route.method !== 'HEAD';
  return fc
    .record({
      method: route.method === 'GET' ? fc.constantFrom('GET', 'GET', 'GET', 'GET', 'HEAD') : fc.constant(route.method),
      segs: fc.tuple(...route.params.map((p) => segmentFor(p, route, pools))),
      queryKind: fc.constantFrom('none', 'none', 'fields', 'fields', 'fields', 'raw', 'oversize'),
      queryFields: fields(names, pools),
      rawQuery: fc.constantFrom(...RAW_QUERIES),
      hostile: fc.array(fc.nat(50), { maxLength: 2 }),
      bodyKind: fc.constantFrom('none', 'json', 'json', 'json', 'json', 'form', 'form', 'multipart', 'raw'),
      bodyFields: fields(names, pools),
      raw: fc.constantFrom(...RAW_BODIES),
      dup: fc.boolean(),
      proto: fc.option(fc.nat(20), { freq: 4 }),
      badUtf8: fc.nat(19).map((n) => n === 0),
      hintDraw: fc.tuple(fc.nat(9), fc.nat(1000)),
      token: fc.constantFrom<TokenState>(
        'admin', 'admin', 'admin', 'admin', 'user', 'user', 'read_api', 'none', 'revoked', 'expired', 'garbage',
        'oauth', 'oauth', 'oauth_read_user', 'oauth_expired', 'oauth_revoked',
      ),
      tokenVia: fc.constantFrom('private-token' as const, 'private-token' as const, 'bearer' as const, 'query' as const),
    })
    .map((r): FuzzCase => {
      const [hintRoll, hintN] = r.hintDraw;
      // Most cases carry the learned required params (valid-ish); the rest leave them out or mistype them.
      const hinted: Array<[string, unknown]> = hintRoll < 7 ? [...hints].map((h, i) => [h, hintValue(h, pools, hintN + i)]) : [];
      const bodyEntries = writes ? [...hinted, ...r.bodyFields] : r.bodyFields;
      const queryEntries = writes ? r.queryFields : [...hinted, ...r.queryFields];
      let target = fillPath(route, r.segs);
      let query = '';
      if (r.queryKind === 'fields' || (!writes && hinted.length)) query = formText(queryEntries, r.hostile);
      else if (r.queryKind === 'raw') query = r.rawQuery;
      else if (r.queryKind === 'oversize') query = `search=${'q'.repeat(maxQueryLength + 10)}`;
      if (query) target += `?${query}`;
      // OAuth access tokens go as Bearer (PRIVATE-TOKEN and private_token take PATs only).
      const tokenVia = isOAuthState(r.token) ? 'bearer' : r.tokenVia;
      const out: FuzzCase = { method: r.method, target, token: r.token, tokenVia, contentType: null, body: null, bodyNote: 'none' };
      if (!writes) return out;
      if (r.bodyKind === 'json') {
        out.contentType = 'application/json';
        out.body = jsonBody(bodyEntries, r.dup, r.proto, r.badUtf8);
        out.bodyNote = `json ${JSON.stringify(bodyEntries).slice(0, 300)} dup=${r.dup} proto=${r.proto} badUtf8=${r.badUtf8}`;
      } else if (r.bodyKind === 'form') {
        const text = formText(bodyEntries, r.hostile);
        out.contentType = 'application/x-www-form-urlencoded';
        out.body = Buffer.from(text, 'latin1');
        out.bodyNote = `form ${text.slice(0, 300)}`;
      } else if (r.bodyKind === 'multipart') {
        out.contentType = 'multipart/form-data; boundary=fzb';
        out.body = multipartBody(bodyEntries, 'fzb');
        out.bodyNote = `multipart ${JSON.stringify(bodyEntries).slice(0, 300)}`;
      } else if (r.bodyKind === 'raw') {
        out.contentType = r.raw.contentType;
        out.body = r.raw.body;
        out.bodyNote = r.raw.note;
      }
      return out;
    });
}
