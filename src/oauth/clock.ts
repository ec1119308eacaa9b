// The provider's notion of "now". Code, device-code and lock-out expiry read this clock so that
// in-process tests can move time forward instead of sleeping for ten minutes.
let offsetMs = 0;

export function now(): number {
  return Date.now() + offsetMs;
}

export function nowIsoClock(): string {
  return new Date(now()).toISOString();
}

/** Tests only: shift the clock by ms (cumulative); `resetClock()` puts it back. */
export function advanceClock(ms: number): void {
  offsetMs += ms;
}

export function resetClock(): void {
  offsetMs = 0;
}
