// Notices of changes made by any process to the rows authentication reads (PostgreSQL).
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/** The channel migration 0010's triggers notify (with an empty payload) after a change commits. */
export const AUTH_CHANGES_CHANNEL = 'labwright_auth_changes';

/** How long to wait before connecting again after the listening connection failed. */
const RECONNECT_MS = 1000;
/** A heartbeat goes round the channel this often and must come back within HEARTBEAT_TIMEOUT_MS. */
const HEARTBEAT_MS = 5000;
const HEARTBEAT_TIMEOUT_MS = 3000;

/**
 * One connection per process that LISTENs on a channel and counts the change notices it receives.
 * `stamp()` is that count, or null while the connection is not (yet, or any longer) known to be
 * listening: notices sent then are lost, so a cache keyed on the stamp must not be used. The count
 * goes up by one each time listening starts again, so an entry stored before a gap never matches
 * after it.
 *
 * A connection can die without telling (a firewall dropping an idle connection, a pooler that does
 * not pass notices on): every HEARTBEAT_MS the connection notifies the channel itself with a payload
 * of its own, and if that does not come back within HEARTBEAT_TIMEOUT_MS it counts as lost. Other
 * processes receive the heartbeats too and ignore them (only empty payloads are changes).
 *
 * The connection is opened on the first `stamp()`, so a process that never authenticates a request
 * (the command line) never opens it.
 */
export class ChangeNotices {
  private count = 0;
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
    private readonly channel: string,
    private readonly timing = { heartbeatMs: HEARTBEAT_MS, timeoutMs: HEARTBEAT_TIMEOUT_MS, reconnectMs: RECONNECT_MS },
  ) {}

  stamp(): number | null {
    if (!this.client && !this.retry) this.start();
    return this.listening ? this.count : null;
  }

  private start(): void {
    if (this.closed || this.client) return;
    const client = new this.Client({ connectionString: this.connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    this.client = client;
    const fail = () => this.lost(client);
    client.on('error', fail);
    client.on('end', fail);
    client.on('notification', (n) => {
      if (n.channel !== this.channel) return;
      if (!n.payload) this.count++;
      else if (n.payload === this.echoPayload && this.echoDeadline) {
        clearTimeout(this.echoDeadline);
        this.echoDeadline = null;
      }
    });
    client
      .connect()
      .then(() => client.query(`listen ${this.channel}`))
      .then(() => {
        if (this.client !== client) return;
        // Anything may have changed while nobody listened.
        this.count++;
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
    client.query('select pg_notify($1, $2)', [this.channel, this.echoPayload]).catch(() => this.lost(client));
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
