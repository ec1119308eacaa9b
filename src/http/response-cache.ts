// Whole responses of read routes, kept while nothing they were made from can have changed (issue 7),
// and brought up to date after this process's own writes before those writes are acknowledged.
//
// A route declared with `{ cache: true }` (http/route.ts) answers a repeated GET with the bytes it
// sent before, after the request has been authenticated and counted against its rate limit like
// any other. What a kept response was made from, and what ends it:
//
// - The database. The store holds responses made from one state of the data: every commit of
//   this process up to `epoch` (Database.visibleEpoch), and every commit of another process seen by
//   `Database.externalChanges` when the store last started over. A response is kept only if no
//   write of this process was waiting to be shown (`settled`) and nothing changed from before the
//   request was authenticated until the response was done, so the caller's rows and every read of
//   the handler saw that state. Another process's commit (SQLite: the writer connection's
//   `data_version`; PostgreSQL: a change notice, or the read cache's age bound) empties the store.
// - The request: method, the URL as sent (nothing is kept for a request with a token on the query
//   string), the base URL of links, and the caller (the token and the acting user, so sudo and
//   each token are their own entries).
// - The date: membership and share expiry compare with today's (UTC), so the store starts over
//   when the day changes.
// - The clock, where a presenter compares a stored time with now (a user's `locked_until`, a merge
//   request's `merge_after`): the presenter calls `noteTimeFlip(t)` with the future time at which
//   its answer changes, and the store starts over when the earliest noted time passes.
// - Anything else a handler reads (git refs): it checks on every hit with `onlyWhile`, or keeps
//   nothing with `noStore` (searches, which count against a rate limit of their own).
//
// After a commit of this process the kept responses no longer show the data as it is. Instead of
// emptying the store at once, so that the next request for each of them makes it again while every
// other request waits behind it, the store is brought up to date in a *refresh round*: the
// responses read in the last HOT_MS are made again by the refresher (a worker thread running the
// same routes, http/refresher.ts) from one snapshot taken after the commit, and replace the store
// together. Until they do, requests answered from the store get the responses from before the
// commit, and every other response (the write's own, and anything made from the newer data) is
// held back (`covered`) until the store shows at least what it saw, and until that is on disk. So
// no client can see the commit before the store does, or after seeing it get an answer without it:
// a write is acknowledged once the kept responses show it, and the reads answered meanwhile are
// ordered before it. With nothing read recently, no refresher, a round that fails or takes longer
// than ROUND_DEADLINE_MS, the store is simply emptied, as before rounds existed, and the held
// responses go at once.
//
// Handlers must not have other side effects: a hit does not run them.

import type { Database } from '../db/database.js';
import { todayUtc } from '../services/personal-access-tokens.js';
import { currentFlips, noteTimeFlip, type BranchRef, type CachedResponse, type Recipe, type RefreshBatch, type Refresher } from './kept-response.js';

/** Bounds (then the store starts over): estimated bytes (bodies as stored, two per character of the rest), responses, key length. */
const MAX_BYTES = 32 * 1024 * 1024;
const MAX_ENTRIES = 10_000;
const MAX_KEY = 8192;
/** A response over a sixteenth of the bound is not kept. */
const MAX_ONE = MAX_BYTES / 16;
/** A kept response read within this long is made again by a refresh round; the others are dropped. */
export const HOT_MS = 2000;
/** Most responses one round makes again (the most recently read; the others are dropped). */
const MAX_REFRESHED = 32;
/** After a round, the next one waits this many times as long as it took... */
const ROUND_PAUSE = 5;
/** ...but no longer than this (a first round, or one on a loaded machine, is slow). */
const MAX_PAUSE_MS = 300;
/** A round not done by then is given up (the store is emptied): nothing waits longer for one. */
const ROUND_DEADLINE_MS = 500;
/**
 * PostgreSQL: a response waits this long at most for a write on its way to come back (one waiting
 * on a row lock has not committed, and must not hold every response of the process).
 */
const LANDING_DEADLINE_MS = 1000;

interface Entry {
  response: CachedResponse;
  recipe: Recipe | null;
  /** performance.now() of the latest hit (or of the making). */
  lastHit: number;
  bytes: number;
}

/** A response asked for and not in the store, which the next round makes (`want`). */
interface Wanted {
  recipe: Recipe;
  lastHit: number;
}

