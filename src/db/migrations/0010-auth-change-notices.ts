// Change notices for the authentication cache (issue 7; src/http/auth.ts).
import { sql } from 'kysely';
import { AUTH_CHANGES_CHANNEL } from '../change-notices.js';
import type { LabwrightMigration } from './helpers.js';

/** The tables whose rows an authenticated request reads before anything else. */
export const AUTH_TABLES = ['users', 'personal_access_tokens', 'oauth_access_tokens'];

export const authChangeNotices: LabwrightMigration = {
  name: '0010-auth-change-notices',
  async up(ctx) {
    // SQLite needs nothing: every process sees another's commit through PRAGMA data_version.
    if (ctx.dialect !== 'postgres') return;
    // After any statement that changes one of these tables, every process listening is told once
    // the transaction commits (several notices of one transaction arrive as one). Statement level:
    // a statement that changes many rows sends one notice.
    await sql
      .raw(
        `create function labwright_auth_changed() returns trigger language plpgsql as $$ ` +
          `begin perform pg_notify('${AUTH_CHANGES_CHANNEL}', ''); return null; end $$`,
      )
      .execute(ctx.db);
    for (const table of AUTH_TABLES) {
      await sql
        .raw(`create trigger ${table}_auth_changed after insert or update or delete or truncate on ${table} for each statement execute function labwright_auth_changed()`)
        .execute(ctx.db);
    }
  },
};
