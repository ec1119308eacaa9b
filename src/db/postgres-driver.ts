// The PostgreSQL driver for Kysely, with a cache of read results (issue 7).
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type pg from 'pg';
import { paramsKey, ResultStore } from './read-cache.js';

/** What a write to a read-only database (the response refresher's) fails with, before it is tried (both dialects). */
export const READ_ONLY = 'the database is open for reading only';

/**
 * The longest a result is used after it was read, whatever the notices say: the bound for a change
 * that sends none (made with triggers disabled) or a listening connection that stopped passing them
 * on before its heartbeat noticed.
 */
export const MAX_AGE_MS = 10_000;

/** Compiled statements our own code declares as reads (selectBatch's, built as raw SQL). */
const declaredReads = new WeakSet<CompiledQuery>();

/** Marks a compiled raw statement as one that only reads (it may then be cached). */
export function declareRead<Q extends CompiledQuery>(query: Q): Q {
  declaredReads.add(query);
  return query;
}

/**
 * Whether a statement only reads, so that its result may be kept: a SELECT built by the query
 * builder without a locking clause (FOR UPDATE and the like are end modifiers) and without a WITH
 * (which could hold a data-modifying statement), or one declared with `declareRead`. Raw SQL
 * otherwise counts as a write (the migrator's advisory locks). Our SELECTs call no volatile
 * function (times are parameters), so the same statement on the same data gives the same rows.
 */
function isRead(query: CompiledQuery): boolean {
  const node = query.query as { kind: string; endModifiers?: readonly unknown[]; explain?: unknown; with?: unknown };
  if (node.kind === 'SelectQueryNode') return !node.endModifiers?.length && !node.explain && !node.with;
  return declaredReads.has(query);
}

/**
 * Statements that read tables without change triggers (the migrator's own, the catalog) are never
 * kept: nothing would tell this process that they changed.
 */
function readsUnwatchedTables(text: string): boolean {
  return text.includes('kysely_') || text.includes('pg_catalog') || text.includes('information_schema');
}

/**
 * A copy of a value of a result row: numbers, strings, nulls, and arrays and plain objects of them
 * (json_agg's). Anything else (a Date, a Buffer: none of our columns gives one) is NOT_PLAIN, and
 * a result holding one is not kept.
 */
const NOT_PLAIN = Symbol('not plain');

function copyValue(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const inner = copyValue(v[i]);
      if (inner === NOT_PLAIN) return NOT_PLAIN;
      out[i] = inner;
    }
    return out;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return NOT_PLAIN;
  const out: Record<string, unknown> = { ...(v as Record<string, unknown>) };
  for (const k in out) {
    const inner = out[k];
    if (typeof inner === 'object' && inner !== null) {
      const copy = copyValue(inner);
      if (copy === NOT_PLAIN) return NOT_PLAIN;
      out[k] = copy;
    }
  }
  return out;
}

/** A result's memory, estimated as for SQLite's: two bytes per character, 16 per other value, row and property. */
function valueBytes(v: unknown): number {
  if (typeof v === 'string') return 16 + 2 * v.length;
  if (typeof v !== 'object' || v === null) return 16;
  let bytes = 16;
  if (Array.isArray(v)) for (const x of v) bytes += valueBytes(x);
  else for (const k in v) bytes += 8 + valueBytes((v as Record<string, unknown>)[k]);
  return bytes;
}

function resultOf(res: pg.QueryResult): QueryResult<unknown> {
  const { command, rowCount, rows } = res;
  const changed = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return { numAffectedRows: changed ? BigInt(rowCount ?? 0) : undefined, rows: rows ?? [] };
}

/**
 * One handle per Kysely connection request. It takes a pooled client only when a statement has to
 * go to the server (a read the cache cannot answer, a write, a transaction) and gives it back when
 * Kysely releases the handle; a read answered from the cache touches no client at all.
 */
class PgHandle implements DatabaseConnection {
  client: pg.PoolClient | null = null;
  /** The client is the driver's pinned one (pinRead): it is not given back to the pool. */
  borrowed = false;
  inTransaction = false;

