// The group settings of spec document 3 §4.4: defaults, tier gates, and validation of the values a
// client sends on POST/PUT /groups. Stored as one JSON object per group (only what was set).
import type { Config } from '../../config.js';
import { paramError } from '../../http/errors.js';
import type { Params } from '../../http/params.js';
import { hosted, selfManaged, tierAvailable, type Tier } from './tiers.js';
import { deepFreeze } from '../../db/epoch-cache.js';
import { legacyLevelHash } from '../repository/protected-refs.js';

type Kind = 'bool' | 'nbool' | 'int' | 'nint' | 'string' | 'nstring' | 'enum' | 'strings' | 'ints' | 'hash';

export interface SettingSpec {
  key: string;
  kind: Kind;
  default: unknown;
  values?: readonly string[];
  tier?: Tier;
  /** Only on the self-managed offerings. */
  sm?: boolean;
  /** Only on the hosted offering. */
  hosted?: boolean;
  /** Only administrators may set it. */
  admin?: boolean;
  topLevelOnly?: boolean;
  min?: number;
  max?: number;
  /** Longest list accepted, with GitLab's message. */
  maxItems?: { n: number; message: string };
}

/** Level 2 (fully protected), as the instance default: GitLab's BranchProtection#to_hash. */
export const DEFAULT_BRANCH_PROTECTION_DEFAULTS = legacyLevelHash(2)!;

export const SETTINGS: SettingSpec[] = [
  { key: 'share_with_group_lock', kind: 'bool', default: false },
  { key: 'require_two_factor_authentication', kind: 'bool', default: false },
  { key: 'two_factor_grace_period', kind: 'int', default: 48, min: 0 },
  { key: 'project_creation_level', kind: 'enum', values: ['noone', 'maintainer', 'developer'], default: 'developer' },
  { key: 'auto_devops_enabled', kind: 'nbool', default: null },
  { key: 'subgroup_creation_level', kind: 'enum', values: ['owner', 'maintainer'], default: 'maintainer' },
  { key: 'emails_enabled', kind: 'bool', default: true },
  { key: 'mentions_disabled', kind: 'nbool', default: null },
  { key: 'lfs_enabled', kind: 'bool', default: true },
  { key: 'math_rendering_limits_enabled', kind: 'bool', default: true },
  { key: 'lock_math_rendering_limits_enabled', kind: 'bool', default: false },
  { key: 'default_branch', kind: 'nstring', default: null },
  { key: 'default_branch_protection', kind: 'int', default: 2, min: 0, max: 4 },
  { key: 'default_branch_protection_defaults', kind: 'hash', default: DEFAULT_BRANCH_PROTECTION_DEFAULTS },
  { key: 'request_access_enabled', kind: 'bool', default: true },
  {
    key: 'shared_runners_setting',
    kind: 'enum',
    values: ['enabled', 'disabled_and_overridable', 'disabled_and_unoverridable', 'disabled_with_override'],
    default: 'enabled',
  },
  { key: 'max_artifacts_size', kind: 'nint', default: null, min: 0 },
  { key: 'enabled_git_access_protocol', kind: 'enum', values: ['ssh', 'http', 'all'], default: 'all' },
  { key: 'prevent_sharing_groups_outside_hierarchy', kind: 'bool', default: false, topLevelOnly: true },
  { key: 'step_up_auth_required_oauth_provider', kind: 'nstring', default: null },
  { key: 'require_sha_for_merge', kind: 'bool', default: false },
  { key: 'lock_require_sha_for_merge', kind: 'bool', default: false },
  { key: 'allow_personal_snippets', kind: 'bool', default: true },
  { key: 'assistant_availability', kind: 'enum', values: ['default_on', 'default_off', 'never_on'], default: 'default_on' },
  { key: 'experiment_features_enabled', kind: 'bool', default: false },
  { key: 'web_based_commit_signing_enabled', kind: 'bool', default: false, hosted: true, topLevelOnly: true },
  // Premium and Ultimate
  { key: 'shared_runners_minutes_limit', kind: 'nint', default: null, min: 0, tier: 'PU', sm: true, admin: true },
  { key: 'extra_shared_runners_minutes_limit', kind: 'nint', default: null, min: 0, tier: 'PU', sm: true, admin: true },
  { key: 'file_template_project_id', kind: 'nint', default: null, min: 1, tier: 'PU' },
  { key: 'membership_lock', kind: 'bool', default: false, tier: 'PU' },
  { key: 'prevent_forking_outside_group', kind: 'bool', default: false, tier: 'PU' },
  { key: 'wiki_access_level', kind: 'enum', values: ['disabled', 'private', 'enabled'], default: 'enabled', tier: 'PU' },
  { key: 'built_in_project_templates_enabled', kind: 'bool', default: true, tier: 'PU' },
  { key: 'lock_built_in_project_templates_enabled', kind: 'bool', default: false, tier: 'PU' },
  { key: 'ip_restriction_ranges', kind: 'nstring', default: null, tier: 'PU' },
  { key: 'allowed_email_domains_list', kind: 'nstring', default: null, tier: 'PU' },
  { key: 'assistant_features_enabled', kind: 'bool', default: true, tier: 'PU', sm: true },
  { key: 'lock_assistant_features_enabled', kind: 'bool', default: false, tier: 'PU', sm: true },
  { key: 'ai_audit_events_storage_enabled', kind: 'bool', default: false, tier: 'PU' },
  { key: 'lock_ai_audit_events_storage_enabled', kind: 'bool', default: false, tier: 'PU' },
  { key: 'only_allow_merge_if_pipeline_succeeds', kind: 'bool', default: false, tier: 'PU' },
  { key: 'only_allow_merge_if_all_discussions_are_resolved', kind: 'bool', default: false, tier: 'PU' },
  { key: 'allow_merge_on_skipped_pipeline', kind: 'bool', default: false, tier: 'PU' },
  // Ultimate, top-level only
  { key: 'unique_project_download_limit', kind: 'int', default: 0, min: 0, max: 10_000, tier: 'U', topLevelOnly: true },
  {
    key: 'unique_project_download_limit_interval_in_seconds',
    kind: 'int',
    default: 0,
    min: 0,
    max: 864_000,
    tier: 'U',
    topLevelOnly: true,
  },
  {
    key: 'unique_project_download_limit_allowlist',
    kind: 'strings',
    default: [],
    tier: 'U',
    topLevelOnly: true,
    maxItems: { n: 100, message: 'exceeds maximum length (100 usernames)' },
  },
  {
    key: 'unique_project_download_limit_alertlist',
    kind: 'ints',
    default: [],
    tier: 'U',
    topLevelOnly: true,
    maxItems: { n: 100, message: 'exceeds maximum length (100 user ids)' },
  },
  { key: 'auto_ban_user_on_excessive_projects_download', kind: 'bool', default: false, tier: 'U', topLevelOnly: true },
];

