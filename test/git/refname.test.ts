import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isSafeRevision, isValidBranchName, isValidRefName } from '../../src/git/refname.js';
import { cleanupTempDirs, makeTempDir, testGitEnv } from './helpers.js';

// Outside any repository, so that git does not expand "@" or "@{-1}" against a reflog.
const outside = makeTempDir('labwright-refname-');
afterAll(cleanupTempDirs);

function gitAccepts(args: string[]): boolean {
  const res = spawnSync('git', ['check-ref-format', ...args], { cwd: outside, env: testGitEnv({ GIT_CEILING_DIRECTORIES: outside }) });
  return res.status === 0;
}

const BRANCH_CASES = [
  'main', 'feature/x', 'feature/x/y', 'a..b', '-x', 'x-', 'x.lock', 'x.lock/y', 'y/x.lock', 'lock', '.lock', 'x.locked',
  '@', '@@', 'a@b', 'a@{b', '@{', 'a{b', 'a}b', 'x/', '/x', 'x//y', 'x/./y', 'x/../y', '.x', 'x/.y', 'x.', 'x/y.',
  'has space', 'tab\there', 'nl\nhere', 'del\x7fchar', 'bell\x07', 'tilde~1', 'caret^', 'colon:x', 'question?', 'star*',
  'bracket[', 'back\\slash', 'ünïcödé', 'emoji-🎉', '日本語/ブランチ', 'HEAD', 'head', 'HEAD/x', 'x/HEAD', 'refs/heads/x',
  'a.b', 'a/b.c/d', '1.0', 'v1.2.3', 'under_score', 'x@', '{x}', 'x"y', "x'y", 'x<y>', 'x|y', 'x!y', 'x#y', 'x%y',
  'x$y', 'x&y', 'x(y)', 'x,y', 'x;y', 'x=y', 'x+y', 'x`y', '.', '..', '', 'a..', '..a', 'a/..b', 'a/b..',
];

describe('isValidBranchName', () => {
  it.each(BRANCH_CASES.map((name) => [JSON.stringify(name), name]))('%s matches git check-ref-format --branch', (_label, name) => {
    expect(isValidBranchName(name)).toBe(gitAccepts(['--branch', name]));
  });

  it('covers at least 40 cases', () => {
    expect(BRANCH_CASES.length).toBeGreaterThanOrEqual(40);
  });

  it('rejects strings git cannot receive', () => {
    expect(isValidBranchName('nul\0char')).toBe(false);
    expect(isValidBranchName('lone\uD800surrogate')).toBe(false);
  });

  it('agrees with git on random names built from tricky characters', () => {
    const alphabet = fc.constantFrom('a', 'b', '.', '/', '@', '{', '}', '-', ' ', '~', '^', ':', '*', '[', '\\', 'l', 'o', 'c', 'k', 'é', '\x01', '?');
    fc.assert(
      fc.property(fc.array(alphabet, { minLength: 1, maxLength: 10 }).map((chars) => chars.join('')), (name) => {
        expect(isValidBranchName(name)).toBe(gitAccepts(['--branch', name]));
      }),
      { numRuns: 300 },
    );
  });
});

describe('isValidRefName', () => {
  const REF_CASES = ['refs/heads/main', 'refs/tags/v1', 'refs/heads', 'main', 'refs/heads/', 'refs//heads/x', 'refs/heads/x.lock',
    'refs/merge-requests/1/head', 'refs/heads/a..b', 'refs/heads/@', 'refs/heads/a@{1}', 'HEAD', 'refs/heads/.x', 'refs/heads/x.'];
  it.each(REF_CASES)('%s matches git check-ref-format', (ref) => {
    expect(isValidRefName(ref)).toBe(gitAccepts([ref]));
  });
});

describe('isSafeRevision', () => {
  it('refuses option-like and path-like revisions', () => {
    expect(isSafeRevision('main')).toBe(true);
    expect(isSafeRevision('main~2')).toBe(true);
    expect(isSafeRevision('--output=/tmp/x')).toBe(false);
    expect(isSafeRevision('main:secret')).toBe(false);
    expect(isSafeRevision('a\nb')).toBe(false);
    expect(isSafeRevision('')).toBe(false);
  });
});
