// Fixed-window request counters, per IP for anonymous callers and per user otherwise. Counters live
// in Redis when REDIS_URL is set (shared by every process), else in this process.
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config.js';
import { ApiError } from './errors.js';

export interface RateLimiter {
  /** Counts one request; throws a 429 ApiError when the bucket is over its limit. */
  hit(bucket: 'unauthenticated' | 'authenticated', key: string): Promise<void>;
  close(): Promise<void>;
}

interface Window {
  count: number;
  resetAt: number;
}

class MemoryCounters {
  private windows = new Map<string, Window>();
  incr(key: string, periodMs: number): Window {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      if (this.windows.size > 50_000) this.sweep(now);
      w = { count: 0, resetAt: now + periodMs };
      this.windows.set(key, w);
    }
    w.count++;
    return w;
  }
  private sweep(now: number) {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}

/** The Redis client is loaded only when REDIS_URL is set (it is a large module to keep idle). */
export async function createRateLimiter(config: RateLimitConfig, redisUrl: string | null): Promise<RateLimiter> {
  const periodMs = config.periodSeconds * 1000;
  const memory = new MemoryCounters();
  const redis: Redis | null = redisUrl ? new (await import('ioredis')).Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true }) : null;
  redis?.on('error', () => {
    /* reported per request below; keep the process alive */
  });

  async function count(key: string): Promise<Window> {
    // While Redis is down (reconnecting), do not make every request wait for it.
    if (!redis || redis.status === 'reconnecting' || redis.status === 'close' || redis.status === 'end') return memory.incr(key, periodMs);
    const window = Math.floor(Date.now() / periodMs);
    const rkey = `labwright:rl:${key}:${window}`;
    try {
      const [[, n]] = (await redis.multi().incr(rkey).pexpire(rkey, periodMs + 1000).exec()) as [[unknown, number]];
      return { count: n, resetAt: (window + 1) * periodMs };
    } catch {
      // Redis unreachable: limit per process rather than fail every request with a 500.
      return memory.incr(key, periodMs);
    }
  }

  return {
    async hit(bucket, key) {
      const limit = bucket === 'authenticated' ? config.authenticatedPerPeriod : config.unauthenticatedPerPeriod;
      if (!limit) return;
      const w = await count(`${bucket}:${key}`);
      if (w.count <= limit) return;
      const retryAfter = Math.max(1, Math.ceil((w.resetAt - Date.now()) / 1000));
      const name = bucket === 'authenticated' ? 'throttle_authenticated_api' : 'throttle_unauthenticated_api';
      throw new ApiError(429, 'Retry later\n', {
        'Retry-After': String(retryAfter),
        'RateLimit-Name': name,
        'RateLimit-Limit': String(limit),
        'RateLimit-Observed': String(w.count),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(Math.ceil(w.resetAt / 1000)),
        'RateLimit-ResetTime': new Date(w.resetAt).toUTCString(),
      });
    },
    async close() {
      if (redis?.status === 'ready') await redis.quit().catch(() => undefined);
      else redis?.disconnect();
    },
  };
}
