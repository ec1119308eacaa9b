// Handing an event to the project's hooks (GitLab's Projects::TriggeredHooks and
// WebHook#async_execute): the hooks that take the event and may run are chosen, the payload is
// built once, there and then (it shows the state the event left), and each delivery is queued to
// run after the writer's response, a few at a time. GITLAB-COMPAT: the queue lives in the process
// (GitLab's is Sidekiq's, in Redis): deliveries still queued when the process stops are not sent.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { currentEventChain } from '../../http/event-chain.js';
import { executeHook, type Delivery } from './deliver.js';
import { alertStatus, hooksFor, type HookRow, type HookScope } from './hooks.js';

/** Deliveries waiting per process; past this an event's deliveries are dropped (and logged). */
const MAX_QUEUED = 10_000;

interface Queue {
  waiting: Array<{ row: HookRow; delivery: Delivery }>;
  active: number;
  idle: Array<() => void>;
}

const queues = new WeakMap<AppContext, Queue>();

function queueOf(app: AppContext): Queue {
  let q = queues.get(app);
  if (!q) queues.set(app, (q = { waiting: [], active: 0, idle: [] }));
  return q;
}

function pump(app: AppContext, q: Queue): void {
  while (q.active < app.config.webhooks.concurrency && q.waiting.length > 0) {
    const job = q.waiting.shift()!;
    q.active += 1;
    executeHook(app, job.row, job.delivery)
      .catch((err) => app.log.error({ err, hookId: job.row.id }, 'webhook delivery failed'))
      .finally(() => {
        q.active -= 1;
        pump(app, q);
      });
  }
  if (q.active === 0 && q.waiting.length === 0) for (const done of q.idle.splice(0)) done();
}

/** Resolves once no delivery is queued or running (tests; shutdown). */
export function deliveriesSettled(app: AppContext): Promise<void> {
  const q = queueOf(app);
  if (q.active === 0 && q.waiting.length === 0) return Promise.resolve();
  return new Promise((resolve) => q.idle.push(resolve));
}

/** Hooks run per event chain, kept an hour (GitLab keeps its chains in Redis for as long). */
const chains = new Map<string, { hooks: Set<number>; at: number }>();
const CHAIN_TTL_MS = 3_600_000;
const MAX_CHAIN_HOOKS = 100;

function chainAllows(uuid: string, hookId: number, now = Date.now()): boolean {
  let entry = chains.get(uuid);
  if (!entry || now - entry.at > CHAIN_TTL_MS) {
    if (chains.size >= 10_000) for (const [k, v] of chains) if (now - v.at > CHAIN_TTL_MS || chains.size >= 10_000) chains.delete(k);
    entry = { hooks: new Set(), at: now };
    chains.set(uuid, entry);
  }
  if (entry.hooks.has(hookId) || entry.hooks.size >= MAX_CHAIN_HOOKS) return false;
  entry.hooks.add(hookId);
  return true;
}

export interface HookEvent {
  scope: HookScope;
  /** Further choice among the hooks (push events: the branch filter). */
  accept?: (row: HookRow) => boolean;
  payload: () => Promise<unknown> | unknown;
}

/**
 * Queues an event for every hook of the project that takes it. Never throws: an event that cannot
 * be built or queued is logged, the writer's change stands.
 */
export async function triggerHooks(app: AppContext, projectId: number, event: HookEvent): Promise<void> {
  try {
    const rows = (await hooksFor(app, projectId, event.scope)).filter((r) => alertStatus(app, r) === 'executable' && (!event.accept || event.accept(r)));
    if (rows.length === 0) return;
    const payload = await event.payload();
    if (payload === null || payload === undefined) return;
    const q = queueOf(app);
    // A request that came from a webhook continues its chain; a hook that already ran in the chain
    // (or a chain that reached 100 deliveries) is not run again: GitLab's recursion detection.
    const eventUuid = currentEventChain() ?? randomUUID();
    for (const row of rows) {
      if (!chainAllows(eventUuid, row.id)) {
        app.log.warn({ hookId: row.id, scope: event.scope }, 'Recursive webhook blocked from executing');
        continue;
      }
      if (q.waiting.length >= MAX_QUEUED) {
        app.log.warn({ hookId: row.id, scope: event.scope }, 'webhook queue full: delivery dropped');
        continue;
      }
      q.waiting.push({ row, delivery: { scope: event.scope, payload, eventUuid } });
    }
    pump(app, q);
  } catch (err) {
    app.log.error({ err, projectId, scope: event.scope }, 'webhook event not queued');
  }
}