/** Most responses remembered as wanted (then the oldest go). */
const MAX_WANTED = 256;

interface Round {
  /** The write epoch the round brings the store to. */
  target: number;
  external: number | null;
  startedAt: number;
  deadline: NodeJS.Timeout;
}

function entryBytes(key: string, response: CachedResponse): number {
  let bytes = 2 * key.length + response.body.length + 64;
  for (const [name, value] of response.headers) bytes += 2 * (name.length + value.length) + 32;
  return bytes;
}

export interface ResponseCacheOptions {
  /** Makes kept responses again after this process's writes (null: the store is emptied instead). */
  refresher?: Refresher | null;
  /** The check of a response that depends on branches (for the refresher's responses). */
  checkBranches?: (branches: readonly BranchRef[]) => () => Promise<boolean>;
}

export class ResponseCache {
  private entries = new Map<string, Entry>();
  private bytes = 0;
  private hits = 0;
  private shared = 0;
  private refreshed = 0;
  private rounds = 0;
  /** Responses a round could not make again (dropped), and restarts by cause (stats). */
  private unmade = 0;
  /** Responses held back for a round, and their total wait (stats). */
  private held = 0;
  private heldMs = 0;
  private restarts: Record<string, number> = {};
  /** Bumped whenever the store is replaced or emptied; what `begin` returns. */
  private era = 0;
  /** This process's write epoch the store shows. */
  private epoch: number;
  /** Database.externalChanges when the store last started over. */
  private external: number | null = null;
  private day = '';
  private flips = -1;
  /** performance.now() of the state the store shows (for the PostgreSQL age bound). */
  private since = performance.now();
  private round: Round | null = null;
  /** performance.now() when the last round ended, and how long it took (pacing). */
  private lastRoundEnd = Number.NEGATIVE_INFINITY;
  private lastRoundMs = 0;
  private roundTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Responses held back until the store shows the write epoch they were made at. */
  private waiters: Array<{ epoch: number; go: () => void }> = [];
  /**
   * Responses asked for that could not be kept (made while a write waited for the store): the next
   * round makes them too. Without it, under a steady stream of writes, a store a round had to
   * empty stayed empty, every read made on the server's thread and none kept, since few were made
   * without a write landing meanwhile (PostgreSQL's closed-loop mixed load: 18 × the read p90).
   */
  private readonly wanted = new Map<string, Wanted>();
  private readonly refresher: Refresher | null;
  private readonly checkBranches: ((branches: readonly BranchRef[]) => () => Promise<boolean>) | null;

  constructor(
    private readonly database: Database,
    opts: ResponseCacheOptions = {},
  ) {
    this.refresher = opts.refresher ?? null;
    this.checkBranches = opts.checkBranches ?? null;
    this.epoch = database.visibleEpoch();
  }

  /**
   * Brings the store up to date with other processes, the date and the clock, starts a refresh
   * round if this process has written since the store was made, and returns the store's era: a
   * response made from now on may be kept if the era is still the same when it is done (and
   * `settled` held at the start). Null when nothing may be used or kept (no read cache, or
   * PostgreSQL's listening connection down).
   */
  begin(): number | null {
    const external = this.externalNow();
    if (external === null) {
      if (this.entries.size > 0 || this.round || this.waiters.length > 0) this.restart(null, 'no cache');
      return null;
    }
    if (external !== this.external || this.outdated()) this.restart(external, external !== this.external ? 'external' : 'outdated');
    else if (this.database.visibleEpoch() > this.epoch) this.startRound();
    return this.era;
  }

  /** Whether the store shows every write of this process, none under way (a response made now may be kept). */
  settled(): boolean {
    return this.epoch === this.database.visibleEpoch() && this.database.writesInFlight() === 0;
  }

