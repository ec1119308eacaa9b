// Snippets (migration 0027): personal (project_id null) and project snippets; their files are in
// the snippet's git repository, the paths also here (JSON array, in the repository's order).
import type { Generated } from 'kysely';

export interface SnippetsTable {
  id: Generated<number>;
  /** PersonalSnippet or ProjectSnippet. */
  type: string;
  project_id: number | null;
  author_id: number;
  title: string;
  description: string | null;
  /** private, internal or public. */
  visibility: string;
  /** JSON array of the file paths on the default branch, sorted as git lists them. */
  file_paths: string;
  default_branch: string;
  /** Bytes of the snippet's repository (migration 0030). */
  repository_size: Generated<number>;
  created_at: string;
  updated_at: string;
}
