// Benchmark scenarios: what each loads, against which same-run baseline, and the goal ratio.
import type { Options } from 'autocannon';

export interface ScenarioServer {
  url: string;
  token: string;
}

export interface Scenario {
  name: string;
  /** Request path, or a function of what prepare() returned. */
  path: string | ((prepared: any) => string);
  headers?: Record<string, string>;
  /** b1: bare Fastify with a small JSON; b2: the exact bytes; b3: the same objects serialised. */
  baseline: 'b0' | 'b1' | 'b2' | 'b3';
  goal: number;
  /** Seeds data through the API before measuring; returns what `path` needs. */
  prepare?(server: ScenarioServer): Promise<unknown>;
  autocannon?: Partial<Options>;
}

export const scenarios: Scenario[] = [
  { name: 'user', path: '/api/v4/user', baseline: 'b1', goal: 0.6 },
];