  constructor(private readonly driver: CachingPostgresDriver) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const d = this.driver;
    if (!this.inTransaction && isRead(query)) {
      const rows = await d.readThrough(query.sql, query.parameters, async () => (await this.send(query)).rows);
      return { rows: rows as R[] };
    }
    // Refused before it is sent: it would abort a pinned snapshot's transaction (Database.pinRead).
    if (d.readOnly) throw new Error(READ_ONLY);
    // A write outside a transaction is seen by other connections as soon as it is done, before
    // its result comes back here (Database.writesInFlight); one inside is seen at the COMMIT.
    const visible = !this.inTransaction;
    let flight = 0;
    try {
      return (await this.send(query, () => (flight = visible ? d.sendingWrite() : 0))) as QueryResult<R>;
    } finally {
      // After the write's result (or failure): reads from now on go to the server.
      d.wrote();
      if (flight) d.landed(flight, true);
    }
  }

  /** Sends a statement; `sending` is told once a client is there, just before it goes. */
  async send(query: CompiledQuery, sending?: () => void): Promise<QueryResult<unknown>> {
    if (!this.client) {
      const pinned = this.driver.pinned;
      if (pinned && !this.inTransaction) {
        this.client = pinned;
        this.borrowed = true;
      } else this.client = await this.driver.connect();
    }
    sending?.();
    if (!this.borrowed) return resultOf(await this.client.query(query.sql, query.parameters as unknown[]));
    try {
      return resultOf(await this.client.query(query.sql, query.parameters as unknown[]));
    } catch (err) {
      // The pinned transaction is aborted: what the batch reads from now on is not to be trusted.
      this.driver.pinBroken = true;
      throw err;
    }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('streaming is not used');
  }
}

/** The state of the database as this process knows it: its own write epoch and the notices count. */
interface Stamp {
  epoch: number;
  notices: number;
  /** performance.now() when it was taken. */
  at: number;
}

/**
 * Kysely driver for PostgreSQL that keeps the results of reads made outside transactions, per
 * statement text and parameters, for as long as nothing can have changed them:
 *
 * - this process has written nothing since (the write epoch goes up after every statement that is
 *   not a cacheable read, and after every commit and rollback), and
 * - no change notice has come since from migration 0010's and 0011's triggers, which every
 *   statement that changes any table sends when its transaction commits, in any process
 *   (`notices`, null while the listening connection is down: then nothing is kept or used).
 *
 * A result is kept only if the state is still the one read before the statement was sent, and
 * the whole store is emptied when the state changes, and every MAX_AGE_MS (`maxAgeMs`). So a read in this process always sees this
 * process's acknowledged writes; another process's commit is seen once its notice arrives
 * (PostgreSQL sends it as the transaction commits, before the writer is told it has). Callers get
 * copies: what they change is never what the next caller reads.
 */
export class CachingPostgresDriver implements Driver {
  /** Bumped after every write, commit and rollback of this process (Database.writeEpoch). */
  writeEpoch = 0;
  private readonly results: ResultStore<string, unknown[]> | null;
  private resultsEpoch = -1;
  private resultsNotices = -1;
  /** performance.now() when the store was last emptied: nothing in it was read before. */
  private resultsSince = 0;
  /** How many times the store has started over (generation). */
  private restarts = 0;
  private readonly idle: PgHandle[] = [];

  constructor(
    private readonly pool: pg.Pool,
    readonly connect: () => Promise<pg.PoolClient>,
    private readonly notices: (() => number | null) | null,
    private readonly maxAgeMs = MAX_AGE_MS,
  ) {
    this.results = notices ? new ResultStore() : null;
  }

  /** The current state, or null when the cache may not be used. */
  stamp(): Stamp | null {
    const notices = this.notices?.();
    return notices === null || notices === undefined ? null : { epoch: this.writeEpoch, notices, at: performance.now() };
  }

  /** Database.readGeneration: bumped whenever the store starts over; null when it may not be used. */
  generation(): number | null {
    if (!this.results) return null;
    const notices = this.notices!();
    if (notices === null) return null;
    if (this.resultsEpoch !== this.writeEpoch || this.resultsNotices !== notices || performance.now() - this.resultsSince > this.maxAgeMs) {
      this.restart(this.writeEpoch, notices, performance.now());
    }
    return this.restarts;
  }

  /** A copy of the kept result, or undefined; null when the statement has a result that may be kept but is not. */
  cached(text: string, params: readonly unknown[]): unknown[] | null | undefined {
    // While a write of this process is on its way, what a read sees depends on whether it landed:
    // nothing is answered from the store or kept (writesInFlight).
    if (this.inFlight.size > 0 || this.generation() === null) return undefined;
    const key = paramsKey(params);
    if (key === null) return undefined;
    const rows = this.results!.get(text, key);
    return rows ? (copyValue(rows) as unknown[]) : null;
  }

