// Regular-expression branch filters, matched in linear time whatever the pattern (GitLab uses RE2,
// Gitlab::UntrustedRegexp, for the same reason): patterns run on V8's linear-time regular
// expression engine (the `l` flag), which refuses at compile time what it cannot run in linear
// time. GITLAB-COMPAT: the syntax is JavaScript's, not RE2's; RE2-only forms (`\pL`, inline flags
// such as `(?i)`) and what the engine refuses (backreferences, lookaround, counted repetitions
// above 16, Unicode property classes, case-insensitive matching) are not valid filters.
import { setFlagsFromString } from 'node:v8';

// The engine is behind a V8 flag, read when a regular expression with the `l` flag is compiled.
setFlagsFromString('--enable-experimental-regexp-engine');

const CACHE_SIZE = 256;
const cache = new Map<string, RegExp | null>();

function compile(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern, 'l');
  } catch {
    return null;
  }
}

/** Whether a pattern may be saved as a branch filter. */
export function regexFilterValid(pattern: string): boolean {
  return compile(pattern) !== null;
}

/** Whether `branch` matches the filter (unanchored, as GitLab's `===`); a pattern that does not compile matches nothing. */
export function regexFilterMatches(pattern: string, branch: string): boolean {
  let re = cache.get(pattern);
  if (re === undefined) {
    re = compile(pattern);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, re);
  }
  return re !== null && re.test(branch);
}
