// Rack-style parameter parsing and the typed readers (spec document 1 §4.1 rules 9–11).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { mergeParams, nestFields, Params, parseBoolean, parseNested } from '../../src/http/params.js';

const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

function errorOf(fn: () => unknown): { status: number; body: unknown } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, body: err.body };
    throw err;
  }
  throw new Error('no error');
}

describe('parseNested', () => {
  it('plain pairs, + as space, percent-decoding, last value wins', () => {
    expect(plain(parseNested('a=1&b=x+y&c=%2B1&a=2'))).toEqual({ a: '2', b: 'x y', c: '+1' });
  });

  it('name[] arrays', () => {
    expect(plain(parseNested('ids[]=1&ids[]=2&ids%5B%5D=3'))).toEqual({ ids: ['1', '2', '3'] });
  });

  it('name[key] hashes, nested', () => {
    expect(plain(parseNested('h[a]=1&h[b][c]=2'))).toEqual({ h: { a: '1', b: { c: '2' } } });
  });

  it('name[0][key] arrays of hashes, ordered by index', () => {
    expect(plain(parseNested('v[1][key]=b&v[0][key]=a&v[0][value]=1&v[1][value]=2'))).toEqual({
      v: [
        { key: 'a', value: '1' },
        { key: 'b', value: '2' },
      ],
    });
  });

  it('name[][key] arrays of hashes (Rack rule: a repeated key starts a new hash)', () => {
    expect(plain(parseNested('v[][k]=a&v[][v]=1&v[][k]=b&v[][v]=2'))).toEqual({
      v: [
        { k: 'a', v: '1' },
        { k: 'b', v: '2' },
      ],
    });
  });

  it('a key without a value is an empty string; empty pairs and keys are skipped', () => {
    expect(plain(parseNested('a&&=x&b='))).toEqual({ a: '', b: '' });
  });

  it('malformed brackets keep the key as it is', () => {
    expect(plain(parseNested('a[b=1&c]d=2&[x]=3'))).toEqual({ 'a[b': '1', 'c]d': '2', '[x]': '3' });
  });

  it('invalid percent-encoding is kept as sent, never thrown', () => {
    expect(plain(parseNested('a=%E0%A4%A&b=%'))).toEqual({ a: '%E0%A4%A', b: '%' });
  });

  it('never reaches Object.prototype', () => {
    const out = parseNested('__proto__[polluted]=1&constructor[prototype][x]=1&a[__proto__][y]=1');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.getPrototypeOf(out)).toBeNull();
  });

  it('never throws on any input', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', '[', ']', '=', '&', '%', '+', '0', '1', '_') }), (qs) => {
        parseNested(qs);
        expect(({} as Record<string, unknown>).a).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});

describe('nestFields (multipart)', () => {
  it('nests bracket names like a query string and keeps file contents as they are', () => {
    const file = Buffer.from('x');
    expect(plain(nestFields({ 'scopes[]': ['api', 'read_user'], 'h[k]': 'v', 'v[0][key]': 'a', name: 'n' }))).toEqual({
      scopes: ['api', 'read_user'],
      h: { k: 'v' },
      v: [{ key: 'a' }],
      name: 'n',
    });
    expect(nestFields({ file }).file).toBe(file);
    expect(plain(nestFields({ 'one[]': 'only' }))).toEqual({ one: ['only'] });
  });
});

describe('parseBoolean', () => {
  it('accepts true/false/True/False/1/0 and Grape’s other forms', () => {
    for (const v of ['true', 'True', 'TRUE', '1', 't', 'yes', 'on', true, 1]) expect(parseBoolean(v), String(v)).toBe(true);
    for (const v of ['false', 'False', '0', 'f', 'no', 'off', false, 0]) expect(parseBoolean(v), String(v)).toBe(false);
  });
  it('refuses null, empty and anything else', () => {
    for (const v of [null, undefined, '', 'null', '2', 2, 'maybe', [], {}, ['true']]) expect(parseBoolean(v), JSON.stringify(v)).toBeUndefined();
  });
});

