// The response refresher's thread (http/refresher.ts): Labwright's routes on a read-only connection
// to the server's database, fed only by the server's refresh rounds. Each batch of responses is made
// from one snapshot (Database.pinRead), so that the store they replace shows one state of the data.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { REFRESH_HEADER } from './http/auth.js';
import { pendingTimeFlip, type MadeResponse, type Recipe, type RefreshBatch } from './http/kept-response.js';

type App = Awaited<ReturnType<typeof buildApp>>;

/** Whether this thread was started as the response refresher. */
export function isRefresherThread(): boolean {
  return !isMainThread && (workerData as { labwrightRefresher?: boolean } | null)?.labwrightRefresher === true;
}

/** Makes one response again, as the first request for it did (or null where none may be kept). */
async function remakeOne(app: App, recipe: Recipe, n: number): Promise<MadeResponse | null> {
  const made = app.lw.refresh!.made;
  try {
    const headers = { ...recipe.headers, [REFRESH_HEADER]: JSON.stringify({ n, identity: recipe.identity }) };
    const res = await app.inject({ method: 'GET', url: recipe.url, headers });
    const kept = made.get(n);
    // The same base, and the same acting user (a sudo target given by name may be someone else by now).
    if (res.statusCode !== 200 || !kept || kept.base !== recipe.base || kept.userId !== recipe.userId) return null;
    const r = kept.response;
    // A check the round cannot carry over (not described as branches): the response is not kept.
    if (r.check && !r.branches) return null;
    return { body: new Uint8Array(r.body), headers: r.headers.map(([name, value]) => [name, value]), branches: r.branches ? [...r.branches] : null };
  } catch (err) {
    app.log.warn({ err, url: recipe.url }, 'a response could not be made again');
    return null;
  } finally {
    made.delete(n);
  }
}

/**
 * Lowers this thread's CPU priority (Linux: a thread's nice value is its own): when the cores are
 * busy, the server's own thread, which answers every request, goes first, and refreshing (which
 * only the writes wait for) takes what is left.
 */
function yieldCpu(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

export async function runRefresherWorker(): Promise<void> {
  const port = parentPort!;
  yieldCpu();
  const { config } = workerData as { config: Config };
  const app = await buildApp(config, { refresher: true });
  let n = 0;
  // One batch after the other: each reads its own snapshot.
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (msg: { type: string; id: number; recipes: Recipe[] }) => {
    if (msg?.type !== 'refresh') return;
    queue = queue.then(async () => {
      try {
        const made = await app.lw.database.pinRead(async () => {
          const out: Array<MadeResponse | null> = [];
          for (const recipe of msg.recipes) out.push(await remakeOne(app, recipe, ++n));
          return out;
        });
        const batch: RefreshBatch = { made, flipAt: pendingTimeFlip() };
        port.postMessage({ type: 'refreshed', id: msg.id, batch }, made.flatMap((m) => (m ? [m.body.buffer as ArrayBuffer] : [])));
        // The snapshot is released: copy the log while nobody holds an old one (Database.checkpoint).
        try {
          app.lw.database.checkpoint();
        } catch (err) {
          app.log.warn({ err }, 'checkpoint after a refresh failed');
        }
      } catch (err) {
        port.postMessage({ type: 'failed', id: msg.id, error: String((err as Error)?.message ?? err) });
      }
    });
  });
  port.postMessage({ type: 'ready' });
}

// Started from the sources (tsx); the bundle starts it from main.ts.
if (isRefresherThread() && /\.[cm]?ts$/.test(new URL(import.meta.url).pathname)) {
  runRefresherWorker().catch((err: unknown) => {
    console.error('labwright: the response refresher could not start:', err);
    process.exit(1);
  });
}
