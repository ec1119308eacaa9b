// GitLab's RefMatcher without backtracking: the same answers as the anchored regular expression
// GitLab builds (`*` as `.*?`, the rest literal) on every small pattern and name, and quick on the
// patterns that make such an expression take exponential time (the test would time out).
import { describe, expect, it } from 'vitest';
import { refMatcher } from '../../src/services/repository/protected-refs.js';

function viaRegex(pattern: string, ref: string): boolean {
  const body = pattern.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('.*?');
  return new RegExp(`^${body}$`, 's').test(ref);
}

function* words(alphabet: string, max: number): Generator<string> {
  yield '';
  let level = [''];
  for (let n = 1; n <= max; n++) {
    const next: string[] = [];
    for (const w of level) for (const ch of alphabet) next.push(w + ch);
    yield* next;
    level = next;
  }
}

describe('refMatcher', () => {
  it('agrees with the regular expression on every pattern and name up to five characters', () => {
    const names = [...words('ab/', 5)];
    let checked = 0;
    for (const pattern of words('ab*', 5)) {
      const match = refMatcher(pattern);
      for (const name of names) {
        expect(match(name), `${pattern} ~ ${name}`).toBe(viaRegex(pattern, name));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100_000);
  });

  it('treats everything but * literally', () => {
    expect(refMatcher('release/v1.*')('release/v1.2')).toBe(true);
    expect(refMatcher('release/v1.*')('release/v102')).toBe(false);
    expect(refMatcher('feat[1]-*')('feat[1]-x')).toBe(true);
    expect(refMatcher('a?')('ab')).toBe(false);
  });

  it('decides a pattern of many stars on a long almost-matching name (a backtracking expression would not finish)', () => {
    const match = refMatcher(`${'*a'.repeat(30)}*b`);
    for (let i = 0; i < 100; i++) expect(match('a'.repeat(1000))).toBe(false);
    expect(match(`${'a'.repeat(1000)}b`)).toBe(true);
  });
});