describe('Params readers', () => {
  const p = (raw: Record<string, unknown>) => new Params(raw as never);

  it('bool: null is "x is invalid"', () => {
    expect(errorOf(() => p({ x: null }).bool('x'))).toEqual({ status: 400, body: { error: 'x is invalid' } });
    expect(p({}).bool('x')).toBeUndefined();
  });

  it('int: integers only, bounds give "does not have a valid value"', () => {
    expect(p({ n: '42' }).int('n')).toBe(42);
    expect(p({ n: 7 }).int('n')).toBe(7);
    for (const bad of ['4.2', 'x', '', '1e3', [], {}, '99999999999999999999']) {
      expect(errorOf(() => p({ n: bad }).int('n')).body, JSON.stringify(bad)).toEqual({ error: 'n is invalid' });
    }
    expect(errorOf(() => p({ n: '-1' }).int('n', { min: 0 })).body).toEqual({ error: 'n does not have a valid value' });
  });

  it('string: required gives the "not given" message, hashes are invalid, max and blank checked', () => {
    expect(errorOf(() => p({}).string('title', { required: true }))).toEqual({ status: 400, body: { message: '400 Bad request - "title" not given' } });
    expect(errorOf(() => p({ t: { a: '1' } }).string('t')).body).toEqual({ error: 't is invalid' });
    expect(errorOf(() => p({ t: 'abc' }).string('t', { max: 2 })).body).toEqual({ error: 't is too long (maximum is 2 characters)' });
    expect(errorOf(() => p({ t: '  ' }).string('t', { allowBlank: false })).body).toEqual({ error: 't is empty' });
  });

  it('datetime: %2B offsets, a + turned into a space, Z, and date-only forms', () => {
    expect(p({ t: '2020-01-01T00:00:00+01:00' }).datetime('t')).toBe('2019-12-31T23:00:00.000Z');
    expect(p({ t: '2020-01-01T00:00:00 01:00' }).datetime('t')).toBe('2019-12-31T23:00:00.000Z');
    expect(p({ t: '2020-01-01T00:00:00Z' }).datetime('t')).toBe('2020-01-01T00:00:00.000Z');
    expect(p({ t: '2020-01-01' }).datetime('t')).toBe('2020-01-01T00:00:00.000Z');
    for (const bad of ['yesterday', '2020-13-01T00:00:00Z', '2020-01-01T25:00:00Z']) {
      expect(errorOf(() => p({ t: bad }).datetime('t')).body, bad).toEqual({ error: 't is invalid' });
    }
  });

  it('date: real calendar dates only', () => {
    expect(p({ d: '2024-02-29' }).date('d')).toBe('2024-02-29');
    expect(errorOf(() => p({ d: '2023-02-29' }).date('d')).body).toEqual({ error: 'd is invalid' });
  });

  it('stringArray and intArray: name[], JSON arrays, comma lists', () => {
    expect(p({ a: ['x', 'y'] }).stringArray('a')).toEqual(['x', 'y']);
    expect(p({ a: 'x,y' }).stringArray('a', { comma: true })).toEqual(['x', 'y']);
    expect(p({ a: ['1', '2,3'] }).intArray('a', { comma: true })).toEqual([1, 2, 3]);
    expect(errorOf(() => p({ a: ['1', 'x'] }).intArray('a')).body).toEqual({ error: 'a is invalid' });
    expect(errorOf(() => p({ a: [{ k: 1 }] }).stringArray('a')).body).toEqual({ error: 'a is invalid' });
  });

  it('enum, requireAtLeastOne, mutuallyExclusive', () => {
    expect(errorOf(() => p({ s: 'x' }).enum('s', ['a', 'b'])).body).toEqual({ error: 's does not have a valid value' });
    expect(errorOf(() => p({}).requireAtLeastOne(['a', 'b'])).body).toEqual({ error: 'a, b are missing, at least one parameter must be provided' });
    expect(errorOf(() => p({ a: 1, b: 2 }).mutuallyExclusive(['a', 'b'])).body).toEqual({ error: 'a, b are mutually exclusive' });
  });
});

describe('mergeParams', () => {
  it('path wins over body, body over query; prototype keys dropped', () => {
    const merged = mergeParams({ id: 'q', a: 'q', b: 'q' }, JSON.parse('{"a":"b","id":"b","__proto__":{"x":1}}'), { id: 'p' });
    expect(plain(merged)).toEqual({ id: 'p', a: 'b', b: 'q' });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('nestFields with uploaded files', () => {
  it('keeps a file a Buffer (its bytes are not walked as a hash of numeric keys)', () => {
    const file = Buffer.from('PNG');
    const out = nestFields({ file, 'scopes[]': ['api'] });
    expect(out.file).toBe(file);
    expect(out.scopes).toEqual(['api']);
  });
});
