// Password hashing with Argon2id (low-entropy secrets need a slow KDF).
import { hash, verify } from '@node-rs/argon2';

export function hashPassword(password: string): Promise<string> {
  return hash(password, { memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

export async function verifyPassword(digest: string | null, password: string): Promise<boolean> {
  if (!digest) return false;
  try {
    return await verify(digest, password);
  } catch {
    return false;
  }
}
