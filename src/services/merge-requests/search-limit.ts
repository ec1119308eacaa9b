// GitLab's search rate limit on merge request lists (`validate_search_rate_limit!`): per user (or
// per IP when anonymous) and per minute. LABWRIGHT_SEARCH_RATE_LIMIT (default 30) and
// LABWRIGHT_SEARCH_RATE_LIMIT_UNAUTHENTICATED (default 10); 0 disables.
// GITLAB-COMPAT: counted in this process (not shared through Redis like the request throttles).
import { ApiError } from '../../http/errors.js';

const WINDOW_MS = 60_000;
const windows = new Map<string, { start: number; count: number }>();

function limitFor(authenticated: boolean): number {
  const raw = authenticated ? process.env.LABWRIGHT_SEARCH_RATE_LIMIT : process.env.LABWRIGHT_SEARCH_RATE_LIMIT_UNAUTHENTICATED;
  const n = raw === undefined || raw === '' ? (authenticated ? 30 : 10) : Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : authenticated ? 30 : 10;
}

export function checkSearchRateLimit(key: string, authenticated: boolean, now = Date.now()): void {
  const limit = limitFor(authenticated);
  if (limit === 0) return;
  let w = windows.get(key);
  if (!w || now - w.start >= WINDOW_MS) {
    w = { start: now, count: 0 };
    windows.set(key, w);
    if (windows.size > 100_000) for (const [k, v] of windows) if (now - v.start >= WINDOW_MS) windows.delete(k);
  }
  w.count += 1;
  if (w.count > limit) {
    const retry = Math.max(1, Math.ceil((w.start + WINDOW_MS - now) / 1000));
    throw new ApiError(429, { message: { error: 'This endpoint has been requested too many times. Try again later.' } }, { 'Retry-After': String(retry) });
  }
}
