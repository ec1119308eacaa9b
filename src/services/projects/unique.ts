// Two writers racing past the same "is it free?" check end at a unique index; that is a client
// conflict, not a server error.

/** True for a unique-constraint violation on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Runs fn, turning a unique violation into `onConflict()`'s error. */
export async function onUniqueViolation<T>(fn: () => Promise<T>, onConflict: () => Error): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw onConflict();
    throw err;
  }
}
