// Benchmark scenarios of issue 7: what each loads, against which same-run baseline, and its goal.
// Ratio scenarios are declared as data; the others (creation rate, mixed load, constant rate,
// pagination depth, count cost) have their own run function in ./special.ts.
import type { Options } from 'autocannon';
import type { Stream } from './arrival.js';
import type { Seeded } from './seed.js';

export type DbName = 'sqlite' | 'postgres';

export interface ScenarioEnv {
  url: string;
  token: string;
  seeded: Seeded;
  db: DbName;
}

export interface RatioScenario {
  name: string;
  kind: 'ratio';
  /** Needs the `--large` data set. */
  large?: boolean;
  path(e: ScenarioEnv): string;
  /** b1: bare Fastify with a small JSON; b3: the same objects serialised (B2, the exact bytes, is shown beside it). */
  baseline: 'b1' | 'b3';
  goal: number;
  autocannon?: Partial<Options>;
}

export interface SpecialScenario {
  name: string;
  kind: 'special';
  large?: boolean;
  /** Key of the run function in ./special.ts. */
  run: 'mrCreate' | 'mixed' | 'mixedArrival' | 'constantRate' | 'keysetDepth' | 'offsetDepth' | 'countCost' | 'oauthToken';
}

export type Scenario = RatioScenario | SpecialScenario;

const mrList = (perPage: number) => (e: ScenarioEnv) => `/api/v4/projects/${e.seeded.mrProjectId}/merge_requests?per_page=${perPage}`;

export const scenarios: Scenario[] = [
  { name: 'user', kind: 'ratio', path: () => '/api/v4/user', baseline: 'b1', goal: 0.6 },
  { name: 'project', kind: 'ratio', path: (e) => `/api/v4/projects/${e.seeded.seededProjectId}`, baseline: 'b1', goal: 0.45 },
  { name: 'mr-list-20', kind: 'ratio', path: mrList(20), baseline: 'b3', goal: 0.5 },
  { name: 'mr-list-100', kind: 'ratio', path: mrList(100), baseline: 'b3', goal: 0.5 },
  { name: 'mr-get', kind: 'ratio', path: (e) => `/api/v4/projects/${e.seeded.mrProjectId}/merge_requests/${e.seeded.mrIid}`, baseline: 'b1', goal: 0.4 },
  { name: 'groups', kind: 'ratio', path: () => '/api/v4/groups', baseline: 'b3', goal: 0.35 },
  { name: 'group-subgroups', kind: 'ratio', path: (e) => `/api/v4/groups/${e.seeded.rootGroupId}/subgroups`, baseline: 'b3', goal: 0.35 },
  { name: 'group-projects', kind: 'ratio', path: (e) => `/api/v4/groups/${e.seeded.rootGroupId}/projects?include_subgroups=true`, baseline: 'b3', goal: 0.35 },
  { name: 'group-mrs', kind: 'ratio', path: (e) => `/api/v4/groups/${e.seeded.rootGroupId}/merge_requests`, baseline: 'b3', goal: 0.35 },
  { name: 'namespaces', kind: 'ratio', path: () => '/api/v4/namespaces', baseline: 'b3', goal: 0.35 },
  { name: 'mr-create', kind: 'special', run: 'mrCreate' },
  { name: 'oauth-token', kind: 'special', run: 'oauthToken' },
  { name: 'mixed', kind: 'special', run: 'mixed' },
  { name: 'mixed-rate', kind: 'special', run: 'mixedArrival' },
  { name: 'rate-500', kind: 'special', run: 'constantRate' },
  { name: 'keyset-depth', kind: 'special', run: 'keysetDepth', large: true },
  { name: 'offset-depth', kind: 'special', run: 'offsetDepth', large: true },
  { name: 'count-500k', kind: 'special', run: 'countCost', large: true },
];

/** The read paths the constant-rate and mixed runs cycle through. */
export function readPaths(e: ScenarioEnv): string[] {
  return scenarios.filter((s): s is RatioScenario => s.kind === 'ratio' && !s.large).map((s) => s.path(e));
}

/** The mixed loads' reads: the merge request paths of the ratio scenarios. */
export function mixedReadPaths(e: ScenarioEnv): string[] {
  return readPaths(e).filter((p) => /merge_requests/.test(p));
}

/**
 * The constant-arrival mixed load (mixed-rate): those reads at `readRate` per second, and a
 * creation stream at a ninth of it (writes are then 10 % of the requests) from the next unused
 * seeded branch, made anew for each run as the branches are used up.
 */
export function mixedStreams(e: ScenarioEnv, readRate = Number(process.env.BENCH_MIXED_RATE ?? 450)): { reads: Stream; writes: () => Stream } {
  return {
    reads: { name: 'reads', rate: readRate, paths: mixedReadPaths(e) },
    writes: () => ({ name: 'writes', rate: readRate / 9, create: { projectId: e.seeded.mrProjectId, firstBranch: e.seeded.nextPostBranch } }),
  };
}
