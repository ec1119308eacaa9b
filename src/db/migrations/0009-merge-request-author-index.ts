// An index for the single merge request read (issue 7).
import type { LabwrightMigration } from './helpers.js';
import { index } from './helpers.js';

export const mergeRequestAuthorIndex: LabwrightMigration = {
  name: '0009-merge-request-author-index',
  async up(ctx) {
    // `first_contribution` on GET …/merge_requests/:iid asks whether the author has another merged
    // merge request in the project. Without it that walked either all of the author's merge
    // requests (author index) or all merged ones of the project (state index).
    await index(ctx, 'merge_requests_project_author', 'merge_requests', 'project_id, author_id, state');
  },
};
