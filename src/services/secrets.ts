// Token generation and keyed digests. High-entropy tokens need no slow KDF: an HMAC keyed by the
// instance secret makes the stored digest useless without the secret, and lookup stays O(1).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function tokenDigest(secret: string, token: string): string {
  return createHmac('sha256', secret).update(token).digest('hex');
}

/** A fresh secret: prefix + 32 random bytes, base64url. */
export function generateToken(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function generateHex(bytes = 32): string {
  return randomBytes(bytes).toString('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) return false;
  return timingSafeEqual(ab, bb);
}

export const PAT_PREFIX = 'glpat-';
