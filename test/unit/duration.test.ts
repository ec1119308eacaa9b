import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/api/v4/merge-requests/time-routes.js';

describe('time tracking durations', () => {
  it('reads units written together or apart, and refuses unknown units', () => {
    expect(parseDuration('3h30m')).toBe(3 * 3600 + 30 * 60);
    expect(parseDuration('3h 30m')).toBe(3 * 3600 + 30 * 60);
    expect(parseDuration('1d2h')).toBe(8 * 3600 + 2 * 3600);
    expect(parseDuration('1mo')).toBe(parseDuration('4w'));
    expect(parseDuration('-30m')).toBe(-1800);
    expect(parseDuration('3x')).toBeNull();
    expect(parseDuration('3hours')).toBeNull();
  });
});
