// Request parameters as GitLab (Grape) sees them: path, query and body merged into one hash, with
// Rack's nested forms (`name[]`, `name[key]`, `name[0][key]`), and typed readers that fail with
// GitLab's exact 400 bodies.
import { missingAttributes, notGiven, paramError } from './errors.js';

export type ParamValue = string | number | boolean | null | ParamValue[] | { [key: string]: ParamValue };
export type ParamHash = { [key: string]: ParamValue };

function decode(s: string): string {
  const plus = s.includes('+') ? s.replace(/\+/g, ' ') : s;
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    // Invalid percent-encoding or invalid UTF-8: keep the text as sent rather than fail the request.
    return plus;
  }
}

function isHash(v: unknown): v is ParamHash {
  // An uploaded file (a Buffer) is a value, not a hash: walking its bytes stalled every request.
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

/** Keys that could reach Object.prototype are dropped outright. */
function safeKey(k: string): boolean {
  return k !== '__proto__' && k !== 'constructor' && k !== 'prototype';
}

/** Rack's param_depth_limit: deeper keys would let one query string exhaust the stack. */
const MAX_DEPTH = 32;

/** Splits `a[b][0][c]` into ['a','b','0','c']; `a[]` into ['a','']. Too deep: kept as one plain key. */
function splitKey(key: string): string[] {
  const open = key.indexOf('[');
  if (open <= 0 || !key.endsWith(']')) return [key];
  const parts = [key.slice(0, open)];
  const re = /\[([^\]]*)\]/g;
  let m: RegExpExecArray | null;
  let consumed = open;
  while ((m = re.exec(key)) !== null) {
    if (m.index !== consumed || parts.length > MAX_DEPTH) return [key];
    parts.push(m[1]);
    consumed = m.index + m[0].length;
  }
  return consumed === key.length ? parts : [key];
}

/** Rack-style assignment of one decoded key/value pair into a nested hash. */
function assign(target: ParamHash, parts: string[], value: string): void {
  let node: ParamHash | ParamValue[] = target;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const last = i === parts.length - 1;
    const nextIsArray = !last && parts[i + 1] === '';
    if (Array.isArray(node)) {
      if (part !== '') return;
      if (last) {
        node.push(value);
        return;
      }
      // name[][key]=v: start a new hash unless the last one lacks this key (Rack's rule).
      const tail: ParamValue = node[node.length - 1];
      const nextKey = parts[i + 1];
      if (isHash(tail) && !(nextKey in tail)) {
        node = tail;
      } else {
        const h: ParamHash = Object.create(null);
        node.push(h);
        node = h;
      }
      continue;
    }
    if (!safeKey(part) || part === '') return;
    if (last) {
      node[part] = value;
      return;
    }
    let child: ParamValue | undefined = node[part];
    if (nextIsArray) {
      if (!Array.isArray(child)) {
        child = [];
        node[part] = child;
      }
    } else if (!isHash(child)) {
      child = Object.create(null) as ParamHash;
      node[part] = child;
    }
    node = child as ParamHash | ParamValue[];
  }
}

/** Parses a query string or form body the way Rack does. Hashes have no prototype. */
export function parseNested(qs: string): ParamHash {
  const out: ParamHash = Object.create(null);
  if (!qs) return out;
  for (const pair of qs.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    const key = decode(rawKey);
    if (!key) continue;
    assign(out, splitKey(key), decode(rawValue));
  }
  return hashesWithNumericKeysToArrays(out) as ParamHash;
}

/**
 * Multipart fields (already decoded, repeated names as arrays) nested the same way as
 * parseNested, so `scopes[]` and `h[key]` mean the same in every body type. Non-text values (file
 * contents) stay under their plain name.
 */
export function nestFields(fields: Record<string, unknown>): ParamHash {
  const out: ParamHash = Object.create(null);
  for (const key of Object.keys(fields)) {
    if (!key) continue;
    const raw = fields[key];
    const values = Array.isArray(raw) ? raw : [raw];
    if (values.every((v) => typeof v === 'string')) {
      for (const v of values as string[]) assign(out, splitKey(key), v);
    } else if (safeKey(key)) {
      out[key] = raw as ParamValue;
    }
  }
  return hashesWithNumericKeysToArrays(out) as ParamHash;
}

/** `name[0][key]` forms arrive as hashes keyed "0","1",…; GitLab reads them as arrays. */
function hashesWithNumericKeysToArrays(v: ParamValue): ParamValue {
  if (Array.isArray(v)) return v.map(hashesWithNumericKeysToArrays);
  if (!isHash(v)) return v;
  const keys = Object.keys(v);
  for (const k of keys) v[k] = hashesWithNumericKeysToArrays(v[k]);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k)) && keys.every((k) => isHash(v[k]))) {
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => v[k]);
  }
  return v;
}

