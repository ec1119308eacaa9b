// GitLab's search rate limit on merge request lists (`validate_search_rate_limit!`): per user (or
// per IP when anonymous) and per minute. LABWRIGHT_SEARCH_RATE_LIMIT (default 30) and
// LABWRIGHT_SEARCH_RATE_LIMIT_UNAUTHENTICATED (default 10); 0 disables.
import { FixedWindows } from '../../http/fixed-window.js';

const windows = new FixedWindows();

function limitFor(authenticated: boolean): number {
  const raw = authenticated ? process.env.LABWRIGHT_SEARCH_RATE_LIMIT : process.env.LABWRIGHT_SEARCH_RATE_LIMIT_UNAUTHENTICATED;
  const n = raw === undefined || raw === '' ? (authenticated ? 30 : 10) : Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : authenticated ? 30 : 10;
}

export function checkSearchRateLimit(key: string, authenticated: boolean, now = Date.now()): void {
  const limit = limitFor(authenticated);
  if (limit === 0) return;
  windows.hit(key, limit, now);
}
