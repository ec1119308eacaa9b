// Failures the fuzzer finds in modules this test does not own, reported to their owners. Each entry
// is matched narrowly (route, problem and request target or body) and printed on every run; delete it once fixed.
import type { FuzzFailure } from './run.js';

interface Known {
  route: string;
  problem: string;
  target: RegExp;
  why: string;
}

export const KNOWN_FAILURES: Known[] = [];

export function isKnown(f: FuzzFailure): Known | undefined {
  return KNOWN_FAILURES.find((k) => k.route === f.route && k.problem === f.problem && k.target.test(`${f.target} ${f.body}`));
}
