// Row types of the OAuth provider's own tables (migration 0004): device grants, browser sessions,
// and the small counters that limit guessing.
import type { Generated } from 'kysely';

/** One device authorization request (RFC 8628). Codes are stored only as digests. */
export interface OauthDeviceGrantsTable {
  id: Generated<number>;
  application_id: number;
  device_code_digest: string;
  user_code_digest: string;
  scopes: string; // space separated
  expires_in: number;
  /** Seconds the device must wait between polls; only ever grows (slow_down). */
  interval: number;
  last_polling_at: string | null;
  /** pending | approved | denied | used */
  status: string;
  resource_owner_id: number | null;
  created_at: string;
  decided_at: string | null;
}

/** A signed-in browser. The cookie holds the id; the table holds only its digest. */
export interface WebSessionsTable {
  id: Generated<number>;
  session_digest: string;
  user_id: number;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
}

/** Fixed-window counters shared by every process (wrong user-code guesses per IP). */
export interface WebThrottlesTable {
  id: Generated<number>;
  key: string;
  window_start: string;
  count: number;
}