const BY_KEY = new Map(SETTINGS.map((s) => [s.key, s]));

export function settingSpec(key: string): SettingSpec | undefined {
  return BY_KEY.get(key);
}

/** Whether the instance's plan and offering make a setting exist at all. */
export function settingAvailable(config: Pick<Config, 'plan' | 'offering'>, spec: SettingSpec): boolean {
  if (!tierAvailable(config, spec.tier)) return false;
  if (spec.sm && !selfManaged(config)) return false;
  if (spec.hosted && !hosted(config)) return false;
  return true;
}

export type GroupSettings = Record<string, unknown>;

/** effectiveSettings by stored text (most groups store the same few), frozen: callers only read. */
const effective = new Map<string, GroupSettings>();
const MAX_EFFECTIVE = 1000;

/**
 * Stored overrides merged over the defaults (read-only). Building the 48 keys and parsing the row
 * for every group of a list page was 9 % of `GET /groups/:id/subgroups`; the result for a stored
 * text is kept (up to 1,000 texts, then it starts over).
 */
export function effectiveSettings(stored: string | null | undefined): Readonly<GroupSettings> {
  const key = stored ?? '';
  const known = effective.get(key);
  if (known) return known;
  const out: GroupSettings = {};
  for (const s of SETTINGS) out[s.key] = s.default;
  if (stored) {
    try {
      Object.assign(out, JSON.parse(stored) as GroupSettings);
    } catch {
      /* a damaged row reads as defaults */
    }
  }
  if (effective.size >= MAX_EFFECTIVE) effective.clear();
  effective.set(key, deepFreeze(out));
  return out;
}

export interface SettingsInput {
  values: GroupSettings;
  /** attribute → messages (validation failures as GitLab's model reports them). */
  errors: Record<string, string[]>;
}

function readOne(p: Params, s: SettingSpec): unknown {
  switch (s.kind) {
    case 'bool':
      return p.bool(s.key);
    case 'nbool':
      if (p.raw[s.key] === null || p.raw[s.key] === '') return null;
      return p.bool(s.key);
    case 'int':
      return p.int(s.key);
    case 'nint':
      if (p.raw[s.key] === null || p.raw[s.key] === '') return null;
      return p.int(s.key);
    case 'string':
      return p.string(s.key);
    case 'nstring': {
      const v = p.nullableString(s.key);
      return v === '' ? (s.key === 'default_branch' ? null : '') : v;
    }
    case 'enum':
      return p.enum(s.key, s.values!);
    case 'strings':
      return p.stringArray(s.key, { comma: true });
    case 'ints':
      return p.intArray(s.key, { comma: true });
    case 'hash':
      return p.hash(s.key);
  }
}

