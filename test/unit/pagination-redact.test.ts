// Pure helpers: the Link query builder (Rack's to_query), log redaction of secrets in URLs, and
// token digests.
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/app.js';
import { toQuery } from '../../src/http/pagination.js';
import { generateToken, PAT_PREFIX, tokenDigest } from '../../src/services/secrets.js';

describe('toQuery', () => {
  it('sorts keys, escapes commas and spaces, writes nested forms', () => {
    expect(toQuery({ sort: 'asc', labels: 'a,b c', page: '2' })).toBe('labels=a%2Cb%20c&page=2&sort=asc');
    expect(toQuery({ ids: ['1', '2'], h: { b: '2', a: '1' } })).toBe('h%5Ba%5D=1&h%5Bb%5D=2&ids%5B%5D=1&ids%5B%5D=2');
  });
  it('never produces a character that breaks Link parsing (> , ;)', () => {
    const q = toQuery({ x: '<a>;b,"c"' });
    expect(q).not.toMatch(/[<>,;"]/);
  });
});

describe('redactUrl', () => {
  it('filters every secret query parameter, keeps the rest', () => {
    expect(redactUrl('/api/v4/user?private_token=abc&per_page=2')).toBe('/api/v4/user?private_token=[FILTERED]&per_page=2');
    expect(redactUrl('/api/v4/user?a=1&access_token=abc')).toBe('/api/v4/user?a=1&access_token=[FILTERED]');
    expect(redactUrl('/oauth/token?code=c&client_secret=s&refresh_token=r&password=p&device_code=d&token=t')).toBe(
      '/oauth/token?code=[FILTERED]&client_secret=[FILTERED]&refresh_token=[FILTERED]&password=[FILTERED]&device_code=[FILTERED]&token=[FILTERED]',
    );
    expect(redactUrl('/api/v4/user?PRIVATE_TOKEN=abc')).toBe('/api/v4/user?PRIVATE_TOKEN=[FILTERED]');
  });

  it('filters webhook secrets, nested ones too (url_variables[0][value], custom_headers[][value])', () => {
    expect(redactUrl('/api/v4/projects/1/hooks?url=http://u:p@h/&url_variables[0][key]=k&url_variables[0][value]=v')).toBe(
      '/api/v4/projects/1/hooks?url=[FILTERED]&url_variables[0][key]=[FILTERED]&url_variables[0][value]=[FILTERED]',
    );
    expect(redactUrl('/api/v4/projects/1/hooks/2/custom_headers/X?value=s&custom_headers%5B%5D%5Bvalue%5D=t')).toBe(
      '/api/v4/projects/1/hooks/2/custom_headers/X?value=[FILTERED]&custom_headers%5B%5D%5Bvalue%5D=[FILTERED]',
    );
  });
  it('leaves look-alike parameter names alone', () => {
    expect(redactUrl('/x?my_private_token=abc&tokens=2')).toBe('/x?my_private_token=abc&tokens=2');
  });
  it('filters percent-encoded parameter names too', () => {
    const out = redactUrl('/api/v4/user?private%5Ftoken=secret-value');
    expect(out).not.toContain('secret-value');
  });
});

describe('secrets', () => {
  it('tokenDigest is keyed and deterministic', () => {
    expect(tokenDigest('k', 't')).toBe(tokenDigest('k', 't'));
    expect(tokenDigest('k', 't')).not.toBe(tokenDigest('k2', 't'));
    expect(tokenDigest('k', 't')).toMatch(/^[0-9a-f]{64}$/);
  });
  it('generated tokens are long, unique and carry the prefix', () => {
    const a = generateToken(PAT_PREFIX);
    expect(a.startsWith('glpat-')).toBe(true);
    expect(a.length).toBeGreaterThanOrEqual(6 + 43);
    expect(generateToken()).not.toBe(generateToken());
  });
});
