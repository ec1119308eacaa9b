// Notices of changes made by any process to the rows authentication reads (PostgreSQL).
import type pg from 'pg';

/** The channel migration 0010's triggers notify after a change to users or access tokens commits. */
export const AUTH_CHANGES_CHANNEL = 'labwright_auth_changes';

/** How long to wait before connecting again after the listening connection failed. */
const RECONNECT_MS = 1000;

/**
 * One connection per process that LISTENs on a channel and counts the notifications it receives.
 * `stamp()` is that count, or null while the connection is not (yet, or any longer) listening:
 * notifications sent then are lost, so a cache keyed on the stamp must not be used. Each new
 * connection starts a new count, so an entry stored before a gap never matches after it.
 */
export class ChangeNotices {
  private count = 0;
  private listening = false;
  private closed = false;
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly Client: typeof pg.Client,
    private readonly connectionString: string,
    private readonly channel: string,
  ) {}

  stamp(): number | null {
    return this.listening ? this.count : null;
  }

  start(): void {
    if (this.closed || this.client) return;
    const client = new this.Client({ connectionString: this.connectionString, keepAlive: true });
    this.client = client;
    const fail = () => this.lost(client);
    client.on('error', fail);
    client.on('end', fail);
    client.on('notification', (n) => {
      if (n.channel === this.channel) this.count++;
    });
    client
      .connect()
      .then(() => client.query(`listen ${this.channel}`))
      .then(() => {
        if (this.client !== client) return;
        // Anything may have changed while nobody listened.
        this.count++;
        this.listening = true;
      })
      .catch(fail);
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.listening = false;
    this.client = null;
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.start();
    }, RECONNECT_MS);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    if (client) {
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}
