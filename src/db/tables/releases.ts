// Releases (migration 0014).
import type { Generated } from 'kysely';

export interface ReleasesTable {
  id: Generated<number>;
  project_id: number;
  tag: string;
  name: string | null;
  description: string | null;
  author_id: number | null;
  sha: string | null;
  released_at: string;
  created_at: string;
  updated_at: string;
}

export interface ReleaseLinksTable {
  id: Generated<number>;
  release_id: number;
  name: string;
  url: string;
  /** GitLab's direct asset path ('/bin/app'), or null. */
  filepath: string | null;
  link_type: Generated<string>;
  created_at: string;
  updated_at: string;
}

export interface ReleaseMilestonesTable {
  id: Generated<number>;
  release_id: number;
  milestone_id: number;
}
