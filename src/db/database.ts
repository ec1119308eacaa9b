// Kysely set-up for both dialects: one query code path, two drivers.
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, type LimitNode, type LogEvent, PostgresDialect, PostgresQueryCompiler, type QueryCompiler, SqliteAdapter, SqliteDialect, sql, type Transaction, ValueNode } from 'kysely';
import { createRequire } from 'node:module';
import type pg from 'pg';
import { join } from 'node:path';
import { AUTH_CHANGES_CHANNEL, ChangeNotices, DATA_CHANGES_CHANNEL } from './change-notices.js';
import { CachingPostgresDriver, MAX_AGE_MS, READ_ONLY } from './postgres-driver.js';
import { paramsKey, ResultStore } from './read-cache.js';
import { WalSync } from './wal-sync.js';
import type { DB } from './types.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /**
   * Runs fn in a write transaction: BEGIN IMMEDIATE on SQLite (the write lock is taken before the
   * first read, so read-then-write never fails half way), an ordinary transaction on PostgreSQL
   * (callers lock the rows they read with `forUpdate`).
   */
  transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T>;
  /** Adds FOR UPDATE on PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises writers. */
  forUpdate<QB extends { forUpdate(): QB }>(qb: QB): QB;
  close(): Promise<void>;
  /**
   * Runs one read-only statement outside any transaction without the query builder: on SQLite
   * synchronously on the read connection, on PostgreSQL as a named prepared statement; both
   * through the read cache. For the few statements every request runs (authentication);
   * everything else uses `db`.
   */
  read<T>(query: RawSql, params: unknown[]): Promise<T[]>;
  /**
   * A number that changes whenever this process has written to the database (after the write, or
   * after the commit of a transaction). Short-lived caches of derived values (list counts) compare
   * it to know that nothing they depend on was written by this process since.
   */
  writeEpoch(): number;
  /**
   * Null when every commit of this process up to write epoch `epoch` is on disk; otherwise a promise
   * that resolves when it is (SQLite syncs its log after the commit, off the event loop: WalSync).
   * A response that may show a commit waits for this before it is sent.
   */
  whenDurable(epoch: number): Promise<void> | null;
  /**
   * Writes of this process whose result has not come back (PostgreSQL: a COMMIT or a single write
   * sent; other connections can already see it). Always 0 on SQLite, whose statements return
   * before anything else runs.
   */
  writesInFlight(): number;
  /**
   * A number that goes up whenever this process has changed what other connections see: a commit,
   * or a write outside a transaction (not a statement inside one, not a rollback). The response
   * store counts its state by it. On SQLite it is writeEpoch.
   */
  visibleEpoch(): number;
  /** Null when no write is in flight; else resolves once every write sent before the call has come back. */
  writesLanded(): Promise<void> | null;
  /**
   * A number that changes whenever any process may have changed the rows authentication reads
   * (users, personal and OAuth access tokens), or null when this process cannot tell. SQLite: the
   * read snapshot's `data_version` (it changes with every commit by another connection, this
   * process's writer included). PostgreSQL: the count of notices from migration 0010's triggers,
   * null while the listening connection is down. Read it before the rows it is to vouch for.
   */
  authChanges(): number | null;
  /**
   * A number that changes whenever the read cache starts over because data may have changed: on
   * SQLite the read snapshot's `data_version` (any commit of any connection), on PostgreSQL a count
   * of the cache's restarts (a write of this process, a change notice, the age bound). Null with the
   * read cache off, or while it cannot be used (PostgreSQL's listening connection down). Results
   * derived from reads made while it stayed the same may be kept as long as it stays the same.
   */
  readGeneration(): number | null;
  /**
   * A number that changes whenever a process other than this one may have committed a change, or
   * null when this process cannot tell: on SQLite the writer connection's `data_version` (it changes
   * with every commit of any other connection, never with the writer's own); on PostgreSQL the
   * count of change notices from other processes (null while the listening connection is down).
   * With `writeEpoch`, it tells this process's own changes from everybody else's.
   */
  externalChanges(): number | null;
  /**
   * Runs `fn` with every read outside a transaction seeing one snapshot of the database, from its
   * first read until `fn` settles (the response refresher makes a batch of responses from one
   * state). On SQLite the read transaction of the read connection stays open; on PostgreSQL the
   * reads go through one connection in a REPEATABLE READ, READ ONLY transaction.
   */
  pinRead<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * SQLite: copies what it can of the write-ahead log into the database file now (a passive
   * checkpoint, from the read connection, outside any snapshot); the response refresher runs it
   * after each batch, off the server's thread. A no-op on PostgreSQL.
   */
  checkpoint(): void;
  /** With the read cache on: what it holds (estimated bytes); otherwise null. */
  readCacheStats(): { entries: number; bytes: number } | null;
  /**
   * PostgreSQL: the longest a kept read result is used, whatever the notices say (MAX_AGE_MS);
   * what is derived from kept results is bounded by it too. Null on SQLite (its data_version sees
   * every change).
   */
  readonly maxAgeMs: number | null;
  /** Tells the connections that a migration changed the schema (SQLite: see schemaChanged of its driver). */
  schemaChanged?(): void;
  /** Asks the database something trivial (readiness probes): not counted as a write; on PostgreSQL never from the cache. */
  ping(): Promise<void>;
}

