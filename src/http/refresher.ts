// The response refresher (issue 7): a worker thread running Labwright's own routes on a read-only
// connection to the same database, which makes the kept responses read lately again after this
// process's writes (refresh rounds, http/response-cache.ts). The requests answered from the store
// meanwhile, and the one thread that answers every request, do not wait for it; the write does.
//
// The worker starts when it would have been of use: in mode `on` (the default) after a few rounds
// within DEMAND_WINDOW_MS found responses read lately, so that a server nobody polls, or one that
// is written to without being read, never pays for a second copy of the routes in memory; at once
// in mode `eager`. Until it is ready, and whenever it fails, a round empties the store instead.
import { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Recipe, RefreshBatch, Refresher } from './kept-response.js';

export type RefreshMode = 'on' | 'eager' | 'off';

/** Rounds that found responses to make again, within this window, start the worker (mode `on`). */
const DEMAND_WINDOW_MS = 10_000;
const DEMAND_TO_START = 3;
/** A batch that takes longer fails (the store is emptied instead) and the worker is replaced. */
const BATCH_TIMEOUT_MS = 10_000;
/** After the worker failed, it is started again no sooner than this. */
const RETRY_MS = 30_000;
/** A worker not ready by then has failed to start. */
const START_TIMEOUT_MS = 30_000;

type FromWorker =
  | { type: 'ready' }
  | { type: 'refreshed'; id: number; batch: RefreshBatch }
  | { type: 'failed'; id: number; error: string };

interface Pending {
  resolve: (batch: RefreshBatch) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** The worker's entry: from the sources, a module that loads them through tsx; from the bundle (npm run build), the bundle itself. */
function workerEntry(): URL {
  const here = import.meta.url;
  return /\.[cm]?ts$/.test(new URL(here).pathname) ? new URL('../refresher-worker.dev.mjs', here) : new URL(here);
}

export class WorkerRefresher implements Refresher {
  private worker: Worker | null = null;
  private state: 'idle' | 'starting' | 'ready' | 'closed' = 'idle';
  private demand: number[] = [];
  private retryAt = 0;
  private lastId = 0;
  private readonly pending = new Map<number, Pending>();
  /** Resolves when the worker has started (or failed to): tests and eager mode. */
  private started: Promise<boolean> | null = null;
  private onStarted: ((ok: boolean) => void) | null = null;

  constructor(
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
    private readonly mode: 'on' | 'eager',
  ) {}

  /** Called once the server's app is built (its migrations run): `eager` starts the worker now. */
  serverReady(): void {
    if (this.mode === 'eager') this.start();
  }

  ready(): boolean {
    if (this.state === 'ready') return true;
    if (this.state === 'idle') this.wanted();
    return false;
  }

  /** Resolves true once the worker is ready (starting it if needed), false if it cannot start. */
  whenReady(): Promise<boolean> {
    if (this.state === 'ready') return Promise.resolve(true);
    if (this.state === 'closed') return Promise.resolve(false);
    this.start();
    return this.started ?? Promise.resolve(false);
  }

  private wanted(): void {
    const now = performance.now();
    if (now < this.retryAt) return;
    this.demand = this.demand.filter((t) => now - t < DEMAND_WINDOW_MS);
    this.demand.push(now);
    if (this.demand.length >= DEMAND_TO_START) this.start();
  }

  private start(): void {
    if (this.state !== 'idle') return;
    this.state = 'starting';
    this.demand = [];
    this.started = new Promise<boolean>((resolve) => (this.onStarted = resolve));
    let worker: Worker;
    try {
      worker = new Worker(workerEntry(), { workerData: { labwrightRefresher: true, config: this.config }, execArgv: [] });
    } catch (err) {
      this.log.warn({ err }, 'the response refresher could not start');
      this.failed(null);
      return;
    }
    // The server's exit does not wait for it.
    worker.unref();
    this.worker = worker;
    const startTimer = setTimeout(() => {
      if (this.worker === worker && this.state === 'starting') {
        this.log.warn('the response refresher did not start in time');
        this.failed(worker);
      }
    }, START_TIMEOUT_MS);
    startTimer.unref();
    worker.on('message', (msg: FromWorker) => this.message(worker, msg));
    worker.on('error', (err) => {
      this.log.warn({ err }, 'the response refresher failed');
      this.failed(worker);
    });
    worker.on('exit', () => this.failed(worker));
  }

  private message(worker: Worker, msg: FromWorker): void {
    if (this.worker !== worker) return;
    if (msg.type === 'ready') {
      this.state = 'ready';
      this.onStarted?.(true);
      this.onStarted = null;
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.type === 'refreshed') p.resolve(msg.batch);
    else p.reject(new Error(msg.error));
  }

  /** The worker stopped or never started: every batch under way fails, and a new one may start later. */
  private failed(worker: Worker | null): void {
    if (worker && this.worker !== worker) return;
    this.worker = null;
    if (this.state !== 'closed') this.state = 'idle';
    this.retryAt = performance.now() + RETRY_MS;
    this.onStarted?.(false);
    this.onStarted = null;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error('the response refresher stopped'));
      this.pending.delete(id);
    }
    if (worker) void worker.terminate().catch(() => undefined);
  }

  refresh(recipes: Recipe[]): Promise<RefreshBatch> {
    const worker = this.worker;
    if (this.state !== 'ready' || !worker) return Promise.reject(new Error('the response refresher is not running'));
    const id = ++this.lastId;
    return new Promise<RefreshBatch>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.log.warn({ recipes: recipes.length }, 'a response refresh took too long; the refresher is replaced');
        this.failed(worker);
      }, BATCH_TIMEOUT_MS);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
      worker.postMessage({ type: 'refresh', id, recipes });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.state = 'closed';
    this.failed(worker);
    if (worker) await worker.terminate().catch(() => undefined);
  }
}
