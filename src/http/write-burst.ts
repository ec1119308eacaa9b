// Responses leave in bursts while they come quickly (benchmarks, finding 36).
//
// A socket write costs little while the peer is busy and much more when the write has to wake it:
// on the 2-core machines we measure on, `writev` took about 11 µs per response while the load
// generator kept up with the server and 32 µs once the server was the slower side, because every
// response then woke a client that had gone back to sleep. While responses are produced less than
// QUICK_MS apart, they are therefore handed to their sockets together: at the end of the event-loop
// turn that produced them (the check phase, right after the poll phase that read the requests), or
// as soon as BURST of them wait. The first write wakes the peer and the rest find it awake, and no
// response waits behind more than BURST - 1 others. Slower responses (lists, writes, a lone
// request) gain nothing from waiting for the next one and leave at once.

type Release = (err: null, payload: unknown) => void;
interface Logged {
  log: { error(obj: object, msg: string): void };
}

/** Most responses held back together (measured: 16 did as well as a whole turn, 1 and 8 worse). */
const BURST = 16;
/** Responses are held while the average gap between them is below this (a cheap read takes 0.05–0.2 ms). */
const QUICK_MS = 0.25;
/** Gaps longer than this (an idle server) count as this much in the average. */
const GAP_CAP_MS = 5;

export class ResponseBurst {
  private releases: Release[] = [];
  private payloads: unknown[] = [];
  private requests: Logged[] = [];
  private scheduled = false;
  private lastAt = -Infinity;
  /** Moving average of the time between responses, ms (starts slow: a lone request is not held). */
  private gap = GAP_CAP_MS;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Calls `release(null, payload)` (Fastify's onSend `done`), with the other responses of this
   * burst when they come quickly; `req` logs a failure to send.
   */
  send(req: Logged, release: Release, payload: unknown): void {
    const at = this.now();
    this.gap += (Math.min(at - this.lastAt, GAP_CAP_MS) - this.gap) / 8;
    this.lastAt = at;
    // Nothing waiting and no burst to join: straight on (an error reaches Fastify's hook runner).
    if (this.gap >= QUICK_MS && this.releases.length === 0) {
      release(null, payload);
      return;
    }
    this.releases.push(release);
    this.payloads.push(payload);
    this.requests.push(req);
    if (this.gap >= QUICK_MS || this.releases.length >= BURST) {
      this.flush();
    } else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushAtTurnEnd);
    }
  }

  private readonly flushAtTurnEnd = (): void => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    if (this.releases.length === 0) return;
    const rs = this.releases;
    const ps = this.payloads;
    const qs = this.requests;
    this.releases = [];
    this.payloads = [];
    this.requests = [];
    for (let i = 0; i < rs.length; i++) {
      // One failed write must not hold back the others (nor, thrown from a timer, stop the process).
      try {
        rs[i]!(null, ps[i]);
      } catch (err) {
        qs[i]!.log.error({ err }, 'sending the response failed');
      }
    }
  }
}

const shared = new ResponseBurst();

/** `ResponseBurst.send` on the process's one burst (every server in the process shares the event loop). */
export function sendInBurst(req: Logged, release: Release, payload: unknown): void {
  shared.send(req, release, payload);
}
