// Versions: the GitLab release whose API Labwright follows, and Labwright's own.
import { readFileSync } from 'node:fs';

export const GITLAB_VERSION = '18.6.0';
export const GITLAB_REVISION = 'labwright';

/** The sources' own version (src/ run through tsx: the tests, the bench's tools). */
function readOwnVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** Set by the build (scripts/build.mjs), which knows the version wherever the bundle is written. */
declare const LABWRIGHT_BUILT_VERSION: string | undefined;

export const LABWRIGHT_VERSION = typeof LABWRIGHT_BUILT_VERSION === 'string' ? LABWRIGHT_BUILT_VERSION : readOwnVersion();
