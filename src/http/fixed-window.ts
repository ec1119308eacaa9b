// GitLab's ApplicationRateLimiter for single endpoints: a count per key in a fixed window, and the
// 429 it answers past the limit. GITLAB-COMPAT: counted in this process (not shared through Redis
// like the request throttles).
import { ApiError } from './errors.js';

export class FixedWindows {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly windowMs = 60_000) {}

  /** Counts a hit; past `limit` in the window, the 429 with Retry-After is thrown. */
  hit(key: string, limit: number, now = Date.now()): void {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
      if (this.windows.size > 100_000) for (const [k, v] of this.windows) if (now - v.start >= this.windowMs) this.windows.delete(k);
    }
    w.count += 1;
    if (w.count > limit) {
      const retry = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
      throw new ApiError(429, { message: { error: 'This endpoint has been requested too many times. Try again later.' } }, { 'Retry-After': String(retry) });
    }
  }
}