  /** Keeps `pristine` (a copy nobody else holds) of rows read at `stamp` if nothing has changed since. */
  private keep(text: string, key: string, pristine: unknown[], stamp: Stamp): void {
    if (!this.results || stamp.epoch !== this.writeEpoch || stamp.notices !== this.notices!() || this.inFlight.size > 0) return;
    // A read that started before the store was last emptied may be older than maxAgeMs allows.
    if (stamp.at < this.resultsSince) return;
    if (this.resultsEpoch !== stamp.epoch || this.resultsNotices !== stamp.notices) this.restart(stamp.epoch, stamp.notices, stamp.at);
    let bytes = 64 + 2 * key.length + 2 * text.length;
    for (const row of pristine) bytes += valueBytes(row);
    this.results.set(text, key, pristine, bytes);
  }

  /**
   * A read outside a transaction: from the cache; else, if the same statement with the same
   * parameters is already on its way to the server in the same state (this process has written
   * nothing and no notice has come since it was sent), its result, as a cache hit would be; else
   * run by `run` and kept. After a write empties the cache, 50 requests for one page send one
   * statement instead of 50 that would queue for the pool's 10 connections.
   */
  async readThrough(text: string, params: readonly unknown[], run: () => Promise<unknown[]>): Promise<unknown[]> {
    const hit = this.cached(text, params);
    if (hit) return hit;
    const stamp = hit === null ? this.stamp() : null;
    const key = stamp && !readsUnwatchedTables(text) ? paramsKey(params) : null;
    if (!stamp || key === null) return run();
    let byParams = this.flights.get(text);
    const flight = byParams?.get(key);
    if (flight && flight.stamp.epoch === stamp.epoch && flight.stamp.notices === stamp.notices) {
      try {
        const pristine = await flight.result;
        if (pristine !== NOT_PLAIN) return copyValue(pristine) as unknown[];
      } catch {
        // Its connection failed, say: this read tries on its own.
      }
      return run();
    }
    let rows: unknown[] = [];
    const result = run().then((r) => {
      rows = r;
      // Copied before the reader (or anyone waiting) gets to change it.
      const pristine = copyValue(r) as unknown[] | typeof NOT_PLAIN;
      if (pristine !== NOT_PLAIN) this.keep(text, key, pristine, stamp);
      return pristine;
    });
    const mine = { stamp, result };
    if (!byParams) this.flights.set(text, (byParams = new Map()));
    byParams.set(key, mine);
    try {
      await result;
      return rows;
    } finally {
      if (byParams.get(key) === mine) {
        byParams.delete(key);
        if (byParams.size === 0 && this.flights.get(text) === byParams) this.flights.delete(text);
      }
    }
  }

  /** Reads on their way to the server, by statement text and parameter key. */
  private readonly flights = new Map<string, Map<string, { stamp: Stamp; result: Promise<unknown[] | typeof NOT_PLAIN> }>>();

  /** Empties the store for results read at `since` or later with this state. */
  private restart(epoch: number, notices: number, since: number): void {
    this.restarts++;
    this.results!.clear();
    this.resultsEpoch = epoch;
    this.resultsNotices = notices;
    this.resultsSince = since;
  }

  wrote(): void {
    this.writeEpoch++;
  }

  cacheStats(): { entries: number; bytes: number } | null {
    return this.results ? this.results.stats() : null;
  }

