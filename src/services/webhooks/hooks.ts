// Project webhooks: the rows, their secrets, which events they take and whether they may run
// (GitLab's ProjectHook, WebHooks::Hook and WebHooks::AutoDisabling).
import type { Selectable } from 'kysely';
import type { AppContext } from '../../context.js';
import type { WebHooksTable } from '../../db/tables/web-hooks.js';
import { ProjectCache } from '../project-cache.js';
import { prepared } from '../../db/prepared.js';
import { tokenDigest } from '../secrets.js';
import { decryptValue } from './crypto.js';

export type HookRow = Selectable<WebHooksTable>;

/** The event flags of a project hook, in the order GitLab's entity shows them (push, tag push and merge requests first). */
export const HOOK_FLAGS = [
  'push_events',
  'tag_push_events',
  'merge_requests_events',
  'issues_events',
  'confidential_issues_events',
  'note_events',
  'confidential_note_events',
  'pipeline_events',
  'wiki_page_events',
  'deployment_events',
  'feature_flag_events',
  'job_events',
  'releases_events',
  'milestone_events',
  'emoji_events',
  'resource_access_token_events',
  'resource_deploy_token_events',
  'vulnerability_events',
] as const;

export type HookFlag = (typeof HOOK_FLAGS)[number];

/** GitLab's hook scopes (the trigger a log names) and the flag each needs. */
export const SCOPE_FLAGS = {
  push_hooks: 'push_events',
  tag_push_hooks: 'tag_push_events',
  merge_request_hooks: 'merge_requests_events',
  issue_hooks: 'issues_events',
  confidential_issue_hooks: 'confidential_issues_events',
  note_hooks: 'note_events',
  confidential_note_hooks: 'confidential_note_events',
  pipeline_hooks: 'pipeline_events',
  wiki_page_hooks: 'wiki_page_events',
  deployment_hooks: 'deployment_events',
  feature_flag_hooks: 'feature_flag_events',
  job_hooks: 'job_events',
  release_hooks: 'releases_events',
  milestone_hooks: 'milestone_events',
  emoji_hooks: 'emoji_events',
  resource_access_token_hooks: 'resource_access_token_events',
  resource_deploy_token_hooks: 'resource_deploy_token_events',
  vulnerability_hooks: 'vulnerability_events',
} as const satisfies Record<string, HookFlag>;

export type HookScope = keyof typeof SCOPE_FLAGS;

export function scopeOfFlag(flag: HookFlag): HookScope {
  return (Object.keys(SCOPE_FLAGS) as HookScope[]).find((s) => SCOPE_FLAGS[s] === flag)!;
}

/** `X-Gitlab-Event`: the scope singular and titled (`merge_request_hooks` → `Merge Request Hook`). */
export function eventHeader(scope: HookScope): string {
  return scope
    .replace(/_hooks$/, '_hook')
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
}

/** A new hook's flags: push events on, confidential notes unset (null), everything else off. */
export function defaultFlags(): Record<HookFlag, boolean | null> {
  const out = {} as Record<HookFlag, boolean | null>;
  for (const f of HOOK_FLAGS) out[f] = f === 'push_events' ? true : f === 'confidential_note_events' ? null : false;
  return out;
}

export function flagsOf(row: Pick<HookRow, 'events'>): Record<HookFlag, boolean | null> {
  const out = defaultFlags();
  try {
    const stored = JSON.parse(row.events) as Record<string, unknown>;
    for (const f of HOOK_FLAGS) if (f in stored) out[f] = stored[f] === null ? null : stored[f] === true;
  } catch {
    /* defaults */
  }
  return out;
}

export interface HookSecrets {
  /** The URL as saved, `{name}` placeholders included. */
  url: string;
  token: string | null;
  urlVariables: Record<string, string>;
  customHeaders: Record<string, string>;
}

function decryptMap(secret: string, stored: string | null): Record<string, string> {
  if (!stored) return {};
  const v = JSON.parse(decryptValue(secret, stored)) as unknown;
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : {};
}

