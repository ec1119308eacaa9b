// Reversible encryption for secrets Labwright must send on (a webhook's URL, token and headers):
// unlike tokens people present to us, these cannot be kept as digests. AES-256-GCM with a key
// derived from the instance secret, a fresh 12-byte nonce per value; the tag authenticates it.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const keys = new Map<string, Buffer>();

function keyFor(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 16) keys.clear();
    key = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.from('labwright'), Buffer.from('encrypted attributes'), 32));
    keys.set(secret, key);
  }
  return key;
}

export function encryptValue(secret: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

/** The plain text, or an error naming the value as unreadable (another instance secret, or damage). */
export function decryptValue(secret: string, stored: string): string {
  const [version, data] = stored.split(':', 2);
  if (version !== VERSION || !data) throw new Error('encrypted value has an unknown format');
  const raw = Buffer.from(data, 'base64url');
  if (raw.length < 28) throw new Error('encrypted value is truncated');
  const decipher = createDecipheriv('aes-256-gcm', keyFor(secret), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('encrypted value cannot be read with this instance secret');
  }
}
