// Notices of changes made by any process to the database (PostgreSQL): the rows authentication
// reads, and everything else.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/** The channel migration 0010's triggers notify (with an empty payload) after a change commits. */
export const AUTH_CHANGES_CHANNEL = 'labwright_auth_changes';
/** The channel migration 0011's triggers notify for every other table. */
export const DATA_CHANGES_CHANNEL = 'labwright_data_changes';

/** How long to wait before connecting again after the listening connection failed. */
const RECONNECT_MS = 1000;
/** A heartbeat goes round the channel this often and must come back within HEARTBEAT_TIMEOUT_MS. */
const HEARTBEAT_MS = 5000;
const HEARTBEAT_TIMEOUT_MS = 3000;

/**
 * One connection per process that LISTENs on some channels and counts the change notices it
 * receives. `stamp(channel)` is the count for one channel and `stamp()` the count for all, or null
 * while the connection is not (yet, or any longer) known to be listening: notices sent then are
 * lost, so a cache keyed on the stamp must not be used. Every count goes up by one each time
 * listening starts again, so an entry stored before a gap never matches after it.
 *
 * A connection can die without telling (a firewall dropping an idle connection, a pooler that does
 * not pass notices on): every HEARTBEAT_MS the connection notifies its first channel itself with a
 * payload of its own, and if that does not come back within HEARTBEAT_TIMEOUT_MS it counts as lost.
 * Other processes receive the heartbeats too and ignore them (only empty payloads are changes).
 *
 * The connection is opened on the first `stamp()`: a process that never reads through a cache never
 * opens it.
 */
export class ChangeNotices {
  /** Per channel, then (last) all channels together. */
  private readonly counts: number[];
  private listening = false;
  private closed = false;
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private echoDeadline: NodeJS.Timeout | null = null;
  private echoPayload = '';

  constructor(
    private readonly Client: typeof pg.Client,
    private readonly connectionString: string,
    private readonly channels: readonly string[],
    private readonly timing = { heartbeatMs: HEARTBEAT_MS, timeoutMs: HEARTBEAT_TIMEOUT_MS, reconnectMs: RECONNECT_MS },
    /**
     * Whether a notice sent by this server process (PostgreSQL's backend pid) comes from this
     * process's own connections, whose writes the caches have already counted (the write epoch)
     * when their result came: counting the notice too would empty them a second time, a
     * millisecond later, for nothing.
     */
    private readonly ownBackend: (pid: number) => boolean = () => false,
  ) {
    this.counts = new Array<number>(channels.length + 1).fill(0);
  }

  /** The count of notices on `channel` (one of the constructor's), or on all channels without one. */
  stamp(channel?: string): number | null {
    if (!this.client && !this.retry) this.start();
    if (!this.listening) return null;
    return this.counts[channel === undefined ? this.channels.length : this.channels.indexOf(channel)];
  }

  private start(): void {
    if (this.closed || this.client) return;
    const client = new this.Client({ connectionString: this.connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    this.client = client;
    const fail = () => this.lost(client);
    client.on('error', fail);
    client.on('end', fail);
    client.on('notification', (n) => {
      const i = this.channels.indexOf(n.channel);
      if (i < 0) return;
      if (!n.payload) {
        if (this.ownBackend(n.processId)) return;
        this.counts[i]++;
        this.counts[this.channels.length]++;
      } else if (n.payload === this.echoPayload && this.echoDeadline) {
        clearTimeout(this.echoDeadline);
        this.echoDeadline = null;
      }
    });
    client
      .connect()
      .then(() => client.query(this.channels.map((c) => `listen ${c}`).join('; ')))
      .then(() => {
        if (this.client !== client) return;
        // Anything may have changed while nobody listened.
        for (let i = 0; i < this.counts.length; i++) this.counts[i]++;
        this.listening = true;
        this.heartbeat = setInterval(() => this.beat(client), this.timing.heartbeatMs);
        this.heartbeat.unref();
      })
      .catch(fail);
  }

  private beat(client: pg.Client): void {
    if (this.client !== client || this.echoDeadline) return;
    this.echoPayload = `heartbeat:${randomBytes(8).toString('hex')}`;
    this.echoDeadline = setTimeout(() => this.lost(client), this.timing.timeoutMs);
    this.echoDeadline.unref();
    client.query('select pg_notify($1, $2)', [this.channels[0], this.echoPayload]).catch(() => this.lost(client));
  }

  private stopTimers(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.echoDeadline) clearTimeout(this.echoDeadline);
    this.heartbeat = null;
    this.echoDeadline = null;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.listening = false;
    this.client = null;
    this.stopTimers();
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.start();
    }, this.timing.reconnectMs);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    this.stopTimers();
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    if (client) {
      client.on('error', () => undefined);
      // A half-open socket may never answer the goodbye: do not wait for it for long.
      await Promise.race([client.end().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    }
  }
}
