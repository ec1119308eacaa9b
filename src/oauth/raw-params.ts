// OAuth parameters read from the raw query string and form body, so that a parameter sent twice is
// seen (RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once").
// The app's Rack-style parser keeps only the last value, so the OAuth scope parses forms itself.
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The form body as sent, set by the OAuth scope's content-type parser. */
    lwRawForm?: string;
    /** The file names of a multipart body's file fields, by field (set by the multipart parser in app.ts). */
    lwUploadNames?: Record<string, string>;
  }
}

function decode(s: string): string {
  const plus = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}

function addPairs(out: Map<string, string[]>, qs: string): void {
  for (const pair of qs.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1));
    if (!key) continue;
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  }
}

export class OAuthParams {
  constructor(private readonly pairs: Map<string, string[]>) {}

  static fromRequest(req: FastifyRequest, opts: { query?: boolean; body?: boolean } = { query: true, body: true }): OAuthParams {
    const pairs = new Map<string, string[]>();
    if (opts.query !== false) {
      const q = req.url.indexOf('?');
      if (q >= 0) addPairs(pairs, req.url.slice(q + 1));
    }
    if (opts.body !== false) {
      if (typeof req.lwRawForm === 'string') addPairs(pairs, req.lwRawForm);
      else if (req.body && typeof req.body === 'object') {
        // JSON or multipart bodies: one value per key by construction.
        for (const [k, v] of Object.entries(req.body as Record<string, unknown>)) {
          if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
            const list = pairs.get(k);
            if (list) list.push(String(v));
            else pairs.set(k, [String(v)]);
          }
        }
      }
    }
    return new OAuthParams(pairs);
  }

  /** The single value of a parameter; undefined when absent. Empty values count as absent. */
  get(name: string): string | undefined {
    const v = this.pairs.get(name);
    if (!v || v[0] === '') return undefined;
    return v[0];
  }

  /** True when the value is present and non-empty. */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  isDuplicated(name: string): boolean {
    return (this.pairs.get(name)?.length ?? 0) > 1;
  }

  /** The first of the names that was sent more than once, or undefined. */
  firstDuplicate(names?: readonly string[]): string | undefined {
    for (const [k, v] of this.pairs) {
      if (v.length > 1 && (!names || names.includes(k))) return k;
    }
    return undefined;
  }
}
