// Small SQL expressions that read the same on both dialects.
import { sql, type RawBuilder } from 'kysely';

export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => '\\' + m);
}

/** `column LIKE pattern ESCAPE '\'`; SQLite has no default escape character. */
export function like(column: string, pattern: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '\\'`;
}

/** Case-insensitive substring match (lower() on both sides; SQLite LIKE is ASCII-only anyway). */
export function containsCi(column: string, needle: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${sql.ref(column)}) like ${'%' + escapeLike(needle.toLowerCase()) + '%'} escape '\\'`;
}

export function startsWith(column: string, prefix: string): RawBuilder<boolean> {
  return like(column, escapeLike(prefix) + '%');
}
