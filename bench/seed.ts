// Deterministic benchmark data sets (issue 7 item 1). One template of each kind is created through
// the API (so its row is exactly what the services write); the rest are cloned from it with
// set-based INSERT … SELECT statements into the real tables, then checked through the API.
//   default: 200 users (developers of the group `bench`), a tree of 250 subgroups × 10 projects,
//            a project with 5,000 merge requests (authors, assignees, reviewers, labels, milestones)
//   large:   a pagination stress project with 500,000 merge requests, and 410,000 more users
//            (a keyset list deep enough for a page at depth 400,000)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase } from '../src/db/database.js';
import { BENCH_REDIRECT_URI, type BenchOAuthApp } from './oauth.js';
import { analyze, exec, isoPlus, lit, one, series, type SeedDb } from './sql.js';

export const SEED = {
  users: 200,
  subgroups: 250,
  projectsPerGroup: 10,
  mergeRequests: 5000,
  labels: 20,
  milestones: 5,
  /** Branches for POST /merge_requests (each new MR needs its own source branch). */
  postBranches: 40_000,
  largeMergeRequests: 500_000,
  largeUsers: 410_000,
};

export interface SeedTarget {
  url: string;
  token: string;
  dataDir: string;
  databaseUrl: string | null;
}

export interface Seeded {
  rootGroupId: number;
  subgroupId: number;
  seededProjectId: number;
  mrProjectId: number;
  mrIid: number;
  userCount: number;
  stressProjectId: number | null;
  /** Next free `post-N` branch for creations. */
  nextPostBranch: number;
  firstUserId: number;
  /** A confidential OAuth application owned by no one, registered through POST /applications. */
  oauthApp: BenchOAuthApp;
  seconds: Record<string, number>;
}