function rangeErrors(s: SettingSpec, v: unknown): string[] {
  const out: string[] = [];
  if (typeof v === 'number') {
    if (s.min !== undefined && v < s.min) out.push(`must be greater than or equal to ${s.min}`);
    if (s.max !== undefined && v > s.max) out.push(`must be less than or equal to ${s.max}`);
  }
  if (Array.isArray(v) && s.maxItems && v.length > s.maxItems.n) out.push(s.maxItems.message);
  return out;
}

/**
 * Reads every §4.4 setting present in the request. Settings the plan or offering lacks are
 * ignored, as GitLab's API ignores parameters its edition does not declare. Type errors are
 * Grape-style 400s (thrown); range, list-size and top-level rules are model errors (collected).
 */
export function readSettings(
  p: Params,
  config: Pick<Config, 'plan' | 'offering'>,
  opts: { topLevel: boolean; isAdmin: boolean },
): SettingsInput {
  const values: GroupSettings = {};
  const errors: Record<string, string[]> = {};
  for (const s of SETTINGS) {
    if (!p.has(s.key) || !settingAvailable(config, s)) continue;
    const v = readOne(p, s);
    if (v === undefined) continue;
    if (s.admin && !opts.isAdmin) continue; // GITLAB-COMPAT: non-admins' values are dropped, as EE does.
    const errs = rangeErrors(s, v);
    if (s.topLevelOnly && !opts.topLevel) errs.push('can only be changed for a top-level group');
    if (errs.length) errors[s.key] = errs;
    else values[s.key] = s.key === 'shared_runners_setting' && v === 'disabled_with_override' ? 'disabled_and_overridable' : v;
  }
  // emails_disabled is the deprecated inverse of emails_enabled.
  if (p.has('emails_disabled') && !p.has('emails_enabled')) {
    const d = p.bool('emails_disabled');
    if (d !== undefined) values.emails_enabled = !d;
  }
  if (values.default_branch_protection_defaults !== undefined) {
    values.default_branch_protection_defaults = normaliseProtectionDefaults(values.default_branch_protection_defaults as Record<string, unknown>);
  } else if (typeof values.default_branch_protection === 'number') {
    // The deprecated level sets the defaults it stands for, as GitLab does.
    const hash = legacyLevelHash(values.default_branch_protection);
    if (hash) values.default_branch_protection_defaults = hash;
  }
  if (values.allow_merge_on_skipped_pipeline === true) {
    const pipeline = values.only_allow_merge_if_pipeline_succeeds;
    if (pipeline === false) errors.allow_merge_on_skipped_pipeline = ['requires only_allow_merge_if_pipeline_succeeds'];
  }
  if (typeof values.ip_restriction_ranges === 'string' && values.ip_restriction_ranges !== '') {
    const bad = values.ip_restriction_ranges.split(',').map((x) => x.trim()).filter((x) => !validCidr(x));
    if (bad.length) errors.ip_restriction_ranges = [`${bad.join(', ')} is an invalid IP address range`];
  }
  if (typeof values.allowed_email_domains_list === 'string' && values.allowed_email_domains_list !== '') {
    const bad = values.allowed_email_domains_list.split(',').map((x) => x.trim()).filter((x) => !/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(x));
    if (bad.length) errors.allowed_email_domains_list = ['The domain you entered is misformatted.'];
  }
  return { values, errors };
}

const ACCESS_FOR_PROTECTION = [0, 30, 40, 50, 60];

function normaliseProtectionDefaults(h: Record<string, unknown>) {
  const out = { ...DEFAULT_BRANCH_PROTECTION_DEFAULTS } as Record<string, unknown>;
  for (const key of ['allowed_to_push', 'allowed_to_merge']) {
    if (h[key] === undefined) continue;
    const list = Array.isArray(h[key]) ? (h[key] as unknown[]) : [h[key]];
    out[key] = list.map((item) => {
      const lvl = Number((item as Record<string, unknown>)?.access_level);
      if (!ACCESS_FOR_PROTECTION.includes(lvl)) throw paramError(`default_branch_protection_defaults[${key}][access_level] does not have a valid value`);
      return { access_level: lvl };
    });
  }
  if (h.allow_force_push !== undefined) {
    const v = String(h.allow_force_push).toLowerCase();
    if (!['true', 'false', '1', '0'].includes(v)) throw paramError('default_branch_protection_defaults[allow_force_push] is invalid');
    out.allow_force_push = v === 'true' || v === '1';
  }
  if (h.developer_can_initial_push !== undefined) out.developer_can_initial_push = ['true', '1'].includes(String(h.developer_can_initial_push));
  return out;
}

function validCidr(s: string): boolean {
  const [addr, bits, extra] = s.split('/');
  if (extra !== undefined) return false;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(addr);
  if (v4) {
    if (v4.slice(1).some((o) => Number(o) > 255)) return false;
    return bits === undefined || (/^\d{1,2}$/.test(bits) && Number(bits) <= 32);
  }
  if (/^[0-9a-f:]+$/i.test(addr) && addr.includes(':')) return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= 128);
  return false;
}
