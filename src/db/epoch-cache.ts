// Short-lived caches of values derived from the database (list totals, namespace statistics,
// resolved tokens).
import type { Database } from './database.js';

/** Longer keys are not kept. */
const MAX_KEY_LENGTH = 2048;

interface Entry<V> {
  value: V;
  epoch: number;
  /** performance.now() when stored (monotonic: a clock step neither stretches nor ends a TTL). */
  at: number;
}

/**
 * Values derived from one database, reused for at most `ttlMs` while this process has written
 * nothing to it (`Database.writeEpoch`). Writes through this process are seen at once; writes by
 * another process on the same database within `ttlMs` at most. Each database has its own entries,
 * so several apps in one process (tests) never see each other's figures.
 */
export class EpochCache<V> {
  private readonly byDatabase = new WeakMap<Database, Map<string, Entry<V>>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 1000,
  ) {}

  get(database: Database, key: string): V | undefined {
    const hit = this.byDatabase.get(database)?.get(key);
    if (!hit || hit.epoch !== database.writeEpoch() || performance.now() - hit.at >= this.ttlMs) return undefined;
    return hit.value;
  }

  /** Stores a value computed from reads that started at `epoch` (read it before the first query). */
  set(database: Database, key: string, value: V, epoch: number): void {
    // A key that long carries a request's own text (a 16 KB search): kept, 1,000 of them held 49 MB.
    if (key.length > MAX_KEY_LENGTH) return;
    let map = this.byDatabase.get(database);
    if (!map) this.byDatabase.set(database, (map = new Map()));
    if (map.size >= this.maxEntries) map.clear();
    map.set(key, { value, epoch, at: performance.now() });
  }
}

/** Freezes a value and everything reachable from it (cached values shared by requests: read only). */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const inner of Object.values(v)) deepFreeze(inner);
  }
  return v;
}