async function api(t: SeedTarget, method: string, path: string, body?: unknown): Promise<any> {
  const send = () =>
    fetch(`${t.url}/api/v4${path}`, {
      method,
      headers: { 'PRIVATE-TOKEN': t.token, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  // After a long seeding step the kept-alive socket may just have been closed by the server: a GET is retried once.
  const res = await send().catch((err) => {
    if (method !== 'GET') throw err;
    return send();
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`seed: ${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

async function maxId(s: SeedDb, table: string): Promise<number> {
  const r = await one<{ m: number | null }>(s, `select max(id) as m from ${table}`);
  return Number(r?.m ?? 0);
}

async function columns(s: SeedDb, table: string, id: number): Promise<string[]> {
  const r = await one<Record<string, unknown>>(s, `select * from ${table} where id = ${id}`);
  if (!r) throw new Error(`seed: template ${table} ${id} missing`);
  return Object.keys(r).filter((k) => k !== 'id');
}

/**
 * INSERT INTO table (every column but id) SELECT <override or the template's value> FROM the template
 * row `t` joined with `from` (which provides `s.i` and whatever the overrides use).
 */
async function cloneRows(s: SeedDb, table: string, templateId: number, from: string, overrides: Record<string, string>, tail = ''): Promise<void> {
  const cols = await columns(s, table, templateId);
  for (const k of Object.keys(overrides)) if (!cols.includes(k)) throw new Error(`seed: ${table} has no column ${k}`);
  const exprs = cols.map((c) => overrides[c] ?? `t.${c}`);
  await exec(s, `insert into ${table} (${cols.join(', ')}) select ${exprs.join(', ')} from ${table} t cross join ${from} where t.id = ${templateId} ${tail}`);
}

function timed<T>(seconds: Record<string, number>, name: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  return fn().finally(() => {
    seconds[name] = Math.round((performance.now() - start) / 100) / 10;
  });
}

/** Users cloned from one created through the API, each with a personal namespace and its route. */
async function seedUsers(s: SeedDb, t: SeedTarget, from: number, to: number, templateId: number): Promise<void> {
  const d = s.dialect;
  const beforeUser = await maxId(s, 'users');
  const name = `'bench-user-' || s.i`;
  await cloneRows(s, 'users', templateId, `${series(d, from, to)} s`, {
    username: name,
    email: `'bench-user-' || s.i || '@example.com'`,
    name: `'Bench User ' || s.i`,
    created_at: isoPlus(d, 's.i'),
    updated_at: isoPlus(d, 's.i'),
    confirmed_at: isoPlus(d, 's.i'),
  }, 'order by s.i');
  const tplNs = await one<{ id: number }>(s, `select id from namespaces where kind = 'user' and owner_id = ${templateId}`);
  const beforeNs = await maxId(s, 'namespaces');
  await cloneRows(s, 'namespaces', tplNs.id, `users s`, {
    name: 's.username',
    path: 's.username',
    full_path: 's.username',
    full_name: 's.name',
    owner_id: 's.id',
    traversal: `''`,
    created_at: 's.created_at',
    updated_at: 's.updated_at',
  }, `and s.id > ${beforeUser} order by s.id`);
  await exec(s, `update namespaces set traversal = '/' || id || '/' where id > ${beforeNs}`);
  await exec(s, `insert into routes (source_type, source_id, path, path_lower, name, created_at) select 'Namespace', id, full_path, lower(full_path), full_name, created_at from namespaces where id > ${beforeNs} order by id`);
  void t;
}

/** 250 subgroups of `bench` (the first made through the API), 10 projects each. */
async function seedGroupTree(s: SeedDb, rootGroupId: number, templateGroupId: number, templateProjectId: number, rootUserId: number): Promise<void> {
  const d = s.dialect;
  const beforeNs = await maxId(s, 'namespaces');
  await cloneRows(s, 'namespaces', templateGroupId, `${series(d, 1, SEED.subgroups - 1)} s`, {
    name: `'sub-' || s.i`,
    path: `'sub-' || s.i`,
    full_path: `'bench/sub-' || s.i`,
    full_name: `'Bench / sub-' || s.i`,
    created_at: isoPlus(d, 's.i'),
    updated_at: isoPlus(d, 's.i'),
  }, 'order by s.i');
  const root = await one<{ traversal: string }>(s, `select traversal from namespaces where id = ${rootGroupId}`);
  await exec(s, `update namespaces set traversal = ${lit(root.traversal)} || id || '/' where id > ${beforeNs}`);
  const tplSettings = await one<{ id: number }>(s, `select id from group_settings where namespace_id = ${templateGroupId}`);
  await cloneRows(s, 'group_settings', tplSettings.id, 'namespaces n', { namespace_id: 'n.id', updated_at: 'n.updated_at' }, `and n.id > ${beforeNs} order by n.id`);
  await exec(s, `insert into routes (source_type, source_id, path, path_lower, name, created_at) select 'Namespace', id, full_path, lower(full_path), full_name, created_at from namespaces where id > ${beforeNs} order by id`);
  const tplMember = await one<{ id: number }>(s, `select id from members where source_type = 'Namespace' and source_id = ${templateGroupId} and user_id = ${rootUserId}`);
  await cloneRows(s, 'members', tplMember.id, 'namespaces n', { source_id: 'n.id', created_at: 'n.created_at', updated_at: 'n.updated_at' }, `and n.id > ${beforeNs} order by n.id`);

  // Projects: 10 in every subgroup (the API-made one included), cloned from a project made through the API.
  const beforeP = await maxId(s, 'projects');
  await cloneRows(s, 'projects', templateProjectId, `namespaces n cross join ${series(d, 1, SEED.projectsPerGroup)} s`, {
    name: `'proj-' || s.i`,
    path: `'proj-' || s.i`,
    namespace_id: 'n.id',
    description: `'Seeded project ' || s.i || ' of ' || n.path`,
    created_at: isoPlus(d, 'n.id * 10 + s.i'),
    updated_at: isoPlus(d, 'n.id * 10 + s.i'),
    last_activity_at: isoPlus(d, 'n.id * 10 + s.i'),
  }, `and n.parent_id = ${rootGroupId} and n.kind = 'group' order by n.id, s.i`);
  await exec(s, `insert into routes (source_type, source_id, path, path_lower, name, created_at) select 'Project', p.id, n.full_path || '/' || p.path, lower(n.full_path || '/' || p.path), n.full_name || ' / ' || p.name, p.created_at from projects p join namespaces n on n.id = p.namespace_id where p.id > ${beforeP} order by p.id`);
}

/** Source branches for seeded and created MRs, written as one sorted packed-refs file (fast, and what `git pack-refs` writes). */
function writeBranches(repoDir: string, sha: string, names: string[]): void {
  const file = join(repoDir, 'packed-refs');
  const lines = new Map<string, string>();
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^([0-9a-f]{40}) (refs\/\S+)$/.exec(line);
      if (m) lines.set(m[2], m[1]);
    }
  }
  for (const n of names) lines.set(`refs/heads/${n}`, sha);
  const refs = [...lines.keys()].sort();
  writeFileSync(file, `# pack-refs with: peeled fully-peeled sorted \n${refs.map((r) => `${lines.get(r)} ${r}\n`).join('')}`);
  // A sanity check that git reads them.
  execFileSync('git', ['--git-dir', repoDir, 'rev-parse', '--verify', `refs/heads/${names[names.length - 1]}`]);
}

async function seedMergeRequests(s: SeedDb, projectId: number, templateMrId: number, firstUser: number, users: number, count: number, iidFrom: number, branchPrefix: string, withLinks: boolean): Promise<void> {
  const d = s.dialect;
  const chunk = 50_000;
  const firstLabel = withLinks ? (await one<{ m: number }>(s, `select min(id) as m from labels where project_id = ${projectId}`)).m : 0;
  const firstMilestone = withLinks ? (await one<{ m: number }>(s, `select min(id) as m from milestones where project_id = ${projectId}`)).m : 0;
  for (let from = 1; from <= count; from += chunk) {
    const to = Math.min(count, from + chunk - 1);
    const beforeMr = await maxId(s, 'merge_requests');
    await cloneRows(s, 'merge_requests', templateMrId, `${series(d, from, to)} s`, {
      iid: `s.i + ${iidFrom - 1}`,
      project_id: String(projectId),
      source_project_id: String(projectId),
      title: `'Bench merge request ' || s.i`,
      description: `'Seeded merge request number ' || s.i || ' for the benchmark.'`,
      source_branch: `'${branchPrefix}' || s.i`,
      author_id: `${firstUser} + (s.i % ${users})`,
      state: `case when s.i % 10 = 0 then 'closed' else 'opened' end`,
      closed_at: `case when s.i % 10 = 0 then ${isoPlus(d, 's.i * 60 + 30')} else null end`,
      closed_by_id: `case when s.i % 10 = 0 then ${firstUser} else null end`,
      milestone_id: withLinks ? `${firstMilestone} + (s.i % ${SEED.milestones})` : 'null',
      created_at: isoPlus(d, 's.i * 60'),
      updated_at: isoPlus(d, 's.i * 60 + 30'),
    }, 'order by s.i');
    if (withLinks) {
      await exec(s, `insert into merge_request_assignees (merge_request_id, user_id, position) select id, ${firstUser} + ((iid * 7) % ${users}), 0 from merge_requests where id > ${beforeMr} order by id`);
      await exec(s, `insert into merge_request_reviewers (merge_request_id, user_id, state, created_at) select id, ${firstUser} + ((iid * 13) % ${users}), 'unreviewed', created_at from merge_requests where id > ${beforeMr} order by id`);
      await exec(s, `insert into merge_request_labels (merge_request_id, label_id) select id, ${firstLabel} + (iid % ${SEED.labels}) from merge_requests where id > ${beforeMr} order by id`);
      await exec(s, `insert into merge_request_labels (merge_request_id, label_id) select id, ${firstLabel} + ((iid + 7) % ${SEED.labels}) from merge_requests where id > ${beforeMr} order by id`);
    }
  }
  await exec(s, `update projects set mr_iid_counter = ${iidFrom + count - 1} where id = ${projectId}`);
}

async function seedLabelsAndMilestones(s: SeedDb, projectId: number): Promise<void> {
  const d = s.dialect;
  const now = lit('2024-01-01T00:00:00.000Z');
  await exec(s, `insert into labels (project_id, group_id, title, title_lower, color, description, priority, archived, created_at, updated_at) select ${projectId}, null, 'label-' || s.i, 'label-' || s.i, '#6699cc', 'Seeded label ' || s.i, null, 0, ${now}, ${now} from ${series(d, 1, SEED.labels)} s order by s.i`);
  await exec(s, `insert into milestones (iid, project_id, group_id, title, description, state, due_date, start_date, created_at, updated_at) select s.i, ${projectId}, null, 'milestone-' || s.i, null, 'active', null, null, ${now}, ${now} from ${series(d, 1, SEED.milestones)} s order by s.i`);
}

/** A project made through the API with a README on main and a one-commit branch `topic`. */
async function projectWithTopic(t: SeedTarget, namespaceId: number, path: string): Promise<{ id: number; topicSha: string }> {
  const p = await api(t, 'POST', '/projects', { name: path, path, namespace_id: namespaceId, visibility: 'public', initialize_with_readme: true });
  const commit = await api(t, 'POST', `/projects/${p.id}/repository/commits`, {
    branch: 'topic',
    start_branch: 'main',
    commit_message: 'Topic change',
    actions: [{ action: 'create', file_path: 'topic.txt', content: 'a change to review\n' }],
  });
  return { id: p.id, topicSha: commit.id };
}

export async function seed(t: SeedTarget, opts: { large: boolean; log?: (msg: string) => void }): Promise<Seeded> {
  const log = opts.log ?? (() => undefined);
  const seconds: Record<string, number> = {};
  const database = createDatabase({ databaseUrl: t.databaseUrl, dataDir: t.dataDir });
  const s: SeedDb = { db: database.db, dialect: database.dialect };
  try {
    const root = await api(t, 'GET', '/user');
    // Templates through the API.
    const tplUser = await api(t, 'POST', '/users', { username: 'bench-user-0', email: 'bench-user-0@example.com', name: 'Bench User 0', password: 'bench-password-0123', skip_confirmation: true });
    const group = await api(t, 'POST', '/groups', { name: 'Bench', path: 'bench', visibility: 'public' });
    const sub0 = await api(t, 'POST', '/groups', { name: 'sub-0', path: 'sub-0', parent_id: group.id, visibility: 'public' });
    const tplProject = await api(t, 'POST', '/projects', { name: 'template', path: 'template', namespace_id: group.id, visibility: 'public' });
    const mrProject = await projectWithTopic(t, group.id, 'mr-bench');
    const oauth = await api(t, 'POST', '/applications', { name: 'Bench client', redirect_uri: BENCH_REDIRECT_URI, scopes: 'api', confidential: true });
    const oauthApp: BenchOAuthApp = { id: oauth.id, uid: oauth.application_id, secret: oauth.secret, redirectUri: BENCH_REDIRECT_URI, ownerId: root.id };

    await timed(seconds, 'users', () => seedUsers(s, t, 1, SEED.users - 1, tplUser.id));
    const firstUser = tplUser.id;
    // Every bench user is a Developer of `bench` (so of every project in it).
    const beforeM = await maxId(s, 'members');
    await exec(s, `insert into members (source_type, source_id, user_id, access_level, expires_at, created_by_id, member_role_id, created_at, updated_at) select 'Namespace', ${group.id}, id, 30, null, ${root.id}, null, created_at, updated_at from users where id >= ${firstUser} order by id`);
    void beforeM;
    log(`users: ${seconds.users} s`);

    await timed(seconds, 'group tree', () => seedGroupTree(s, group.id, sub0.id, tplProject.id, root.id));
    log(`group tree: ${seconds['group tree']} s`);

    // The merge request project: branches, labels, milestones, a template MR through the API, 5,000 clones.
    const repoDir = join(t.dataDir, 'repositories', `${mrProject.id}.git`);
    const branchNames = [
      ...Array.from({ length: SEED.mergeRequests }, (_, i) => `feature-${i + 1}`),
      ...Array.from({ length: SEED.postBranches }, (_, i) => `post-${i + 1}`),
    ];
    writeBranches(repoDir, mrProject.topicSha, branchNames);
    await seedLabelsAndMilestones(s, mrProject.id);
    const tplMr = await api(t, 'POST', `/projects/${mrProject.id}/merge_requests`, {
      source_branch: 'topic',
      target_branch: 'main',
      title: 'Template merge request',
      assignee_ids: [firstUser],
      reviewer_ids: [firstUser + 1],
      labels: 'label-1,label-2',
      milestone_id: (await one<{ m: number }>(s, `select min(id) as m from milestones where project_id = ${mrProject.id}`)).m,
    });
    await timed(seconds, 'merge requests', () => seedMergeRequests(s, mrProject.id, tplMr.id, firstUser, SEED.users, SEED.mergeRequests, 2, 'feature-', true));
    log(`${SEED.mergeRequests} merge requests: ${seconds['merge requests']} s`);

    let stressProjectId: number | null = null;
    if (opts.large) {
      const stress = await projectWithTopic(t, group.id, 'mr-stress');
      stressProjectId = stress.id;
      const tpl = await api(t, 'POST', `/projects/${stress.id}/merge_requests`, { source_branch: 'topic', target_branch: 'main', title: 'Stress template' });
      await timed(seconds, 'large merge requests', () => seedMergeRequests(s, stress.id, tpl.id, firstUser, SEED.users, SEED.largeMergeRequests, 2, 'stress-', false));
      log(`${SEED.largeMergeRequests} merge requests: ${seconds['large merge requests']} s`);
      await timed(seconds, 'large users', () => seedUsers(s, t, SEED.users, SEED.users + SEED.largeUsers - 1, tplUser.id));
      log(`${SEED.largeUsers} more users: ${seconds['large users']} s`);
    }
    await timed(seconds, 'analyze', () => analyze(s));

    // Seeded rows read correctly through the API.
    const seededProject = await one<{ id: number }>(s, `select p.id from projects p join namespaces n on n.id = p.namespace_id where n.full_path = 'bench/sub-137' and p.path = 'proj-7'`);
    const p = await api(t, 'GET', `/projects/${encodeURIComponent('bench/sub-137/proj-7')}`);
    if (p.id !== seededProject.id || p.path_with_namespace !== 'bench/sub-137/proj-7') throw new Error(`seed: seeded project reads back wrong: ${JSON.stringify(p).slice(0, 200)}`);
    const sub = await api(t, 'GET', `/groups/${encodeURIComponent('bench/sub-137')}`);
    if (sub.full_path !== 'bench/sub-137' || sub.parent_id !== group.id) throw new Error('seed: seeded subgroup reads back wrong');
    const mr = await api(t, 'GET', `/projects/${mrProject.id}/merge_requests/2501`);
    if (mr.labels?.length !== 2 || !mr.milestone || mr.assignees?.length !== 1 || mr.reviewers?.length !== 1) throw new Error(`seed: seeded MR reads back wrong: ${JSON.stringify(mr).slice(0, 300)}`);
    const u = await api(t, 'GET', `/users?username=bench-user-150`);
    if (u.length !== 1) throw new Error('seed: seeded user not found');
    return {
      rootGroupId: group.id,
      subgroupId: sub.id,
      seededProjectId: seededProject.id,
      mrProjectId: mrProject.id,
      mrIid: 2501,
      userCount: SEED.users + (opts.large ? SEED.largeUsers : 0),
      stressProjectId,
      nextPostBranch: 1,
      firstUserId: firstUser,
      oauthApp,
      seconds,
    };
  } finally {
    await database.close();
  }
}
