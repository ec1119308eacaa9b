// GitLab's webhook recursion detection: a request that carries `X-Gitlab-Event-UUID` (a webhook
// receiver calling back, as GitLab's own hooks send it) runs with that UUID in its async context,
// so the events it causes continue the chain instead of starting a new one (services/webhooks
// refuses a hook that already ran in the chain).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyRequest } from 'fastify';

const chain = new AsyncLocalStorage<string>();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Runs `fn` in the event chain the request names, if it names one. */
export function withEventChain<T>(req: FastifyRequest, fn: () => T): T {
  const uuid = req.headers['x-gitlab-event-uuid'];
  if (typeof uuid !== 'string' || !UUID.test(uuid)) return fn();
  return chain.run(uuid.toLowerCase(), fn);
}

/** The event chain of the work now running, if a request started one. */
export function currentEventChain(): string | undefined {
  return chain.getStore();
}
