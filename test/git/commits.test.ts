import { describe, expect, it } from 'vitest';
import { commitTitle, identityEnv, parseLog, toGitDate } from '../../src/git/commits.js';
import { GitError } from '../../src/git/errors.js';

describe('toGitDate', () => {
  it('keeps the offset of ISO strings', () => {
    expect(toGitDate('2024-01-02T03:04:05+01:00')).toBe('@1704161045 +0100');
    expect(toGitDate('2024-01-02T03:04:05Z')).toBe('@1704164645 +0000');
    expect(toGitDate('2024-01-02T03:04:05.123-05:30')).toBe('@1704184445 -0530');
    expect(toGitDate('2024-01-02T03:04:05')).toBe('@1704164645 +0000');
  });

  it('accepts Date objects and raw git dates', () => {
    expect(toGitDate(new Date('2024-01-02T03:04:05Z'))).toBe('@1704164645 +0000');
    expect(toGitDate('1704164645 +0200')).toBe('@1704164645 +0200');
    expect(toGitDate('@0 +0000')).toBe('@0 +0000');
  });

  it('refuses what git would guess at', () => {
    for (const bad of ['yesterday', '2 weeks ago', 'not a date', '2024-13-45T00:00:00Z']) {
      expect(() => toGitDate(bad), bad).toThrow(GitError);
    }
    expect(() => toGitDate(new Date('invalid'))).toThrow(GitError);
  });
});

describe('identities and titles', () => {
  it('cleans identities for commit-tree', () => {
    const env = identityEnv({ name: ' Eve <evil>\n', email: '<eve@example.com>', date: '2024-01-02T03:04:05Z' });
    expect(env).toMatchObject({ GIT_AUTHOR_NAME: 'Eve evil', GIT_AUTHOR_EMAIL: 'eve@example.com', GIT_COMMITTER_NAME: 'Eve evil' });
    expect(() => identityEnv({ name: '<>', email: 'x@y' })).toThrow(GitError);
  });

  it('takes the first line as title', () => {
    expect(commitTitle('Subject\r\n\r\nBody')).toBe('Subject');
    expect(commitTitle('Only')).toBe('Only');
    expect(commitTitle('')).toBe('');
  });

  it('parses an empty log', () => {
    expect(parseLog('')).toEqual([]);
  });
});
