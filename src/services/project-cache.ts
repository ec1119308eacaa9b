// Per-project values read on hot paths (protected ref rules, webhooks) that change rarely: kept
// until a write of this process to them (changed()), until the read cache sees another process's
// write, and never longer than a second (another process's change is seen within that even with
// the read cache off). Other writes (merge requests, notes) do not throw them away.
import type { AppContext } from '../context.js';

const TTL_MS = 1000;
const MAX_CACHED = 10_000;

interface Entry<T> {
  value: T;
  version: number;
  generation: number | null;
  at: number;
}

export class ProjectCache<T> {
  private version = 0;
  private readonly byDatabase = new WeakMap<object, Map<number, Entry<T>>>();

  constructor(private readonly load: (app: AppContext, projectId: number) => Promise<T>) {}

  /** Called by this process's writers once their change has committed. */
  changed(): void {
    this.version += 1;
  }

  async get(app: AppContext, projectId: number): Promise<T> {
    let map = this.byDatabase.get(app.database);
    if (!map) this.byDatabase.set(app.database, (map = new Map()));
    const hit = map.get(projectId);
    const generation = app.database.readGeneration();
    if (hit && hit.version === this.version && hit.generation === generation && performance.now() - hit.at < TTL_MS) return hit.value;
    const version = this.version;
    const at = performance.now();
    const value = await this.load(app, projectId);
    if (map.size >= MAX_CACHED) map.clear();
    map.set(projectId, { value, version, generation, at });
    return value;
  }
}
