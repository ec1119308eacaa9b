// Responses leave in bursts (benchmarks, finding 36).
//
// A socket write costs little while the peer is busy and much more when the write has to wake it:
// on the 2-core machines we measure on, `writev` took about 11 µs per response while the load
// generator kept up with the server and 32 µs once the server was the slower side, because every
// response then woke a client that had gone back to sleep. Finished responses are therefore handed
// to their sockets together: at the end of the event-loop turn that produced them (the check phase,
// right after the poll phase that read the requests), or as soon as BURST of them wait, so the first
// write wakes the peer and the rest find it awake, and no response waits behind more than BURST - 1
// others. A lone request waits only for the rest of its own turn.

type Release = (err: null, payload: unknown) => void;
interface Logged {
  log: { error(obj: object, msg: string): void };
}

/** Most responses held back together (measured: 16 did as well as a whole turn, 1 and 8 worse). */
const BURST = 16;

let releases: Release[] = [];
let payloads: unknown[] = [];
let requests: Logged[] = [];

function flush(): void {
  if (releases.length === 0) return;
  const rs = releases;
  const ps = payloads;
  const qs = requests;
  releases = [];
  payloads = [];
  requests = [];
  for (let i = 0; i < rs.length; i++) {
    // One failed write must not hold back the others (nor, thrown from a timer, stop the process).
    try {
      rs[i]!(null, ps[i]);
    } catch (err) {
      qs[i]!.log.error({ err }, 'sending the response failed');
    }
  }
}

/**
 * Calls `release(null, payload)` (Fastify's onSend `done`) with the other responses of this burst;
 * `req` logs a failure to send.
 */
export function sendInBurst(req: Logged, release: Release, payload: unknown): void {
  const n = releases.push(release);
  payloads.push(payload);
  requests.push(req);
  if (n === 1) setImmediate(flush);
  else if (n >= BURST) flush();
}