/**
 * PostgreSQL compiler that writes a numeric LIMIT as a literal. With `LIMIT $n` PostgreSQL costs the
 * generic plan of a prepared statement for an unknown limit, never prefers it to a custom plan, and
 * so plans the statement again on every execution: for an MR page 0.4–0.6 ms of planning against
 * 0.1 ms of execution (`generic_plans 0` in `pg_prepared_statements`). Limits in our statements are
 * constants or page sizes (at most 101), so the statement texts stay few. Offsets stay parameters:
 * `pageWindow` (http/pagination.ts) leaves a first page's OFFSET out instead.
 */
class LiteralLimitCompiler extends PostgresQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    const limit = node.limit;
    if (ValueNode.is(limit) && typeof limit.value === 'number' && Number.isSafeInteger(limit.value) && limit.value >= 0) {
      this.append(`limit ${limit.value}`);
      return;
    }
    super.visitLimit(node);
  }
}

class LabwrightPostgresDialect extends PostgresDialect {
  constructor(private readonly driver: CachingPostgresDriver) {
    super({ pool: {} as pg.Pool });
  }

  override createQueryCompiler(): QueryCompiler {
    return new LiteralLimitCompiler();
  }

  override createDriver() {
    return this.driver;
  }
}

let pgModule: typeof pg | undefined;

/**
 * The PostgreSQL driver, loaded on first use: a server on the embedded SQLite database never loads
 * it (tens of milliseconds of start-up).
 */
function loadPg(): typeof pg {
  if (!pgModule) {
    pgModule = createRequire(import.meta.url)('pg') as typeof pg;
    // pg returns int8 (count(*), sum) as strings; our values fit in a double.
    pgModule.types.setTypeParser(20, (v: string) => Number(v));
    pgModule.types.setTypeParser(1700, (v: string) => Number(v));
  }
  return pgModule;
}

/** SQLite runs DDL inside transactions; saying so makes Kysely's migrator wrap each run in one. */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** A FIFO lock: each unlock hands the lock to exactly one waiter (no wake-up of every waiter). */
class FifoLock {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  lock(): Promise<void> | undefined {
    if (!this.held) {
      this.held = true;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  unlock(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

interface QueryResultLike {
  rows: unknown[];
  numAffectedRows?: bigint;
  insertId?: bigint;
}


/** When the current run of synchronous work began, as far as giveWay knows (the turn it last resumed in). */
let sliceStart = performance.now();
/** A write's work runs this long at most before it gives way (a cheap read takes 0.05–0.3 ms). */
const SLICE_MS = 0.5;

/** Resolves at the next turn of the event loop, once the I/O that came meanwhile (requests) was handled. */
export function giveWay(): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      sliceStart = performance.now();
      resolve();
    }),
  );
}

/**
 * giveWay once the work since it last resumed has run SLICE_MS or more, else null (go on now): a
 * write's statements give way often enough for reads to be answered between them, without a turn
 * of the event loop for each (a transaction holds the write lock through its turns, so other
 * writes wait for them: one per statement cut creations from 300 to 230 a second).
 */
export function giveWayIfLong(): Promise<void> | null {
  return performance.now() - sliceStart >= SLICE_MS ? giveWay() : null;
}

/** The statements each connection keeps by SQL text (openSqlite). */
const statementCaches = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

function clearStatements(conn: BetterSqlite3.Database): void {
  statementCaches.get(conn)?.clear();
}

/**
 * Per statement, a compiled function that turns a raw row (an array) into an object literal. Rows
 * built this way have a fast hidden class; the objects the driver builds itself set one key at a
 * time and end up in dictionary mode once a table has more than a dozen columns, which made every
 * later read of a user or a merge request row slow.
 */
const shapers = new WeakMap<BetterSqlite3.Statement, ((r: unknown[]) => Record<string, unknown>) | null>();

function shaperOf(stmt: BetterSqlite3.Statement): ((r: unknown[]) => Record<string, unknown>) | null {
  let shape = shapers.get(stmt);
  if (shape === undefined) {
    const cols = stmt.columns().map((c) => c.name);
    if (cols.includes('__proto__')) shape = null;
    else {
      shape = new Function('r', `return {${cols.map((c, i) => `${JSON.stringify(c)}: r[${i}]`).join(', ')}};`) as (r: unknown[]) => Record<string, unknown>;
      stmt.raw(true);
    }
    shapers.set(stmt, shape);
  }
  return shape;
}

