// GitLab's rule that a project has at most one open merge request per source and target branch,
// kept by the database (issue 7): creation on PostgreSQL is one statement that takes the project
// row lock mid-statement, so its own snapshot cannot see a creation committed while it waited; a
// unique index sees every committed row whatever the snapshot. It also closes the race between a
// creation and a reopen or retarget of another merge request, which lock different rows.
import { sql } from 'kysely';
import type { LabwrightMigration } from './helpers.js';

export const OPEN_MR_INDEX = 'merge_requests_open_branches';

export const openMergeRequestRule: LabwrightMigration = {
  name: '0012-open-merge-request-rule',
  async up(ctx) {
    // Labwright has always refused such duplicates, but a database edited by hand may hold some.
    // They are left as they are (nothing is closed or changed): all but the oldest of each set
    // stay outside the index, so it can be built.
    const { rows } = await sql<{ id: number }>`
      select m.id from merge_requests m
      where m.state = 'opened' and exists (
        select 1 from merge_requests o
        where o.state = 'opened' and o.project_id = m.project_id and o.source_project_id = m.source_project_id
          and o.source_branch = m.source_branch and o.target_branch = m.target_branch and o.id < m.id)
      order by m.id`.execute(ctx.db);
    const except = rows.length ? ` and id not in (${rows.map((r) => Number(r.id)).join(', ')})` : '';
    await sql
      .raw(`create unique index ${OPEN_MR_INDEX} on merge_requests (project_id, source_project_id, source_branch, target_branch) where state = 'opened'${except}`)
      .execute(ctx.db);
  },
};
