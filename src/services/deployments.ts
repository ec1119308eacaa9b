// Environments as deployments name them (Labwright keeps no environments table).

/** An environment's slug: its name lower-cased, runs of other characters as one `-`, at most 24 characters. */
export function environmentSlug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 24) || 'env';
}

/** GitLab's Environment#guess_tier: the tier an environment's name suggests. */
export function environmentTier(name: string): string {
  if (/(dev|review|trunk)/i.test(name)) return 'development';
  if (/(test|tst|int|ac(ce|)pt|qa|qc|control|quality)/i.test(name)) return 'testing';
  if (/(st(a|)g|mod(e|)l|pre|demo|non)/i.test(name)) return 'staging';
  if (/(pr(o|)d|live)/i.test(name)) return 'production';
  return 'other';
}
