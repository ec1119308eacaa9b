// Wiki page metadata (migration 0029): a stable id per page of a project's wiki.
import type { Generated } from 'kysely';

export interface WikiPageMetaTable {
  id: Generated<number>;
  project_id: number;
  /** The page's title when last written (events show it after the page is gone). */
  title: string;
  /** The page's current slug; null once the slug belongs to another page. */
  canonical_slug: string | null;
  created_at: string;
  updated_at: string;
}
