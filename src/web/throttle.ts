// Fixed-window counters in the database, shared by every process (wrong device user codes per IP).
import type { AppContext } from '../context.js';
import { now } from '../oauth/clock.js';

/** Seconds until the window ends when the key is over `limit`, else null. */
export async function throttled(ctx: AppContext, key: string, limit: number, windowSec: number): Promise<number | null> {
  const row = await ctx.db.selectFrom('web_throttles').select(['count', 'window_start']).where('key', '=', key).executeTakeFirst();
  if (!row) return null;
  const ends = Date.parse(row.window_start) + windowSec * 1000;
  if (ends <= now() || row.count < limit) return null;
  return Math.max(1, Math.ceil((ends - now()) / 1000));
}

/** Counts one failure against the key, starting a new window when the old one has ended. */
export async function countFailure(ctx: AppContext, key: string, windowSec: number): Promise<void> {
  const t = now();
  await ctx.db
    .insertInto('web_throttles')
    .values({ key, window_start: new Date(t).toISOString(), count: 0 })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  await ctx.database.transaction(async (trx) => {
    const row = await ctx.database.forUpdate(trx.selectFrom('web_throttles').select(['id', 'count', 'window_start']).where('key', '=', key)).executeTakeFirstOrThrow();
    const expired = Date.parse(row.window_start) + windowSec * 1000 <= t;
    await trx
      .updateTable('web_throttles')
      .set(expired ? { count: 1, window_start: new Date(t).toISOString() } : { count: row.count + 1 })
      .where('id', '=', row.id)
      .execute();
  });
}
