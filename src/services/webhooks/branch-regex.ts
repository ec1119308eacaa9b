// Regular-expression branch filters in RE2 syntax (GitLab's Gitlab::UntrustedRegexp), through
// re2-wasm's compiled programs: matching takes linear time whatever the pattern. Its programs live
// in a fixed 16 MB WebAssembly heap that JavaScript's collector does not see, so every program is
// freed explicitly: at once after a check, on eviction from the small cache the push path uses.
// Compiling a pattern with large counted repetitions takes long (`.{1,1000}`: ~0.4 s) and blocks
// the process meanwhile, so repetition bounds above 100 are refused before compiling.
import { createRequire } from 'node:module';
import type { WrappedRE2 as WrappedRE2Class } from 're2-wasm/build/wasm/re2.js';

// An Emscripten module in CommonJS whose exports Node's ESM loader cannot list: required.
const { WrappedRE2 } = createRequire(import.meta.url)('re2-wasm/build/wasm/re2.js') as { WrappedRE2: typeof WrappedRE2Class };

type Program = InstanceType<typeof WrappedRE2Class> & { delete(): void };

const MAX_REPEAT = 100;
/** A program that took longer than this to compile is refused when saved (it would on every cache miss). */
const MAX_COMPILE_MS = 50;
const CACHE_SIZE = 16;

/** Counted repetitions (`{n}`, `{n,}`, `{n,m}`) with a bound above MAX_REPEAT. */
function largeRepeat(pattern: string): boolean {
  for (const m of pattern.matchAll(/\{(\d+)(?:,(\d*))?\}/g)) {
    if (Number(m[1]) > MAX_REPEAT || (m[2] !== undefined && m[2] !== '' && Number(m[2]) > MAX_REPEAT)) return true;
  }
  return false;
}

function compile(pattern: string): { program: Program; ms: number } | null {
  if (largeRepeat(pattern)) return null;
  const started = performance.now();
  let program: Program;
  try {
    program = new WrappedRE2(pattern, false, false, false) as Program;
  } catch {
    // The WebAssembly heap is full: nothing compiles until programs are freed.
    clearCache();
    return null;
  }
  if (!program.ok()) {
    program.delete();
    return null;
  }
  return { program, ms: performance.now() - started };
}

/** Whether a pattern may be saved as a branch filter. */
export function regexFilterValid(pattern: string): boolean {
  const c = compile(pattern);
  if (!c) return false;
  c.program.delete();
  return c.ms <= MAX_COMPILE_MS;
}

const cache = new Map<string, Program | null>();

function clearCache(): void {
  for (const p of cache.values()) p?.delete();
  cache.clear();
}

/** Whether `branch` matches the filter (unanchored, as GitLab's `===`); a pattern that does not compile matches nothing. */
export function regexFilterMatches(pattern: string, branch: string): boolean {
  let program = cache.get(pattern);
  if (program === undefined) {
    program = compile(pattern)?.program ?? null;
    if (cache.size >= CACHE_SIZE) {
      const [oldest, evicted] = cache.entries().next().value as [string, Program | null];
      evicted?.delete();
      cache.delete(oldest);
    }
    cache.set(pattern, program);
  } else {
    // Most recently used last.
    cache.delete(pattern);
    cache.set(pattern, program);
  }
  return program !== null && program.match(branch, 0, false).index >= 0;
}
