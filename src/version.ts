// Versions: the GitLab release whose API Labwright follows, and Labwright's own.
import { readFileSync } from 'node:fs';

export const GITLAB_VERSION = '18.6.0';
export const GITLAB_REVISION = 'labwright';

function readOwnVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      /* try the next location (src/ under tsx; dist/main.js, the build, is one level down too) */
    }
  }
  return '0.0.0';
}

export const LABWRIGHT_VERSION = readOwnVersion();
