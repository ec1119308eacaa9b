// SQL for users. Explicit column lists; every other module reads users through here.
import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../types.js';
import type { UsersTable } from '../tables/core.js';
import { prepared } from '../prepared.js';

export type UserRow = Selectable<UsersTable>;

/** Ids are 32-bit integers in the database; anything else cannot name a row (and would fail on PostgreSQL). */
export function isDbId(id: number): boolean {
  return Number.isSafeInteger(id) && id > 0 && id <= 2147483647;
}

const userById = prepared((db, id: number) => db.selectFrom('users').selectAll().where('id', '=', id));

export async function findUserById(db: Kysely<DB>, id: number): Promise<UserRow | undefined> {
  if (!isDbId(id)) return undefined;
  return (await userById(db, id))[0];
}

export function findUserByUsername(db: Kysely<DB>, username: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
    .executeTakeFirst();
}

export function findUserByEmail(db: Kysely<DB>, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
}

/** The columns an embedded user (UserBasic, with `bot`) is presented from. */
export const USER_REF_COLUMNS = ['id', 'username', 'public_email', 'name', 'state', 'locked_until', 'avatar_path', 'user_type'] as const;
export type UserRefRow = Pick<UserRow, (typeof USER_REF_COLUMNS)[number]>;

/** Users by id, in chunks of 500 ids (bounded parameter lists). */
async function usersByIds<R extends { id: number }>(ids: number[], load: (chunk: number[]) => Promise<R[]>): Promise<Map<number, R>> {
  const unique = [...new Set(ids.filter((x) => x != null))];
  const map = new Map<number, R>();
  for (let i = 0; i < unique.length; i += 500) for (const r of await load(unique.slice(i, i + 500))) map.set(r.id, r);
  return map;
}

/** Users by id with the UserBasic columns only (lists embed many users; a full row is 30 columns). */
export function findUserRefsByIds(db: Kysely<DB>, ids: number[]): Promise<Map<number, UserRefRow>> {
  return usersByIds(ids, (chunk) => db.selectFrom('users').select(USER_REF_COLUMNS).where('id', 'in', chunk).execute());
}

/** Loads many users in one query per 500 (for presenting lists without a query per item). */
export function findUsersByIds(db: Kysely<DB>, ids: number[]): Promise<Map<number, UserRow>> {
  return usersByIds(ids, (chunk) => db.selectFrom('users').selectAll().where('id', 'in', chunk).execute());
}
