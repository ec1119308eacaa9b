// Indexes for the single merge request read and for creation (issue 7).
import { sql } from 'kysely';
import type { LabwrightMigration } from './helpers.js';
import { index } from './helpers.js';

export const mergeRequestIndexes: LabwrightMigration = {
  name: '0009-merge-request-indexes',
  async up(ctx) {
    // `first_contribution` on GET …/merge_requests/:iid asks whether the author has another merged
    // merge request in the project. Without it that walked either all of the author's merge
    // requests (author index) or all merged ones of the project (state index).
    await index(ctx, 'merge_requests_project_author', 'merge_requests', 'project_id, author_id, state');
    // The duplicate check on creation (same source and target branch, open) matched three columns
    // of both the source and the target index, and SQLite took the target one: every open merge
    // request into `main`. With the target branch in it, the source index matches four.
    await sql.raw('drop index merge_requests_source').execute(ctx.db);
    await index(ctx, 'merge_requests_source', 'merge_requests', 'source_project_id, source_branch, target_branch, state');
  },
};
