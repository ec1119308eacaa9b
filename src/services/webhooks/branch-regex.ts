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
/** Longest regex filter kept (GITLAB-COMPAT: GitLab takes 4,000 characters). */
const MAX_REGEX_FILTER = 255;
/**
 * The engine's work per character of a branch name grows with the pattern's size once counted
 * repetitions are written out (`(?:.*){16}` is sixteen copies): filters larger than this are
 * refused, so matching one against the longest branch name stays near a millisecond.
 */
const MAX_EXPANDED_SIZE = 64;

/**
 * The size of a pattern with its counted repetitions written out: every atom (a character, an
 * escape, a class) counts one, a group the sum of its parts, `{n,m}` multiplies what it follows
 * by its largest count. An estimate on the safe side; it does not have to parse exactly, the
 * engine refuses what is malformed.
 */
function expandedSize(pattern: string): number {
  const stack: number[] = [0];
  let last = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      i += 1;
      last = 1;
      stack[stack.length - 1]! += 1;
    } else if (ch === '[') {
      let j = i + 1;
      if (pattern[j] === '^') j += 1;
      if (pattern[j] === ']') j += 1;
      while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
      i = j;
      last = 1;
      stack[stack.length - 1]! += 1;
    } else if (ch === '(') {
      stack.push(0);
    } else if (ch === ')') {
      last = stack.length > 1 ? stack.pop()! : 0;
      stack[stack.length - 1]! += last;
    } else if (ch === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i));
      if (m) {
        const count = Math.max(Number(m[1]), m[2] ? Number(m[2]) : 0, 1);
        stack[stack.length - 1]! += last * (count - 1);
        last *= count;
        i += m[0].length - 1;
      } else {
        last = 1;
        stack[stack.length - 1]! += 1;
      }
    } else if (ch === '*' || ch === '+' || ch === '?' || ch === '|') {
      stack[stack.length - 1]! += 1;
    } else {
      last = 1;
      stack[stack.length - 1]! += 1;
    }
  }
  return stack.reduce((a, b) => a + b, 0);
}
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
  return pattern.length <= MAX_REGEX_FILTER && expandedSize(pattern) <= MAX_EXPANDED_SIZE && compile(pattern) !== null;
}

/** Whether `branch` matches the filter (unanchored, as GitLab's `===`); a pattern that does not compile matches nothing. */
export function regexFilterMatches(pattern: string, branch: string): boolean {
  let re = cache.get(pattern);
  if (re === undefined) {
    re = regexFilterValid(pattern) ? compile(pattern) : null;
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, re);
  }
  return re !== null && re.test(branch);
}
