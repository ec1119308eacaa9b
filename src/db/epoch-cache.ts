// Short-lived caches of values derived from the database (list totals, namespace statistics,
// resolved tokens).
import type { Database } from './database.js';

/** Longer keys are not kept. */
const MAX_KEY_LENGTH = 2048;

/** The state a cached value was derived in: read both before the reads it comes from. */
export interface Mark {
  epoch: number;
  generation: number | null;
}

interface Entry<V> {
  value: V;
  epoch: number;
  generation: number | null;
  /** performance.now() when stored (monotonic: a clock step neither stretches nor ends a TTL). */
  at: number;
}

/**
 * Values derived from one database, reused for at most `ttlMs` while this process has written
 * nothing to it (`Database.writeEpoch`) and the read cache has not started over
 * (`Database.readGeneration`, when it is on). Writes through this process are seen at once; writes
 * by another process as soon as the read cache sees them, or within `ttlMs` with it off. So a
 * value from here is never older than the reads of the same request, and what is derived from
 * both (a kept response) is never stale. Each database has its own entries, so several apps in one
 * process (tests) never see each other's figures.
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
    // Both null with the read cache off; one null (PostgreSQL's listener down now or then): not the same state.
    if (hit.generation !== database.readGeneration()) return undefined;
    return hit.value;
  }

  /** The state to store a value with: take it before the first query the value is derived from. */
  static mark(database: Database): Mark {
    return { epoch: database.writeEpoch(), generation: database.readGeneration() };
  }

  /** Stores a value computed from reads that started at `mark`. */
  set(database: Database, key: string, value: V, mark: Mark): void {
    // A key that long carries a request's own text (a 16 KB search): kept, 1,000 of them held 49 MB.
    if (key.length > MAX_KEY_LENGTH) return;
    let map = this.byDatabase.get(database);
    if (!map) this.byDatabase.set(database, (map = new Map()));
    if (map.size >= this.maxEntries) map.clear();
    map.set(key, { value, epoch: mark.epoch, generation: mark.generation, at: performance.now() });
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
