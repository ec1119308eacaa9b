// The projects of a group a caller may see, built on the projects module's visibility rule.
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { UserRow } from '../../../db/repositories/users.js';
import type { DB } from '../../../db/types.js';
import type { ProjectRow } from '../../../services/projects/lookup.js';
import { visibleCondition } from '../../../services/projects/list.js';

export type ProjectQuery = SelectQueryBuilder<DB, 'projects', ProjectRow>;

export async function visibleProjectsQuery(db: Kysely<DB>, user: UserRow | null): Promise<ProjectQuery> {
  let q = db.selectFrom('projects').selectAll('projects') as ProjectQuery;
  const visible = await visibleCondition(db, user);
  if (visible) q = q.where(visible as never);
  return q;
}