const TRUE_VALUES = new Set(['true', '1', 't', 'yes', 'y', 'on']);
const FALSE_VALUES = new Set(['false', '0', 'f', 'no', 'n', 'off']);

export function parseBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined;
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (TRUE_VALUES.has(s)) return true;
    if (FALSE_VALUES.has(s)) return false;
  }
  return undefined;
}

interface Opts {
  required?: boolean;
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** Largest value of the 32-bit integer columns: PostgreSQL fails a comparison with a larger one (a 500). */
export const MAX_DB_INT = 2147483647;

/** Typed, GitLab-worded access to the merged parameters of one request. */
export class Params {
  constructor(public readonly raw: ParamHash) {}

  has(name: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.raw, name) && this.raw[name] !== undefined;
  }

  private value(name: string, opts?: Opts): ParamValue | undefined {
    const v = this.has(name) ? this.raw[name] : undefined;
    if (v === undefined && opts?.required) throw notGiven(name);
    return v;
  }

  /** A string parameter. Numbers are accepted (JSON clients send them), hashes and arrays are not. */
  string(name: string, opts?: Opts & { allowBlank?: boolean; max?: number }): string | undefined {
    const v = this.value(name, opts);
    if (v === undefined) return undefined;
    if (v === null) {
      if (opts?.required) throw notGiven(name);
      return undefined;
    }
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw paramError(`${name} is invalid`);
    const s = String(v);
    if (opts?.allowBlank === false && s.trim() === '') throw paramError(`${name} is empty`);
    if (opts?.max !== undefined && s.length > opts.max) throw paramError(`${name} is too long (maximum is ${opts.max} characters)`);
    return s;
  }

  /** A string that may be explicitly null (to clear a field); undefined when absent. */
  nullableString(name: string, opts?: { max?: number }): string | null | undefined {
    if (this.has(name) && this.raw[name] === null) return null;
    return this.string(name, opts);
  }

