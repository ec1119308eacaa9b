// Whole responses of read routes, kept while nothing they were made from can have changed (issue 7).
//
// A route declared with `{ cache: true }` (http/route.ts) answers a repeated GET with the bytes it
// sent before, after the request has been authenticated and counted against its rate limit like
// any other. What a kept response was made from, and what ends it:
//
// - The database, as the read cache sees it (`Database.readGeneration`): on SQLite the file's
//   `data_version`, which changes with every commit of any connection in any process; on
//   PostgreSQL this process's writes and the change notices of every process, and an age bound.
//   A response is kept only if the generation was the same from before the request was
//   authenticated until the response was done, so the caller's rows and every read of the handler
//   saw one state of the data.
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
// Handlers must not have other side effects: a hit does not run them.

import type { Database } from '../db/database.js';
import { todayUtc } from '../services/personal-access-tokens.js';

/** Bounds (then the store starts over): estimated bytes (bodies as stored, two per character of the rest), responses, key length. */
const MAX_BYTES = 32 * 1024 * 1024;
const MAX_ENTRIES = 10_000;
const MAX_KEY = 8192;
/** A response over a sixteenth of the bound is not kept. */
const MAX_ONE = MAX_BYTES / 16;

export interface CachedResponse {
  /** The JSON, encoded once: a hit hands these bytes to the socket as they are. */
  body: Buffer;
  /** Headers the handler set (pagination), name and value. */
  headers: ReadonlyArray<readonly [string, string]>;
  /** Checked on every hit: false means the response may no longer be used. */
  check: (() => boolean | Promise<boolean>) | null;
}

/** The earliest future time a presenter's answer changes at (ms since the epoch), over all stores. */
let flipAt = Number.POSITIVE_INFINITY;
/** Bumped whenever the clock passes `flipAt`: every store then starts over. */
let flips = 0;

/** Tells every response cache that what is being presented changes at `t` (ms since the epoch). */
export function noteTimeFlip(t: number): void {
  if (t < flipAt) flipAt = t;
}

function currentFlips(): number {
  if (flipAt !== Number.POSITIVE_INFINITY && Date.now() >= flipAt) {
    flipAt = Number.POSITIVE_INFINITY;
    flips++;
  }
  return flips;
}

function entryBytes(key: string, response: CachedResponse): number {
  let bytes = 2 * key.length + response.body.length + 64;
  for (const [name, value] of response.headers) bytes += 2 * (name.length + value.length) + 32;
  return bytes;
}

export class ResponseCache {
  private readonly entries = new Map<string, CachedResponse>();
  private bytes = 0;
  private hits = 0;
  private shared = 0;
  /** Bumped whenever the store is emptied; what `begin` returns. */
  private era = 0;
  private generation: number | null = null;
  private day = '';
  private flips = -1;

  constructor(private readonly database: Database) {}

  /**
   * Brings the store up to date with the database, the date and the clock, and returns its era:
   * a response made from now on may be kept if the era is still the same when it is done. Null
   * when nothing may be used or kept (no read cache, or PostgreSQL's listening connection down).
   */
  begin(): number | null {
    const generation = this.database.readGeneration();
    if (generation === null) {
      if (this.entries.size > 0) this.restart(null);
      return null;
    }
    if (generation !== this.generation || this.day !== todayUtc() || this.flips !== currentFlips()) this.restart(generation);
    return this.era;
  }

  /** The kept response for `key` (call `begin` first, in the same turn). */
  get(key: string): CachedResponse | undefined {
    return this.entries.get(key);
  }

  /** Counts a kept response that was sent (stats): from the store, or shared by a request making it. */
  sent(shared = false): void {
    if (shared) this.shared++;
    else this.hits++;
  }

  /** Keeps a response whose handler ran from `era` (begin's) if nothing has changed since; whether it was kept. */
  set(key: string, era: number, response: CachedResponse): boolean {
    if (key.length > MAX_KEY || this.begin() !== era) return false;
    const bytes = entryBytes(key, response);
    if (bytes > MAX_ONE) return false;
    if (this.bytes + bytes > MAX_BYTES || this.entries.size >= MAX_ENTRIES) {
      this.entries.clear();
      this.bytes = 0;
    }
    const old = this.entries.get(key);
    if (old) this.bytes -= entryBytes(key, old);
    this.entries.set(key, response);
    this.bytes += bytes;
    return true;
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
    return f && f.era === era ? f.done : undefined;
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
    this.bytes -= entryBytes(key, old);
    this.entries.delete(key);
  }

  stats(): { entries: number; bytes: number; hits: number; shared: number } {
    return { entries: this.entries.size, bytes: this.bytes, hits: this.hits, shared: this.shared };
  }

  private restart(generation: number | null): void {
    this.entries.clear();
    this.bytes = 0;
    this.era++;
    this.generation = generation;
    this.day = todayUtc();
    this.flips = currentFlips();
  }
}