  /** Rows of a cacheable read straight from the cache (prepared statements), or undefined. */
  peek(text: string, params: readonly unknown[]): unknown[] | undefined {
    return this.cached(text, params) ?? undefined;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<PgHandle> {
    return this.idle.pop() ?? new PgHandle(this);
  }

  /** The client every read goes through while pinRead runs (its REPEATABLE READ transaction). */
  pinned: pg.PoolClient | null = null;
  /** A statement failed on the pinned client (its transaction is aborted): pinRead fails. */
  pinBroken = false;
  /** Reads only (the response refresher): writes and transactions are refused before they are sent. */
  readOnly = false;

  /**
   * Database.pinRead: `fn`'s reads see one snapshot, taken at its first statement. Nested calls
   * share the outer one. A transaction begun meanwhile would end it, so it is refused.
   */
  async pinRead<T>(fn: () => Promise<T>): Promise<T> {
    if (this.pinned) return fn();
    const client = await this.connect();
    let healthy = true;
    this.pinBroken = false;
    try {
      await client.query('start transaction isolation level repeatable read read only');
      this.pinned = client;
      const result = await fn();
      if (this.pinBroken) throw new Error('a statement failed in the pinned read snapshot');
      return result;
    } finally {
      this.pinned = null;
      try {
        await client.query('commit');
      } catch {
        healthy = false;
      }
      client.release(healthy ? undefined : new Error('pinned read transaction failed'));
    }
  }

  /** One statement (a prepared one when `name` is given) on the pinned client, else on the pool. */
  query(text: string, params: unknown[], name?: string): Promise<pg.QueryResult> {
    const target = this.pinned ?? this.pool;
    return name ? target.query({ name, text, values: params }) : target.query(text, params);
  }

  async beginTransaction(handle: PgHandle, settings: TransactionSettings): Promise<void> {
    if (this.readOnly) throw new Error(READ_ONLY);
    if (this.pinned) throw new Error('no transaction may begin while a read snapshot is pinned');
    let text = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      text = 'start transaction';
      if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) text += ` ${settings.accessMode}`;
    }
    await handle.send(CompiledQuery.raw(text));
    handle.inTransaction = true;
  }

  commitTransaction(handle: PgHandle): Promise<void> {
    return this.endTransaction(handle, 'commit');
  }

  rollbackTransaction(handle: PgHandle): Promise<void> {
    return this.endTransaction(handle, 'rollback');
  }

  /** A failed COMMIT leaves the handle in its transaction: Kysely rolls back next (see releaseConnection). */
  private async endTransaction(handle: PgHandle, text: 'commit' | 'rollback'): Promise<void> {
    let flight = 0;
    let done = false;
    try {
      await handle.send(CompiledQuery.raw(text), () => (flight = text === 'commit' ? this.sendingWrite() : 0));
      handle.inTransaction = false;
      done = true;
    } finally {
      this.wrote();
      // A COMMIT that failed may still have committed (the connection died after it went): counted.
      if (flight) this.landed(flight, done || text === 'commit');
    }
  }

  /** Writes sent whose result has not come (by number), and those waiting for them (writesLanded). */
  private readonly inFlight = new Set<number>();
  private lastFlight = 0;
  private landings: Array<{ upTo: number; resolve: () => void }> = [];

  /** A COMMIT or a single write is about to be sent; returns its number for `landed`. */
  sendingWrite(): number {
    const n = ++this.lastFlight;
    this.inFlight.add(n);
    return n;
  }

  /**
   * Database.visibleEpoch: bumped when a COMMIT or a write outside a transaction comes back (not by
   * the statements of a transaction, nor by a rollback: nothing another connection sees changes).
   */
  visibleEpoch = 0;

  /** Its result came (after `wrote`: the write epoch counts it by then); `visible`: it may have changed what others see. */
  landed(n: number, visible: boolean): void {
    if (visible) this.visibleEpoch++;
    this.inFlight.delete(n);
    if (this.landings.length === 0) return;
    let oldest = Number.POSITIVE_INFINITY;
    for (const m of this.inFlight) if (m < oldest) oldest = m;
    const ready = this.landings.filter((l) => l.upTo < oldest);
    if (ready.length === 0) return;
    this.landings = this.landings.filter((l) => l.upTo >= oldest);
    for (const l of ready) l.resolve();
  }

  writesInFlight(): number {
    return this.inFlight.size;
  }

  writesLanded(): Promise<void> | null {
    if (this.inFlight.size === 0) return null;
    const upTo = this.lastFlight;
    return new Promise<void>((resolve) => this.landings.push({ upTo, resolve }));
  }

  async savepoint(handle: PgHandle, name: string): Promise<void> {
    await handle.send(CompiledQuery.raw(`savepoint "${name.replace(/"/g, '""')}"`));
  }

  async rollbackToSavepoint(handle: PgHandle, name: string): Promise<void> {
    await handle.send(CompiledQuery.raw(`rollback to savepoint "${name.replace(/"/g, '""')}"`));
  }

  async releaseSavepoint(handle: PgHandle, name: string): Promise<void> {
    await handle.send(CompiledQuery.raw(`release savepoint "${name.replace(/"/g, '""')}"`));
  }

  async releaseConnection(handle: PgHandle): Promise<void> {
    const client = handle.client;
    handle.client = null;
    if (handle.borrowed) {
      handle.borrowed = false;
    } else if (handle.inTransaction) {
      // Released in a transaction (a commit, then its rollback, failed): the client's state is
      // unknown, so the pool closes it instead of lending it again.
      handle.inTransaction = false;
      client?.release(new Error('released inside a transaction'));
    } else client?.release();
    if (this.idle.length < 64) this.idle.push(handle);
  }

  async destroy(): Promise<void> {
    await this.pool.end();
  }
}