  int(name: string, opts?: Opts & { min?: number; max?: number }): number | undefined {
    const v = this.value(name, opts);
    if (v === undefined) return undefined;
    let n: number;
    if (typeof v === 'number') n = v;
    else if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) n = Number(v);
    else throw paramError(`${name} is invalid`);
    if (!Number.isSafeInteger(n)) throw paramError(`${name} is invalid`);
    // Below the database's integer range too (PostgreSQL refuses such a value in a query: a 500).
    if (n < (opts?.min ?? -MAX_DB_INT - 1) || n > (opts?.max ?? MAX_DB_INT)) {
      throw paramError(`${name} does not have a valid value`);
    }
    return n;
  }

  /** Booleans: true/false/True/False/1/0 (and Grape's t/yes/on forms); null is refused. */
  bool(name: string, opts?: Opts): boolean | undefined {
    const v = this.value(name, opts);
    if (v === undefined) return undefined;
    const b = parseBoolean(v);
    if (b === undefined) throw paramError(`${name} is invalid`);
    return b;
  }

  enum<T extends string>(name: string, values: readonly T[], opts?: Opts): T | undefined {
    const v = this.value(name, opts);
    if (v === undefined) return undefined;
    if (typeof v !== 'string' && typeof v !== 'number') throw paramError(`${name} is invalid`);
    const s = String(v);
    if (!(values as readonly string[]).includes(s)) throw paramError(`${name} does not have a valid value`);
    return s as T;
  }

  /** An integer enum (for example access levels). */
  intEnum(name: string, values: readonly number[], opts?: Opts): number | undefined {
    const n = this.int(name, opts);
    if (n !== undefined && !values.includes(n)) throw paramError(`${name} does not have a valid value`);
    return n;
  }

  /** Array of strings from `name[]`, a JSON array, or (when comma) a comma-separated string. */
  stringArray(name: string, opts?: Opts & { comma?: boolean }): string[] | undefined {
    const v = this.value(name, opts);
    if (v === undefined) return undefined;
    if (v === null) return [];
    if (Array.isArray(v)) {
      if (!v.every((x) => typeof x === 'string' || typeof x === 'number')) throw paramError(`${name} is invalid`);
      const items = v.map(String);
      return opts?.comma ? items.flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean) : items;
    }
    if (typeof v === 'string' || typeof v === 'number') {
      const s = String(v);
      if (opts?.comma) return s.split(',').map((x) => x.trim()).filter(Boolean);
      return s === '' ? [] : [s];
    }
    throw paramError(`${name} is invalid`);
  }

  intArray(name: string, opts?: Opts & { comma?: boolean }): number[] | undefined {
    const items = this.stringArray(name, opts);
    if (items === undefined) return undefined;
    return items.map((s) => {
      if (!/^\s*-?\d+\s*$/.test(s)) throw paramError(`${name} is invalid`);
      const n = Number(s);
      if (!Number.isSafeInteger(n) || Math.abs(n) > MAX_DB_INT) throw paramError(`${name} is invalid`);
      return n;
    });
  }

  /** A date `YYYY-MM-DD`; returns the normalised string. */
  date(name: string, opts?: Opts): string | undefined {
    const s = this.string(name, opts);
    if (s === undefined || s === '') return s === '' ? undefined : s;
    const d = DATE_RE.test(s) ? new Date(s + 'T00:00:00Z') : new Date(NaN);
    if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== s) throw paramError(`${name} is invalid`);
    return s;
  }

  /** An ISO 8601 date-time; returns it normalised to UTC with milliseconds. */
  datetime(name: string, opts?: Opts): string | undefined {
    const s = this.string(name, opts);
    if (s === undefined || s === '') return undefined;
    // A '+' in an offset arrives as a space when the client did not encode it (spec rule 10).
    const fixed = s.replace(/ (\d{2}:?\d{2})$/, '+$1');
    if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(fixed)) {
      throw paramError(`${name} is invalid`);
    }
    // An impossible calendar day (2026-02-30) is refused as Ruby's DateTime.parse does, not rolled over.
    const [year, month, day] = fixed.slice(0, 10).split('-').map(Number) as [number, number, number];
    if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) throw paramError(`${name} is invalid`);
    // Without a zone a time is UTC (Ruby's DateTime.parse), not the server's local time.
    const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(fixed);
    const d = new Date(fixed.length === 10 ? fixed + 'T00:00:00Z' : fixed.replace(' ', 'T') + (zoned ? '' : 'Z'));
    // Beyond year 9999 in UTC, the ISO form (+010000-…) would no longer sort as a timestamp string.
    if (Number.isNaN(d.getTime()) || d.getUTCFullYear() > 9999) throw paramError(`${name} is invalid`);
    return d.toISOString();
  }

  hash(name: string, opts?: Opts): ParamHash | undefined {
    const v = this.value(name, opts);
    if (v === undefined) return undefined;
    if (!isHash(v)) throw paramError(`${name} is invalid`);
    return v;
  }

  /** Grape's `requires`: every name given (not null), else 400 naming the first missing one (`"a" not given`, spec document 1 §7.2). */
  requireAll(names: string[]): void {
    const missing = names.filter((n) => !this.has(n) || this.raw[n] === null);
    if (missing.length) throw missingAttributes(missing);
  }

  /** Grape's at_least_one_of. */
  requireAtLeastOne(names: string[]): void {
    if (!names.some((n) => this.has(n))) {
      throw paramError(`${names.join(', ')} are missing, at least one parameter must be provided`);
    }
  }

  /** Grape's mutually_exclusive. */
  mutuallyExclusive(names: string[]): void {
    const given = names.filter((n) => this.has(n));
    if (given.length > 1) throw paramError(`${given.join(', ')} are mutually exclusive`);
  }
}

/** Merges query, body and path parameters; path wins, then body, then query (as Grape does). */
export function mergeParams(query: unknown, body: unknown, path: unknown): ParamHash {
  const out: ParamHash = Object.create(null);
  for (const src of [query, body, path]) {
    if (!isHash(src)) continue;
    for (const k of Object.keys(src)) if (safeKey(k)) out[k] = (src as ParamHash)[k];
  }
  return out;
}

/**
 * Whether a raw query string or form body decodes to a NUL in any key or value. The parsed hash
 * can miss one the raw text holds (`a=%00&a[]=` keeps only the array), and the OAuth endpoints
 * read the raw text (raw-params.ts), so both are checked.
 */
export function rawHasNullByte(raw: string): boolean {
  if (raw.includes('\u0000')) return true;
  if (!raw.includes('%00')) return false;
  return raw.split(/[&=]/).some((part) => decode(part).includes('\u0000'));
}

/** Whether a parsed query, body or path-parameter hash holds a NUL anywhere (PostgreSQL text cannot). */
export function hasNullByte(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (depth > 40 || v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some((x) => hasNullByte(x, depth + 1));
  if (Buffer.isBuffer(v) || typeof (v as { pipe?: unknown }).pipe === 'function') return false;
  return Object.keys(v).some((k) => k.includes('\u0000') || hasNullByte((v as Record<string, unknown>)[k], depth + 1));
}