  /** The kept response for `key`, counted as read now (call `begin` first, in the same turn). */
  get(key: string): CachedResponse | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    entry.lastHit = performance.now();
    return entry.response;
  }

  /** The kept response for `key`, without counting a read. */
  peek(key: string): CachedResponse | undefined {
    return this.entries.get(key)?.response;
  }

  /**
   * A response for `key` was asked for and made, but not kept (a write of this process was waiting
   * to be shown): a refresh round will make it for the store, as it makes those read lately.
   */
  want(key: string, recipe: Recipe, made: CachedResponse): void {
    if (!this.refresher || key.length > MAX_KEY || this.entries.has(key) || entryBytes(key, made) > MAX_ONE) return;
    this.wanted.delete(key);
    if (this.wanted.size >= MAX_WANTED) this.wanted.delete(this.wanted.keys().next().value as string);
    this.wanted.set(key, { recipe, lastHit: performance.now() });
  }

  /** Counts a kept response that was sent (stats): from the store, or shared by a request making it. */
  sent(shared = false): void {
    if (shared) this.shared++;
    else this.hits++;
  }

  /**
   * Keeps a response whose handler ran from `era` (begin's, with the store settled then) if nothing
   * has changed since; `recipe` lets a refresh round make it again. Whether it was kept.
   */
  set(key: string, era: number, response: CachedResponse, recipe: Recipe | null = null): boolean {
    if (key.length > MAX_KEY || this.begin() !== era || !this.settled()) return false;
    const bytes = entryBytes(key, response);
    if (bytes > MAX_ONE) return false;
    if (this.bytes + bytes > MAX_BYTES || this.entries.size >= MAX_ENTRIES) {
      this.entries.clear();
      this.bytes = 0;
    }
    const old = this.entries.get(key);
    if (old) this.bytes -= old.bytes;
    this.entries.set(key, { response, recipe, lastHit: performance.now(), bytes });
    this.bytes += bytes;
    return true;
  }

  /**
   * Null when a response may be sent now: the store shows every write of this process it may have
   * seen (all of them, or up to write epoch `epoch` when the caller knows which), and they are on
   * disk. Otherwise a promise that resolves once that holds (it never rejects). Every response but
   * those answered from the store goes through here (app.ts), and so do webhook deliveries and the
   * end of a push: none of them may tell a client of a write the store does not show yet.
   */
  covered(epoch?: number): Promise<void> | null {
    if (this.closed) return null;
    if (epoch !== undefined) return this.coveredAt(epoch);
    // A write whose result has not come back yet (PostgreSQL) may be seen already: wait for it,
    // for LANDING_DEADLINE_MS at most (then the store is emptied, and the response goes).
    const landing = this.database.writesLanded();
    if (!landing) return this.coveredAt(this.database.visibleEpoch());
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), LANDING_DEADLINE_MS);
      timer.unref();
    });
    return Promise.race([landing, late]).then((how) => {
      clearTimeout(timer);
      if (how === 'late') this.restart(this.externalNow(), 'write slow to land');
      return this.coveredAt(this.database.visibleEpoch()) ?? undefined;
    });
  }

  private coveredAt(epoch: number): Promise<void> | null {
    const store = this.storeShows(epoch);
    const disk = this.database.whenDurable(epoch)?.catch(() => undefined) ?? null;
    if (!store) return disk;
    return disk ? Promise.all([store, disk]).then(() => undefined) : store;
  }

  private storeShows(epoch: number): Promise<void> | null {
    if (epoch <= this.epoch) return null;
    // Another process's change, a new day: the store starts over, which covers everything; else a round.
    this.begin();
    if (epoch <= this.epoch) return null;
    this.startRound();
    if (epoch <= this.epoch) return null;
    this.held++;
    const since = performance.now();
    return new Promise<void>((go) =>
      this.waiters.push({
        epoch,
        go: () => {
          this.heldMs += performance.now() - since;
          go();
        },
      }),
    );
  }

  /**
   * A response for `key` being made in `era` by another request (its handler running), which
   * resolves to it when it is made, and to null when its maker keeps nothing out (`noStore`, an
   * error). After a write has emptied the store, the requests for one page that come while it is
   * being made again wait for those bytes instead of each making the same ones (50 connections
   * reading a 100-item list made it up to 12 times over). Only a flight of the current era is
   * joined, so every request sharing it arrived before any write that ends the era was seen here:
   * if one comes while the response is made, the response is not kept, but it is still sent to
   * them all, as it is to its maker, since each of them overlapped that write. (They made their
   * own until the eleventh pass: on PostgreSQL, with a creation every 20 ms and a list taking
   * about as long to make, most flights ended that way and each made it again.) A request that
   * arrives after the write was seen is of a newer era and does not join.
   */
  flight(key: string, era: number): Promise<CachedResponse | null> | undefined {
    const f = this.flights.get(key);
    // While a write of this process waits for the store, a request is newer than every flight.
    return f && f.era === era && this.settled() ? f.done : undefined;
  }

  /**
   * Announces that this request makes the response for `key` in `era`; call the result with the
   * response made (kept or not; null when there is none to share) at the latest when it is done,
   * or as soon as it is known that there will be none (later calls do nothing).
   */
  takeOff(key: string, era: number): (made: CachedResponse | null) => void {
    if (key.length > MAX_KEY) return () => undefined;
    let land!: (made: CachedResponse | null) => void;
    const mine = { era, done: new Promise<CachedResponse | null>((resolve) => (land = resolve)) };
    this.flights.set(key, mine);
    return (made) => {
      if (this.flights.get(key) === mine) this.flights.delete(key);
      land(made);
    };
  }

  private readonly flights = new Map<string, { era: number; done: Promise<CachedResponse | null> }>();

  /** Drops one response (its check failed). */
  delete(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.bytes -= old.bytes;
    this.entries.delete(key);
  }

  stats(): { entries: number; bytes: number; hits: number; shared: number; refreshed: number; unmade: number; rounds: number; held: number; heldMs: number; waiting: number; wanted: number; restarts: Record<string, number> } {
    return {
      entries: this.entries.size,
      bytes: this.bytes,
      hits: this.hits,
      shared: this.shared,
      refreshed: this.refreshed,
      unmade: this.unmade,
      rounds: this.rounds,
      held: this.held,
      heldMs: Math.round(this.heldMs),
      waiting: this.waiters.length,
      wanted: this.wanted.size,
      restarts: { ...this.restarts },
    };
  }

  /** Stops rounds and timers and lets everything held go (the server is closing). */
  close(): void {
    this.closed = true;
    this.wanted.clear();
    this.restart(null, 'closed');
  }

  /** Database.externalChanges, or null when the read cache cannot vouch for anything now. */
  private externalNow(): number | null {
    return this.database.readGeneration() === null ? null : this.database.externalChanges();
  }

  /** The day or the clock moved on, or (PostgreSQL) the state the store shows is older than the read cache may be. */
  private outdated(): boolean {
    const maxAge = this.database.maxAgeMs;
    return this.day !== todayUtc() || this.flips !== currentFlips() || (maxAge !== null && performance.now() - this.since > maxAge);
  }

  /** Empties the store: it then shows the data as it is now, which covers every held response. */
  private restart(external: number | null, why: string): void {
    this.restarts[why] = (this.restarts[why] ?? 0) + 1;
    this.entries.clear();
    this.bytes = 0;
    this.era++;
    this.epoch = this.database.visibleEpoch();
    this.external = external;
    this.day = todayUtc();
    this.flips = currentFlips();
    this.since = performance.now();
    // A round under way now makes responses from before the restart's state: they are not used.
    if (this.round) clearTimeout(this.round.deadline);
    this.round = null;
    if (this.roundTimer) clearTimeout(this.roundTimer);
    this.roundTimer = null;
    this.release();
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.epoch <= this.epoch);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.epoch > this.epoch);
    for (const w of ready) w.go();
  }

  /**
   * What a round makes: the entries read within HOT_MS that it can make again, and the responses
   * wanted within HOT_MS (`want`), most recently read first.
   */
  private hot(): Array<[string, { recipe: Recipe | null; lastHit: number }]> {
    const now = performance.now();
    const hot: Array<[string, { recipe: Recipe | null; lastHit: number }]> = [];
    for (const item of this.entries) if (item[1].recipe && now - item[1].lastHit < HOT_MS) hot.push(item);
    for (const [key, w] of this.wanted) {
      if (now - w.lastHit >= HOT_MS) this.wanted.delete(key);
      else if (!this.entries.has(key)) hot.push([key, w]);
    }
    hot.sort((a, b) => b[1].lastHit - a[1].lastHit);
    if (hot.length > MAX_REFRESHED) hot.length = MAX_REFRESHED;
    return hot;
  }

  /**
   * Brings the store to this process's current write epoch: at once by emptying it when nothing in
   * it was read lately or no refresher can make them again; otherwise by a refresh round.
   *
   * Rounds are paced so that the refresher works at most a sixth of the time: while writes keep
   * coming, each round then takes in the writes of the pause before it, and the refresher's thread
   * leaves the cores to the server's thread and to its clients. On the bench's 2 cores, rounds back
   * to back kept a core busy and the reads' p90 was twice as high, and a sixth instead of a third
   * took the mixed load from 2.1 × to 1.35 × (medians of four A/B pairs, docs/benchmarks.md). A
   * write waits for at most one pause and one round; the reads answered from the store meanwhile
   * do not wait.
   */
  private startRound(prefill = false): void {
    if (this.round || this.roundTimer || this.closed) return;
    const target = this.database.visibleEpoch();
    if (target <= this.epoch && !prefill) return;
    const external = this.externalNow();
    if (external === null || external !== this.external || this.outdated()) {
      this.restart(external, 'external at round');
      return;
    }
    const hot = this.hot();
    if (hot.length === 0 || !this.refresher || !this.refresher.ready()) {
      if (!prefill) this.restart(external, hot.length === 0 ? 'nothing read lately' : 'no refresher');
      return;
    }
    // Only responses wanted, none kept to be made again: nothing in the store is out of date, so
    // nothing waits; it is emptied now, and the round fills it (a prefill) without holding anything.
    if (!prefill && !hot.some(([key]) => this.entries.has(key))) {
      this.restart(external, 'nothing kept lately');
      prefill = true;
    }
    const wait = this.lastRoundEnd + Math.min(ROUND_PAUSE * this.lastRoundMs, MAX_PAUSE_MS) - performance.now();
    if (wait > 0) {
      this.roundTimer = setTimeout(() => {
        this.roundTimer = null;
        this.startRound(prefill);
      }, Math.ceil(wait));
      this.roundTimer.unref();
      return;
    }
    const deadline = setTimeout(() => {
      if (this.round === round) this.restart(this.externalNow(), 'round too slow');
    }, ROUND_DEADLINE_MS);
    deadline.unref();
    const round: Round = { target, external, startedAt: performance.now(), deadline };
    this.round = round;
    this.rounds++;
    this.refresher
      .refresh(hot.map(([, e]) => e.recipe!))
      .then((batch) => this.install(round, hot, batch))
      .catch(() => {
        if (this.round === round) this.restart(this.externalNow(), 'round failed');
      });
  }

  /** Replaces the store with a round's responses, unless the round was overtaken. */
  private install(round: Round, hot: Array<[string, { recipe: Recipe | null; lastHit: number }]>, batch: RefreshBatch): void {
    if (this.round !== round) return;
    // What the store will show is on disk first. The refresher's snapshot was taken after the round
    // began and may hold later commits of this process too: all of them, up to now.
    const disk = this.database.whenDurable(this.database.visibleEpoch());
    if (disk) {
      disk.then(
        () => this.install(round, hot, batch),
        () => this.round === round && this.restart(this.externalNow(), 'round failed'),
      );
      return;
    }
    clearTimeout(round.deadline);
    this.round = null;
    this.lastRoundEnd = performance.now();
    this.lastRoundMs = this.lastRoundEnd - round.startedAt;
    if (batch.flipAt !== null) noteTimeFlip(batch.flipAt);
    const external = this.externalNow();
    if (external === null || external !== round.external || this.outdated()) {
      this.restart(external, 'overtaken');
      return;
    }
    const fresh = new Map<string, Entry>();
    let bytes = 0;
    for (let i = 0; i < hot.length; i++) {
      const made = batch.made[i];
      const [key, old] = hot[i]!;
      // Wanted once: made now, or not to be kept at all (a search, an error).
      const wantedAt = this.wanted.get(key)?.lastHit ?? 0;
      this.wanted.delete(key);
      if (!made || (made.branches && !this.checkBranches)) {
        this.unmade++;
        continue;
      }
      const response: CachedResponse = {
        body: Buffer.from(made.body.buffer, made.body.byteOffset, made.body.byteLength),
        headers: made.headers,
        check: made.branches ? this.checkBranches!(made.branches) : null,
        branches: made.branches,
      };
      const size = entryBytes(key, response);
      if (size > MAX_ONE || bytes + size > MAX_BYTES) {
        this.unmade++;
        continue;
      }
      // The latest read of the old entry (reads went on during the round).
      fresh.set(key, { response, recipe: old.recipe, lastHit: Math.max(this.entries.get(key)?.lastHit ?? 0, wantedAt, old.lastHit), bytes: size });
      bytes += size;
    }
    this.entries = fresh;
    this.bytes = bytes;
    this.refreshed += fresh.size;
    this.era++;
    this.epoch = round.target;
    this.since = round.startedAt;
    this.release();
    if (this.database.visibleEpoch() > this.epoch) this.startRound();
  }
}
