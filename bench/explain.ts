// EXPLAIN (QUERY PLAN) of the statements the hot paths run, on a seeded database:
//   node --import tsx bench/explain.ts [--db sqlite|postgres]
// The statements are the ones LABWRIGHT_QUERY_STATS reported as the most expensive.
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.js';
import { cleanup, startLabwright } from './load.js';
import { seed } from './seed.js';

const args = process.argv.slice(2);
const db = (args.includes('--db') ? args[args.indexOf('--db') + 1] : 'sqlite') as 'sqlite' | 'postgres';

function statements(s: Awaited<ReturnType<typeof seed>>): Array<[string, string]> {
  const p = s.mrProjectId;
  return [
    ['MR list page', `select merge_requests.* from merge_requests where merge_requests.project_id = ${p} order by merge_requests.created_at desc, merge_requests.id desc limit 21 offset 0`],
    ['MR list bounded count', `select count(*) as n from (select 1 as one from merge_requests where merge_requests.project_id = ${p} limit 10001) as bounded`],
    ['MR labels of a page', `select labels.*, merge_request_labels.merge_request_id as mr_id from merge_request_labels inner join labels on labels.id = merge_request_labels.label_id where merge_request_labels.merge_request_id in (1,2,3,4,5,6,7,8,9,10)`],
    ['project access members', `select source_id, access_level from members where source_type = 'Namespace' and source_id in (1, 2) and user_id = 1 and (expires_at is null or expires_at > '2026-01-01')`],
    ['namespace storage sum', `select sum(projects.repository_size) as n from projects inner join namespaces on namespaces.id = projects.namespace_id where namespaces.traversal like '/${s.rootGroupId}/%'`],
    ['namespace members count', `select count(distinct members.user_id) as n from members inner join namespaces on namespaces.id = members.source_id where members.source_type = 'Namespace' and namespaces.traversal like '/${s.rootGroupId}/%'`],
    ['group links of visible groups', `select shared.traversal as shared_traversal, with_.traversal as with_traversal, group_group_links.group_access from group_group_links inner join namespaces as shared on shared.id = group_group_links.shared_group_id inner join namespaces as with_ on with_.id = group_group_links.shared_with_group_id where (group_group_links.expires_at is null or group_group_links.expires_at > '2026-01-01')`],
    ['groups page by name', `select namespaces.* from namespaces left join group_settings on group_settings.namespace_id = namespaces.id where namespaces.kind = 'group' and 1 = 1 order by namespaces.name asc, namespaces.id asc limit 21 offset 0`],
    ['PAT with user', `select u.*, t.id from personal_access_tokens t left join users u on u.id = t.user_id where t.token_digest = 'x'`],
  ];
}

async function main(): Promise<void> {
  const server = await startLabwright(db);
  try {
    const seeded = await seed(server, { large: false });
    const database = createDatabase({ databaseUrl: server.databaseUrl, dataDir: server.dataDir });
    try {
      for (const [name, text] of statements(seeded)) {
        const prefix = db === 'postgres' ? 'explain analyze ' : 'explain query plan ';
        const r = await sql.raw<Record<string, unknown>>(prefix + text).execute(database.db);
        console.log(`\n# ${name}\n${r.rows.map((row) => (db === 'postgres' ? row['QUERY PLAN'] : row.detail)).join('\n')}`);
      }
    } finally {
      await database.close();
    }
  } finally {
    await cleanup(server);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
