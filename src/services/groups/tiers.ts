// Plan and offering gates for the parts spec document 3 marks PU, U, SM and HOSTED.
import type { Config } from '../../config.js';

export type Tier = 'PU' | 'U';

export function tierAvailable(config: Pick<Config, 'plan'>, tier: Tier | undefined): boolean {
  if (!tier) return true;
  if (tier === 'U') return config.plan === 'ultimate';
  return config.plan === 'premium' || config.plan === 'ultimate';
}

/** SM: self-managed offerings (self-managed and dedicated are both run for one customer). */
export function selfManaged(config: Pick<Config, 'offering'>): boolean {
  return config.offering !== 'hosted';
}

export function hosted(config: Pick<Config, 'offering'>): boolean {
  return config.offering === 'hosted';
}