/** A result's memory, estimated: two bytes per character of its key and strings, 16 per other value and row. */
function resultBytes(key: string, raws: unknown[][]): number {
  let bytes = 64 + 2 * key.length;
  for (const row of raws) {
    bytes += 16;
    for (const v of row) bytes += typeof v === 'string' ? 16 + 2 * v.length : 16;
  }
  return bytes;
}

/** All rows of a reader statement, as fast-shaped objects. */
export function allRows(stmt: BetterSqlite3.Statement, params: unknown[]): unknown[] {
  const shape = shaperOf(stmt);
  if (!shape) return stmt.all(params);
  return shapeRows(shape, stmt.all(params) as unknown[][]);
}

/** New objects for raw rows. */
function shapeRows(shape: (r: unknown[]) => Record<string, unknown>, raws: unknown[][]): unknown[] {
  const out = new Array<unknown>(raws.length);
  for (let i = 0; i < raws.length; i++) out[i] = shape(raws[i]);
  return out;
}

function runOn(db: BetterSqlite3.Database, query: CompiledQuery): QueryResultLike {
  const stmt = db.prepare(query.sql);
  const params = query.parameters as unknown[];
  if (stmt.reader) return { rows: allRows(stmt, params) };
  const { changes, lastInsertRowid } = stmt.run(params);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * One handle per Kysely connection request. Outside a transaction, a read-only statement runs on
 * the read connection at once (WAL: it sees every committed write and never waits for the write
 * lock); anything else takes the write lock for the one statement. Inside a transaction everything
 * runs on the write connection, which the transaction holds.
 */
class SqliteHandle {
  inTransaction = false;
  /** This handle's transaction holds the driver's write lock (released once, by whoever ends it). */
  holdsLock = false;
  constructor(private readonly driver: TwoConnectionSqliteDriver) {}

  executeQuery(query: CompiledQuery): Promise<QueryResultLike> {
    const d = this.driver;
    // A transaction's statements give way to the event loop (giveWayIfLong): the statements
    // themselves run synchronously, so without it a whole transaction (with the work between its
    // statements) was one task, and every request that came meanwhile, the cheapest read included,
    // waited for all of it (a merge request creation: 1.8 ms of statements, then the commit).
    if (this.inTransaction) {
      const turn = giveWayIfLong();
      if (turn) return turn.then(() => runOn(d.writer, query));
      try {
        return Promise.resolve(runOn(d.writer, query));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    const readStmt = d.reader.prepare(query.sql);
    if (readStmt.readonly) return Promise.resolve({ rows: d.readRows(readStmt, query.parameters as unknown[]) });
    // Refused before anything else: a write must not end a pinned snapshot (Database.pinRead).
    if (d.readOnly) return Promise.reject(new Error(READ_ONLY));
    return d.withWriteLock(() => runOn(d.writer, query));
  }

  // eslint-disable-next-line require-yield
  async *streamQuery(): AsyncIterableIterator<QueryResultLike> {
    throw new Error('streaming is not used');
  }
}

/**
 * SQLite driver with two connections to one file: a writer, serialised by a FIFO lock and used by
 * transactions (BEGIN IMMEDIATE: several processes starting at once migrate one after the other)
 * and single writes; and a query-only reader for reads outside transactions, so a transaction that
 * waits on git does not hold up every read of the server.
 */
class TwoConnectionSqliteDriver {
  private readonly lock = new FifoLock();
  /** Whether the reader's shared read transaction is open (see readRows). */
  private reading = false;
  /** Bumped after every write and commit (Database.writeEpoch). */
  writeEpoch = 0;
  private readonly endReadSoon = () => {
    if (this.pins === 0) this.endRead();
  };

  constructor(
    readonly writer: BetterSqlite3.Database,
    readonly reader: BetterSqlite3.Database,
    readCache: boolean,
    /** Syncs the log after commits (null: read-only). */
    readonly walSync: WalSync | null,
    /** Reads only (the response refresher): every write is refused before it is tried. */
    readonly readOnly = false,
  ) {
    this.results = readCache ? new ResultStore() : null;
  }

  /**
   * Reads of one turn of the event loop share one read transaction on the reader: opening and
   * closing a WAL read transaction costs several system calls, which on small point lookups was
   * most of their time. The snapshot ends at the end of the turn (setImmediate) and as soon as this
   * process writes anything, so every read sees all writes acknowledged before it; another
   * process's write becomes visible at the next turn at the latest.
   *
   * Results are kept for as long as the database file is unchanged: `PRAGMA data_version`, read
   * when the snapshot starts, changes with every commit of any other connection (this process's
   * writer and every other process included), and the cache is emptied when it does. The same
   * statement with the same parameters on the same version of the file gives the same rows (no
   * statement reads the clock or random numbers: times are parameters), so a result is reused
   * only where SQLite would have computed it again. Raw rows are kept and shaped into new objects
   * on every read, so callers may change what they get.
   */
  readRows(stmt: BetterSqlite3.Statement, params: unknown[]): unknown[] {
    this.beginRead();
    const shape = this.results ? shaperOf(stmt) : null;
    const key = shape ? paramsKey(params) : null;
    if (!shape || key === null) return allRows(stmt, params);
    const results = this.results!;
    if (this.resultsVersion !== this.version) {
      results.clear();
      this.resultsVersion = this.version;
    }
    let raws = results.get(stmt, key);
    if (!raws) {
      raws = stmt.all(params) as unknown[][];
      results.set(stmt, key, raws, resultBytes(key, raws));
    }
    return shapeRows(shape, raws);
  }

  cacheStats(): { entries: number; bytes: number } | null {
    return this.results ? this.results.stats() : null;
  }

  /** Raw rows per reader statement and parameters, for `resultsVersion` (null: no cache). */
  private readonly results: ResultStore<BetterSqlite3.Statement, unknown[][]> | null;
  private resultsVersion = -1;
  /** `data_version` of the open read snapshot (NaN when none could be opened: matches nothing). */
  private version = Number.NaN;
  private dataVersionStmt: BetterSqlite3.Statement | null = null;

  /** Open pinRead calls: while any is, the read snapshot outlives the turn. */
  private pins = 0;
  private externalVersionStmt: BetterSqlite3.Statement | null = null;

  /** externalVersion's value for the rest of this turn of the event loop (NaN: not read yet). */
  private externalVersionNow = Number.NaN;
  private readonly forgetExternalVersion = () => {
    this.externalVersionNow = Number.NaN;
  };

  /**
   * `PRAGMA data_version` of the writer connection: it changes only with other connections'
   * commits. Read once per turn of the event loop, as the read snapshot is taken once per turn:
   * outside a transaction the pragma takes and drops a WAL read lock, and the response store asks
   * for it several times per request (44 % of the server's CPU time on kept `GET /user` responses).
   */
  externalVersion(): number {
    if (Number.isNaN(this.externalVersionNow)) {
      this.externalVersionStmt ??= this.writer.prepare('pragma data_version').pluck();
      this.externalVersionNow = this.externalVersionStmt.get() as number;
      setImmediate(this.forgetExternalVersion);
    }
    return this.externalVersionNow;
  }

  /**
   * A passive checkpoint on the read connection. A refresher's snapshot is held for a whole batch,
   * and batches follow each other while writes come: the writer's automatic checkpoint then seldom
   * finds the log free to copy entirely, and the log would grow (see commitTransaction). Between
   * batches, when the refresher holds no snapshot, this copies it and lets the writer start it over.
   */
  checkpoint(): void {
    if (this.pins > 0) return;
    this.endRead();
    this.reader.pragma('wal_checkpoint(PASSIVE)');
  }

  async pinRead<T>(fn: () => Promise<T>): Promise<T> {
    // The outermost pin takes a snapshot of its own (one left open from earlier in the turn may be older).
    if (this.pins === 0) this.endRead();
    this.pins++;
    try {
      this.beginRead();
      return await fn();
    } finally {
      if (--this.pins === 0) this.endRead();
    }
  }

  private beginRead(): void {
    // A snapshot SQLite ended by itself (after an error) counts as none.
    if (this.reading && this.reader.inTransaction) return;
    // While pinned, a new snapshot would mix two states in one batch: the batch fails instead.
    if (this.pins > 0 && this.reading) throw new Error('the pinned read snapshot was lost');
    this.reading = false;
    this.version = Number.NaN;
    // A read transaction left open by a failed commit (endRead) holds an old snapshot: drop it.
    if (this.reader.inTransaction) this.reader.prepare('rollback').run();
    // BEGIN alone takes no snapshot; the pragma, as the first read, fixes it (and its version).
    this.reader.prepare('begin').run();
    try {
      this.dataVersionStmt ??= this.reader.prepare('pragma data_version').pluck();
      this.version = this.dataVersionStmt.get() as number;
    } catch (err) {
      this.version = Number.NaN;
      if (this.reader.inTransaction) this.reader.prepare('rollback').run();
      throw err;
    }
    this.reading = true;
    setImmediate(this.endReadSoon);
  }

  /** `PRAGMA data_version` of the read snapshot of this turn (the one later reads see). */
  dataVersion(): number {
    this.beginRead();
    return this.version;
  }

  /**
   * After a migration: statements prepared before it (and their row shapers) describe the old
   * columns, and the reader keeps the schema it loaded until a statement of its own finds the change,
   * so a `select *` it prepared first would name the new columns with the old names. Both caches are
   * emptied and one read on the reader brings its schema up to date.
   */
  schemaChanged(): void {
    this.endRead();
    clearStatements(this.writer);
    clearStatements(this.reader);
    this.results?.clear();
    this.resultsVersion = -1;
    this.reader.prepare('select count(*) as n from sqlite_master').get();
  }

  endRead(): void {
    if (!this.reading) return;
    this.reading = false;
    if (this.reader.inTransaction) this.reader.prepare('commit').run();
  }

  async init(): Promise<void> {}

  /**
   * Handles not in use. Kysely acquires a connection for every statement and remembers each one it
   * has seen in a WeakSet; a new handle per statement cost a WeakSet insertion each time and weak
   * entries for the garbage collector to clear (2–3 % of a merge request read's CPU).
   */
  private readonly idle: SqliteHandle[] = [];

  async acquireConnection(): Promise<SqliteHandle> {
    return this.idle.pop() ?? new SqliteHandle(this);
  }

  async withWriteLock<T>(fn: () => T): Promise<T> {
    const wait = this.lock.lock();
    if (wait) await wait;
    let result: T;
    try {
      // Before the statement commits (see commitTransaction).
      this.endRead();
      result = fn();
    } finally {
      this.writeEpoch++;
      this.endRead();
      this.lock.unlock();
    }
    await this.walSync?.sync(this.writeEpoch);
    return result;
  }

  /** See Database.whenDurable. */
  whenDurable(epoch: number): Promise<void> | null {
    if (!this.walSync || this.walSync.durableEpoch() >= epoch) return null;
    return this.walSync.sync(epoch);
  }

  async beginTransaction(handle: SqliteHandle): Promise<void> {
    if (this.readOnly) throw new Error(READ_ONLY);
    const wait = this.lock.lock();
    if (wait) await wait;
    try {
      this.writer.prepare('begin immediate').run();
    } catch (err) {
      this.lock.unlock();
      throw err;
    }
    handle.inTransaction = true;
    handle.holdsLock = true;
  }

  async commitTransaction(handle: SqliteHandle): Promise<void> {
    // The read snapshot ends before the commit, not after: the commit runs SQLite's automatic
    // checkpoint, which can copy into the database file only the pages no open snapshot still
    // needs, and the WAL starts over from its beginning only once every page has been copied. With
    // the snapshot of the same turn still open, the pages of the transaction being committed were
    // never copied while reads kept coming, and the WAL grew without bound (460 MB after 16,000
    // merge request creations under a mixed load), every commit slower than the one before.
    await giveWayIfLong();
    this.endRead();
    // A failed commit leaves the transaction open: Kysely rolls back next, which releases the lock.
    this.writer.prepare('commit').run();
    handle.inTransaction = false;
    this.writeEpoch++;
    this.endRead();
    handle.holdsLock = false;
    this.lock.unlock();
    // Done once on disk (WalSync), while the event loop goes on. If the sync fails, the commit
    // stands but is not known to be on disk: the caller fails, and Kysely's rollback that follows
    // finds nothing of this handle's to undo (the lock may be another transaction's by now).
    await this.walSync?.sync(this.writeEpoch);
  }

  async rollbackTransaction(handle: SqliteHandle): Promise<void> {
    try {
      if (handle.inTransaction && this.writer.inTransaction) this.writer.prepare('rollback').run();
    } finally {
      handle.inTransaction = false;
      if (handle.holdsLock) {
        handle.holdsLock = false;
        this.lock.unlock();
      }
    }
  }

  async savepoint(handle: SqliteHandle, name: string): Promise<void> {
    await handle.executeQuery(CompiledQuery.raw(`savepoint "${name.replace(/"/g, '""')}"`));
  }

  async rollbackToSavepoint(handle: SqliteHandle, name: string): Promise<void> {
    await handle.executeQuery(CompiledQuery.raw(`rollback to "${name.replace(/"/g, '""')}"`));
  }

  async releaseSavepoint(handle: SqliteHandle, name: string): Promise<void> {
    await handle.executeQuery(CompiledQuery.raw(`release "${name.replace(/"/g, '""')}"`));
  }

  async releaseConnection(handle: SqliteHandle): Promise<void> {
    // A handle comes back after its transaction ended (commit or rollback clear inTransaction).
    if (!handle.inTransaction && this.idle.length < 64) this.idle.push(handle);
  }

  async destroy(): Promise<void> {
    this.endRead();
    await this.walSync?.close();
    this.reader.close();
    this.writer.close();
  }
}

class TwoConnectionSqliteDialect extends SqliteDialect {
  readonly driver: TwoConnectionSqliteDriver;

  constructor(connections: { writer: BetterSqlite3.Database; reader: BetterSqlite3.Database; readCache: boolean; walSync: WalSync | null; readOnly: boolean }) {
    super({ database: connections.writer });
    this.driver = new TwoConnectionSqliteDriver(connections.writer, connections.reader, connections.readCache, connections.walSync, connections.readOnly);
  }

  override createAdapter() {
    return new TransactionalDdlSqliteAdapter();
  }

  override createDriver() {
    return this.driver as never;
  }
}

export function openSqlite(file: string, opts: { reader?: boolean } = {}): BetterSqlite3.Database {
  const raw = new BetterSqlite3(file);
  if (!opts.reader) {
    raw.pragma('journal_mode = WAL');
    // Commits are synced by WalSync, after COMMIT and off the event loop; SQLite still syncs around
    // every checkpoint (NORMAL), so the file is consistent whatever happens.
    raw.pragma('synchronous = NORMAL');
    raw.pragma('foreign_keys = ON');
  } else {
    raw.pragma('query_only = ON');
  }
  raw.pragma('busy_timeout = 10000');
  raw.pragma('cache_size = -32000');
  // LIKE compares case-sensitively, as on PostgreSQL: one behaviour on both dialects, and SQLite can
  // then answer `traversal LIKE '/1/5/%'` (the subtree of a group, used by most group and project
  // lists) from the index instead of scanning every namespace. Case-insensitive searches lower()
  // both sides (containsCi).
  raw.pragma('case_sensitive_like = ON');
  // Kysely prepares every query anew; reuse statements by SQL text (they run to completion
  // synchronously, so one statement is never used by two queries at once).
  const prepare = raw.prepare.bind(raw);
  const cache = new Map<string, BetterSqlite3.Statement>();
  statementCaches.set(raw, cache);
  (raw as { prepare: (sql: string) => BetterSqlite3.Statement }).prepare = function cachedPrepare(text: string) {
    let stmt = cache.get(text);
    if (!stmt) {
      stmt = prepare(text);
      if (cache.size >= 1000) cache.delete(cache.keys().next().value as string);
      cache.set(text, stmt);
    }
    return stmt;
  };
  return raw;
}

/** One SQL text for both dialects, written with `?` placeholders (numbered for PostgreSQL once). */
export interface RawSql {
  sqlite: string;
  postgres: string;
  name: string;
}

let rawSqlCount = 0;

/** Declares a hot-path statement (no `?` inside string literals). */
export function rawSql(text: string): RawSql {
  let n = 0;
  return { sqlite: text, postgres: text.replace(/\?/g, () => `$${++n}`), name: `lw_raw_${++rawSqlCount}` };
}

/**
 * LABWRIGHT_QUERY_STATS=1 (bench/profile.ts sets it): total time and count per SQL text, written
 * to stderr when the process exits. Off by default: no cost on the request path.
 */
function queryStatsLogger(): ((event: LogEvent) => void) | undefined {
  if (!process.env.LABWRIGHT_QUERY_STATS) return undefined;
  const stats = new Map<string, { n: number; ms: number }>();
  process.once('exit', () => {
    const rows = [...stats.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25);
    for (const [text, s] of rows) process.stderr.write(`[sql] ${s.ms.toFixed(0).padStart(7)} ms ${String(s.n).padStart(7)}× ${(s.ms / s.n).toFixed(3)} ms  ${text.slice(0, 400)}\n`);
  });
  return (event) => {
    const s = stats.get(event.query.sql) ?? { n: 0, ms: 0 };
    s.n++;
    s.ms += event.queryDurationMillis;
    stats.set(event.query.sql, s);
  };
}

/** Names of the server-side prepared statements by SQL text (shared by all connections). */
const statementNames = new Map<string, string>();
let lastStatementName = 0;
/** Distinct statements kept prepared; texts beyond this run unnamed (IN lists of many lengths). */
const MAX_NAMED_STATEMENTS = 2000;
const PREPARED = Symbol('labwright.prepared');

type QueryFn = (...args: unknown[]) => Promise<pg.QueryResult>;

/**
 * Whether PostgreSQL refused to run a prepared statement because a table under it changed (another
 * process, a newer version, added a column during a rolling upgrade): "cached plan must not change
 * result type". The statement is then prepared again under a new name, on every connection, and
 * run once more. (Inside a transaction the first failure has aborted it: its error stands.)
 */
function planChanged(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

/**
 * Runs a named prepared statement whose name for `text` is in statementNames (else `first`); when
 * PostgreSQL refuses it because a table under it changed (planChanged), gives the text a new name
 * for every connection and runs it once more.
 */
function runNamed<T>(text: string, first: string, run: (name: string) => Promise<T>): Promise<T> {
  const name = statementNames.get(text) ?? first;
  return run(name).catch((err: unknown) => {
    if (!planChanged(err)) throw err;
    if ((statementNames.get(text) ?? first) === name) statementNames.set(text, `lw_${++lastStatementName}`);
    return run(statementNames.get(text)!).catch(() => Promise.reject(err));
  });
}

/**
 * Runs the query builder's parameterised statements as named prepared statements, so PostgreSQL
 * parses and plans each distinct statement once per connection instead of on every execution (pg
 * prepares a name on a connection the first time it is used there).
 */
function preparing(client: pg.PoolClient): pg.PoolClient {
  const tagged = client as pg.PoolClient & { [PREPARED]?: true };
  if (tagged[PREPARED]) return client;
  tagged[PREPARED] = true;
  const plain = client.query.bind(client) as QueryFn;
  (client as unknown as { query: QueryFn }).query = function namedQuery(...args: unknown[]) {
    // Only the query builder's form, (text, values): pool.query and others pass callbacks or configs.
    const [text, values] = args;
    if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values) || values.length === 0) return plain(...args);
    let name = statementNames.get(text);
    if (!name) {
      if (statementNames.size >= MAX_NAMED_STATEMENTS) return plain(text, values);
      name = `lw_${++lastStatementName}`;
      statementNames.set(text, name);
    }
    return runNamed(text, name, (n) => plain({ name: n, text, values }));
  };
  return client;
}

/**
 * `readCache` (default on): keep read results while nothing has changed them (SQLite: readRows;
 * PostgreSQL: CachingPostgresDriver).
 */
export function createDatabase(opts: {
  databaseUrl: string | null;
  dataDir: string;
  sqliteFile?: string;
  readCache?: boolean;
  /** PostgreSQL: the longest a kept result is used (tests; default MAX_AGE_MS). */
  readCacheMaxAgeMs?: number;
  /**
   * Reads only (the response refresher's worker): on SQLite both connections are query-only and
   * nothing is set on the file; on PostgreSQL every transaction is read-only, a pool of two, no
   * read cache and no listening connection.
   */
  readOnly?: boolean;
}): Database {
  if (opts.databaseUrl && opts.readOnly) return readOnlyPostgres(opts.databaseUrl);
  if (opts.databaseUrl) {
    const pool = new (loadPg().Pool)({ connectionString: opts.databaseUrl, max: 10, keepAlive: true });
    // An idle client whose server connection ends (restart, drop database) must not crash the process;
    // the pool replaces it on the next query.
    pool.on('error', () => undefined);
    // The server processes (backend pids) of this pool's connections, while they are open: their
    // changes are counted by the driver's write epoch as soon as their result comes, so their
    // notices are not counted again (ChangeNotices). TCP keepalive (above) lets a connection whose
    // server process died unseen end, and its pid leave the set, before another process could be
    // given the pid; MAX_AGE_MS bounds what a notice ignored that way could hide.
    const backends = new Set<number>();
    pool.on('connect', (client) => {
      const pid = (client as unknown as { processID: number | null }).processID;
      if (pid === null) return;
      backends.add(pid);
      client.once('end', () => backends.delete(pid));
    });
    pool.on('remove', (client) => backends.delete((client as unknown as { processID: number }).processID));
    const notices = new ChangeNotices(loadPg().Client, opts.databaseUrl, [AUTH_CHANGES_CHANNEL, DATA_CHANGES_CHANNEL], undefined, (pid) => backends.has(pid));
    const readCache = opts.readCache ?? true;
    const driver = new CachingPostgresDriver(pool, async () => preparing(await pool.connect()), readCache ? () => notices.stamp() : null, opts.readCacheMaxAgeMs);
    return postgresDatabase(pool, driver, {
      authChanges: () => notices.stamp(AUTH_CHANGES_CHANNEL),
      externalChanges: () => notices.stamp(),
      maxAgeMs: opts.readCacheMaxAgeMs ?? MAX_AGE_MS,
      readGeneration: () => driver.generation(),
      readCacheStats: () => driver.cacheStats(),
      beforeClose: () => notices.close(),
    });
  }
  const file = opts.sqliteFile ?? join(opts.dataDir, 'labwright.sqlite3');
  const writer = openSqlite(file, { reader: opts.readOnly });
  const reader = openSqlite(file, { reader: true });
  const dialect = new TwoConnectionSqliteDialect({ writer, reader, readCache: opts.readCache ?? true, walSync: opts.readOnly ? null : new WalSync(`${file}-wal`), readOnly: opts.readOnly === true });
  const log = queryStatsLogger();
  const db = new Kysely<DB>({ dialect, log });
  // Reads on the read connection without the executor (`read`, and prepared statements through
  // readDirect); undefined for a statement that writes.
  const readNow = (text: string, params: unknown[]): unknown[] | undefined => {
    const stmt = reader.prepare(text);
    if (!stmt.readonly) return undefined;
    if (!log) return dialect.driver.readRows(stmt, params);
    const started = performance.now();
    const rows = dialect.driver.readRows(stmt, params);
    log({ level: 'query', query: { sql: text, parameters: params } as never, queryDurationMillis: performance.now() - started });
    return rows;
  };
  directReaders.set(db, readNow);
  return {
    db,
    dialect: 'sqlite',
    writeEpoch: () => dialect.driver.writeEpoch,
    whenDurable: (epoch) => dialect.driver.whenDurable(epoch),
    writesInFlight: () => 0,
    writesLanded: () => null,
    visibleEpoch: () => dialect.driver.writeEpoch,
    authChanges: () => dialect.driver.dataVersion(),
    externalChanges: () => dialect.driver.externalVersion(),
    pinRead: (fn) => dialect.driver.pinRead(fn),
    checkpoint: () => dialect.driver.checkpoint(),
    maxAgeMs: null,
    readGeneration: () => (opts.readCache ?? true ? dialect.driver.dataVersion() : null),
    readCacheStats: () => dialect.driver.cacheStats(),
    schemaChanged: () => dialect.driver.schemaChanged(),
    transaction: (fn) => db.transaction().execute(fn),
    forUpdate: (qb) => qb,
    close: () => db.destroy(),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    read: <T>(q: RawSql, params: unknown[]) => {
      try {
        const rows = readNow(q.sqlite, params);
        if (!rows) throw new Error(`database.read: not a read-only statement: ${q.sqlite}`);
        return Promise.resolve(rows as T[]);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    },
  };
}

/** The response refresher's PostgreSQL database (createDatabase's `readOnly`). */
function readOnlyPostgres(databaseUrl: string): Database {
  const pool = new (loadPg().Pool)({ connectionString: databaseUrl, max: 2, keepAlive: true, options: '-c default_transaction_read_only=on' });
  pool.on('error', () => undefined);
  const driver = new CachingPostgresDriver(pool, async () => preparing(await pool.connect()), null);
  driver.readOnly = true;
  return postgresDatabase(pool, driver, { authChanges: () => null, externalChanges: () => null, maxAgeMs: MAX_AGE_MS, readGeneration: () => null, readCacheStats: () => null, beforeClose: async () => undefined });
}

/** A Database on a PostgreSQL pool and its driver; `own` is what differs between the server's and the refresher's. */
function postgresDatabase(
  pool: pg.Pool,
  driver: CachingPostgresDriver,
  own: Pick<Database, 'authChanges' | 'externalChanges' | 'maxAgeMs' | 'readGeneration' | 'readCacheStats'> & { beforeClose: () => Promise<void> },
): Database {
  const db = new Kysely<DB>({ dialect: new LabwrightPostgresDialect(driver), log: queryStatsLogger() });
  directReaders.set(db, (text, params) => driver.peek(text, params));
  const { beforeClose, ...rest } = own;
  return {
    db,
    dialect: 'postgres',
    writeEpoch: () => driver.writeEpoch,
    whenDurable: () => null,
    writesInFlight: () => driver.writesInFlight(),
    writesLanded: () => driver.writesLanded(),
    visibleEpoch: () => driver.visibleEpoch,
    pinRead: (fn) => driver.pinRead(fn),
    checkpoint: () => undefined,
    ...rest,
    transaction: (fn) => db.transaction().execute(fn),
    forUpdate: (qb) => qb.forUpdate(),
    close: async () => {
      await beforeClose();
      await db.destroy();
    },
    read: async <T>(q: RawSql, params: unknown[]) =>
      (await driver.readThrough(q.postgres, params, async () => (await runNamed(q.postgres, q.name, (name) => driver.query(q.postgres, params, name))).rows)) as T[],
    ping: async () => {
      await pool.query('select 1');
    },
  };
}

/** Per Kysely instance (never a transaction): runs a read-only statement at once if it can (readDirect). */
const directReaders = new WeakMap<object, (text: string, params: unknown[]) => unknown[] | undefined>();

/**
 * Runs an already compiled SELECT at once, without the query builder's executor, where that can
 * be done synchronously: on SQLite on the read connection, as `read` does, when `db` is the
 * database outside any transaction and the statement only reads; on PostgreSQL when its result is
 * in the read cache. Otherwise (a transaction, a write, a PostgreSQL miss) undefined, and the
 * caller goes through the executor. Prepared statements use it: the executor's chain of promises
 * per statement (connection, execution, release) cost more than a small SQLite read itself.
 */
export function readDirect(db: object, text: string, params: unknown[]): unknown[] | undefined {
  const direct = directReaders.get(db);
  return direct ? direct(text, params) : undefined;
}

/** True when the database answers; used by /-/readiness. */
export async function ping(database: Database): Promise<boolean> {
  try {
    await database.ping();
    return true;
  } catch {
    return false;
  }
}

/** Current time as stored: ISO 8601 UTC with milliseconds (sorts as text on both dialects). */
export function nowIso(): string {
  return new Date().toISOString();
}

/** SQL booleans are stored as 0/1 integers on both dialects. */
export function toBool(v: number | boolean | null | undefined): boolean {
  return v === 1 || v === true;
}
