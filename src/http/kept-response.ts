// What the response store (http/response-cache.ts), the routes that fill it (http/route.ts) and the
// refresher that makes its responses again (http/refresher.ts) pass between them, and the clock the
// presenters tell the store about.
import type { TokenKind } from './auth.js';

/** A branch a kept response depends on, and where it pointed when the response was made. */
export interface BranchRef {
  gitDir: string;
  branch: string;
  sha: string | null;
}

export interface CachedResponse {
  /** The JSON, encoded once: a hit hands these bytes to the socket as they are. */
  body: Buffer;
  /** Headers the handler set (pagination), name and value. */
  headers: ReadonlyArray<readonly [string, string]>;
  /** Checked on every hit: false means the response may no longer be used. */
  check: (() => boolean | Promise<boolean>) | null;
  /** What `check` checks, as data (so that a refresher's response can be checked here too). */
  branches?: readonly BranchRef[] | null;
}

/** What is needed to make a kept response again elsewhere: the request without its credentials. */
export interface Recipe {
  /** The URL as sent (path and query). */
  url: string;
  /** The headers the response may depend on besides the token: host, sudo, forwarding. */
  headers: Record<string, string>;
  /** The token the caller used (the refresher checks it again by id), or null for anonymous. */
  identity: { kind: TokenKind; id: number } | null;
  /** The acting user (sudo's target) the response was made for, 0 for anonymous: the refresher's must be the same. */
  userId: number;
  /** The base URL the response was made for: the refresher's must be the same. */
  base: string;
}

/** A response the refresher made: the parts of a CachedResponse that cross threads. */
export interface MadeResponse {
  body: Uint8Array;
  headers: Array<[string, string]>;
  branches: BranchRef[] | null;
}

export interface RefreshBatch {
  /** Made again, in the order of the recipes; null where no response may be kept (an error, a changed access). */
  made: Array<MadeResponse | null>;
  /** The earliest time a presenter noted while making them (noteTimeFlip), or null. */
  flipAt: number | null;
}

export interface Refresher {
  /** Whether a batch can be sent now; false also tells the refresher it was wanted. */
  ready(): boolean;
  refresh(recipes: Recipe[]): Promise<RefreshBatch>;
}

/** The earliest future time a presenter's answer changes at (ms since the epoch), over all stores. */
let flipAt = Number.POSITIVE_INFINITY;
/** Bumped whenever the clock passes `flipAt`: every store then starts over. */
let flips = 0;

/** Tells every response cache that what is being presented changes at `t` (ms since the epoch). */
export function noteTimeFlip(t: number): void {
  if (t < flipAt) flipAt = t;
}

/** The earliest time noted with noteTimeFlip that has not passed yet (the refresher reports it), or null. */
export function pendingTimeFlip(): number | null {
  currentFlips();
  return flipAt === Number.POSITIVE_INFINITY ? null : flipAt;
}

/** How many noted times have passed (a store compares it with the count it started at). */
export function currentFlips(): number {
  if (flipAt !== Number.POSITIVE_INFINITY && Date.now() >= flipAt) {
    flipAt = Number.POSITIVE_INFINITY;
    flips++;
  }
  return flips;
}
