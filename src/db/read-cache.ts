// The bounded store behind both read caches (issue 7): SQLite's, valid while the file's
// data_version is unchanged (database.ts, readRows), and PostgreSQL's, valid while no change notice
// has come and this process has written nothing (postgres-driver.ts). Callers decide validity and
// empty the store; this keeps results per statement and parameters within fixed bounds.

/**
 * Bounds (then the store starts over): estimated bytes (see the callers' estimates, which count
 * keys), entries, and the longest parameter key kept: long enough for a PostgreSQL batch of a page's
 * loads (for 100 merge requests, 808 ids and commit shas: 4,746 characters), while a search string
 * of 16 KB is read once, not kept.
 */
const MAX_CACHED_BYTES = 32 * 1024 * 1024;
const MAX_CACHED_ENTRIES = 20_000;
const MAX_CACHED_KEY = 8192;

export class ResultStore<S, V> {
  private readonly results = new Map<S, Map<string, V>>();
  private bytes = 0;
  private entries = 0;

  get(stmt: S, key: string): V | undefined {
    return this.results.get(stmt)?.get(key);
  }

  /** Keeps a result of about `bytes` (a result over a sixteenth of the bound is not kept). */
  set(stmt: S, key: string, value: V, bytes: number): void {
    if (bytes > MAX_CACHED_BYTES / 16) return;
    if (this.bytes + bytes > MAX_CACHED_BYTES || this.entries >= MAX_CACHED_ENTRIES) this.clear();
    let byParams = this.results.get(stmt);
    if (!byParams) this.results.set(stmt, (byParams = new Map()));
    byParams.set(key, value);
    this.bytes += bytes;
    this.entries++;
  }

  clear(): void {
    this.results.clear();
    this.bytes = 0;
    this.entries = 0;
  }

  stats(): { entries: number; bytes: number } {
    return { entries: this.entries, bytes: this.bytes };
  }
}

/**
 * Statement parameters as a cache key, with their types (SQLite compares 1 and '1' differently);
 * null for parameters that are not plain numbers, strings or nulls, or too long (not cached).
 */
export function paramsKey(params: readonly unknown[]): string | null {
  let key = '';
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (typeof p === 'number') key += `n${p}\u0000`;
    else if (typeof p === 'string') key += `s${p.length}:${p}`;
    else if (p === null) key += 'z';
    else return null;
    if (key.length > MAX_CACHED_KEY) return null;
  }
  return key;
}