export function hookSecrets(app: AppContext, row: HookRow): HookSecrets {
  const secret = app.config.secret;
  return {
    url: decryptValue(secret, row.encrypted_url),
    token: row.encrypted_token ? decryptValue(secret, row.encrypted_token) : null,
    urlVariables: decryptMap(secret, row.encrypted_url_variables),
    customHeaders: decryptMap(secret, row.encrypted_custom_headers),
  };
}

/** GitLab's VARIABLE_REFERENCE_RE: `{name}` in a URL. */
export const VARIABLE_KEY = /^[A-Za-z]+[0-9]*(?:[._-][A-Za-z0-9]+)*$/;
const VARIABLE_REFERENCE = /\{([A-Za-z]+[0-9]*(?:[._-][A-Za-z0-9]+)*)\}/g;

/** The URL with its `{name}` placeholders filled in; the names it lacks when some are missing. */
export function interpolateUrl(url: string, variables: Record<string, string>): { url: string } | { missing: string[] } {
  const missing: string[] = [];
  const out = url.replace(VARIABLE_REFERENCE, (whole, name: string) => {
    if (Object.hasOwn(variables, name)) return variables[name]!;
    if (!missing.includes(name)) missing.push(name);
    return whole;
  });
  return missing.length ? { missing } : { url: out };
}

/**
 * GitLab's UrlSanitizer.sanitize_masked_url: credentials in the URL shown as `*****:*****`. The
 * authority runs to the first `/`, `?`, `#` or `\` and its credentials to its last `@`, as URL
 * parsers read it (hook URLs always start with `http://` or `https://`: see url-guard.ts).
 */
export function maskUrl(url: string): string {
  return url.replace(/^(https?:[/\\]+)[^/?#\\]*@/i, '$1*****:*****@');
}

/** What a log remembers of the URL it went to (keyed, so a dump does not let URL variables be guessed). */
export function urlHash(secret: string, url: string): string {
  return tokenDigest(secret, `web-hook-url:${url}`);
}

// Auto-disabling (GitLab 18's WebHooks::AutoDisabling): from the 4th failure in a row a hook rests,
// a minute doubling to a day; the 40th disables it until a test succeeds.
export const TEMPORARY_THRESHOLD = 3;
export const PERMANENT_THRESHOLD = 39;

export type AlertStatus = 'executable' | 'temporarily_disabled' | 'disabled';

export function alertStatus(app: AppContext, row: Pick<HookRow, 'recent_failures' | 'disabled_until'>, now = Date.now()): AlertStatus {
  if (!app.config.webhooks.autoDisable) return 'executable';
  if (row.recent_failures > PERMANENT_THRESHOLD) return 'disabled';
  if (row.recent_failures > TEMPORARY_THRESHOLD && row.disabled_until && Date.parse(row.disabled_until) >= now) return 'temporarily_disabled';
  return 'executable';
}

/** The rest after the n-th failure in a row (n > 3): one minute doubling, at most a day. */
export function backoffMs(previousFailures: number): number {
  const minute = 60_000;
  return Math.min(Math.max(minute * 2 ** (previousFailures - TEMPORARY_THRESHOLD), minute), 86_400_000);
}

/** A project's hooks, read on every push and merge request write (kept as ProjectCache says). */
const hooksOf = prepared((db, projectId: number) => db.selectFrom('web_hooks').selectAll().where('project_id', '=', projectId).orderBy('id'));

const hooksCache = new ProjectCache(function loadHooks(app: AppContext, projectId: number): Promise<HookRow[]> {
  return hooksOf(app.db, projectId);
});

export function projectHooks(app: AppContext, projectId: number): Promise<HookRow[]> {
  return hooksCache.get(app, projectId);
}

/** Called by every hook write of this process once it has committed. */
export function hooksChanged(): void {
  hooksCache.changed();
}

/** The hooks of a project that take events of `scope` (the flag set), whether or not they may run now. */
export async function hooksFor(app: AppContext, projectId: number, scope: HookScope): Promise<HookRow[]> {
  const flag = SCOPE_FLAGS[scope];
  const rows = await projectHooks(app, projectId);
  return rows.filter((r) => flagsOf(r)[flag] === true);
}
