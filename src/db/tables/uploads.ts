// Project Markdown uploads (migration 0032).
import type { Generated } from 'kysely';

export interface UploadsTable {
  id: Generated<number>;
  project_id: number;
  /** 32 lower-case hex characters: the unguessable part of the file's URL. */
  secret: string;
  filename: string;
  size: number;
  uploaded_by_user_id: number | null;
  created_at: string;
}
