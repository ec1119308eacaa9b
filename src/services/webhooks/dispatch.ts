// Handing an event to the project's hooks (GitLab's Projects::TriggeredHooks and
// WebHook#async_execute): the hooks that take the event and may run are chosen, the payload is
// built once, there and then (it shows the state the event left), and each delivery is queued to
// run after the writer's response, a few at a time. GITLAB-COMPAT: the queue lives in the process
// (GitLab's is Sidekiq's, in Redis): deliveries still queued when the process stops are not sent.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { currentEventChain } from '../../http/event-chain.js';
import { executeHook, type Delivery } from './deliver.js';
import { alertStatus, hooksFor, projectHooks, type HookRow, type HookScope } from './hooks.js';

/** Deliveries one project may have waiting; past this its new events' deliveries are dropped (and logged). */
const MAX_QUEUED_PER_PROJECT = 1_000;
/** Bytes of payload the waiting deliveries may hold per process (each event's counted once), and per project. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const MAX_QUEUED_BYTES_PER_PROJECT = 8 * 1024 * 1024;

interface Job {
  row: HookRow;
  delivery: Delivery;
  /** The event's share of the queued bytes, released with its last delivery. */
  event: { bytes: number; pending: number };
  /** This process's write epoch when the event was queued: the delivery waits until kept responses show it. */
  epoch: number;
}

/**
 * Per process: a queue per project, served in turn, each project with at most half the
 * concurrency in flight, so one project's slow or numerous hooks cannot hold back the others'.
 */
interface Queue {
  byProject: Map<number, Job[]>;
  /** Projects with waiting jobs, in the order they are served. */
  turn: number[];
  active: number;
  activeByProject: Map<number, number>;
  waiting: number;
  bytes: number;
  bytesByProject: Map<number, number>;
  idle: Array<() => void>;
}

const queues = new WeakMap<AppContext, Queue>();

function queueOf(app: AppContext): Queue {
  let q = queues.get(app);
  if (!q) queues.set(app, (q = { byProject: new Map(), turn: [], active: 0, activeByProject: new Map(), waiting: 0, bytes: 0, bytesByProject: new Map(), idle: [] }));
  return q;
}

/** The next job whose project may start one more delivery, taking projects in turn. */
function nextJob(q: Queue, perProject: number): Job | null {
  for (let i = 0; i < q.turn.length; i++) {
    const projectId = q.turn[i]!;
    if ((q.activeByProject.get(projectId) ?? 0) >= perProject) continue;
    const jobs = q.byProject.get(projectId)!;
    const job = jobs.shift()!;
    q.turn.splice(i, 1);
    if (jobs.length) q.turn.push(projectId);
    else q.byProject.delete(projectId);
    return job;
  }
  return null;
}

/** Runs a queued delivery with the hook as it is now: one deleted or changed since the event is not sent as it was. */
async function runJob(app: AppContext, job: Job): Promise<void> {
  // A receiver that reads the API when told of the event must find it (http/response-cache.ts, covered).
  await app.responses?.covered(job.epoch);
  const current = (await projectHooks(app, job.row.project_id)).find((r) => r.id === job.row.id);
  if (!current) return;
  await executeHook(app, current, job.delivery);
}

function pump(app: AppContext, q: Queue): void {
  const perProject = Math.max(1, Math.floor(app.config.webhooks.concurrency / 2));
  while (q.active < app.config.webhooks.concurrency) {
    const job = nextJob(q, perProject);
    if (!job) break;
    const projectId = job.row.project_id;
    q.waiting -= 1;
    q.active += 1;
    q.activeByProject.set(projectId, (q.activeByProject.get(projectId) ?? 0) + 1);
    runJob(app, job)
      .catch((err) => app.log.error({ err, hookId: job.row.id }, 'webhook delivery failed'))
      .finally(() => {
        q.active -= 1;
        const left = (q.activeByProject.get(projectId) ?? 1) - 1;
        if (left > 0) q.activeByProject.set(projectId, left);
        else q.activeByProject.delete(projectId);
        if (--job.event.pending === 0) {
          q.bytes -= job.event.bytes;
          const left = (q.bytesByProject.get(projectId) ?? 0) - job.event.bytes;
          if (left > 0) q.bytesByProject.set(projectId, left);
          else q.bytesByProject.delete(projectId);
        }
        pump(app, q);
      });
  }
  if (q.active === 0 && q.waiting === 0) for (const done of q.idle.splice(0)) done();
}

/** Resolves once no delivery is queued or running (tests; shutdown). */
export function deliveriesSettled(app: AppContext): Promise<void> {
  const q = queueOf(app);
  if (q.active === 0 && q.waiting === 0) return Promise.resolve();
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
    const body = JSON.stringify(payload);
    const eventUuid = currentEventChain() ?? randomUUID();
    const runnable = rows.filter((row) => {
      if (chainAllows(eventUuid, row.id)) return true;
      app.log.warn({ hookId: row.id, scope: event.scope }, 'Recursive webhook blocked from executing');
      return false;
    });
    if (runnable.length === 0) return;
    const queued = q.byProject.get(projectId)?.length ?? 0;
    const projectBytes = q.bytesByProject.get(projectId) ?? 0;
    if (queued + runnable.length > MAX_QUEUED_PER_PROJECT || q.bytes + body.length > MAX_QUEUED_BYTES || projectBytes + body.length > MAX_QUEUED_BYTES_PER_PROJECT) {
      app.log.warn({ projectId, scope: event.scope, hooks: runnable.length }, 'webhook queue full: deliveries dropped');
      return;
    }
    const shared = { bytes: body.length, pending: runnable.length };
    q.bytes += body.length;
    q.bytesByProject.set(projectId, projectBytes + body.length);
    let jobs = q.byProject.get(projectId);
    if (!jobs) {
      q.byProject.set(projectId, (jobs = []));
      q.turn.push(projectId);
    }
    const epoch = app.database.visibleEpoch();
    for (const row of runnable) jobs.push({ row, delivery: { scope: event.scope, body, eventUuid }, event: shared, epoch });
    q.waiting += runnable.length;
    pump(app, q);
  } catch (err) {
    app.log.error({ err, projectId, scope: event.scope }, 'webhook event not queued');
  }
}
