// ai_settings (spec document 3 §2.4): the response object and the ai_settings_attributes request
// hash, whose four minimum_access_level_* keys are integers in requests and names in responses.
import { paramError } from '../../http/errors.js';
import { parseBoolean, type ParamHash } from '../../http/params.js';

const LEVEL_NAMES: Record<number, string> = { 10: 'guest', 15: 'planner', 20: 'reporter', 30: 'developer', 40: 'maintainer', 50: 'owner' };

const LEVEL_KEYS: Record<string, number[]> = {
  minimum_access_level_enable_on_projects: [30, 40, 50],
  minimum_access_level_execute: [10, 15, 20, 30, 40, 50],
  minimum_access_level_execute_async: [30, 40, 50],
  minimum_access_level_manage: [30, 40, 50],
};

const BOOL_KEYS = [
  'ai_catalog_restricted_to_group_hierarchy',
  'ai_usage_data_collection_enabled',
  'allow_all_unix_sockets',
  'allow_project_extension',
  'assistant_agent_platform_enabled',
  'assistant_workflow_mcp_enabled',
  'foundational_agents_default_enabled',
  'include_recommended_allowed',
  'web_search_enabled',
] as const;

const TOP_LEVEL_ONLY = ['ai_catalog_restricted_to_group_hierarchy', 'web_search_enabled'];
const PROTECTION_LEVELS = ['no_checks', 'log_only', 'interrupt'];

export const AI_DEFAULTS: Record<string, boolean | number | string> = {
  ai_catalog_restricted_to_group_hierarchy: false,
  ai_usage_data_collection_enabled: false,
  allow_all_unix_sockets: false,
  allow_project_extension: true,
  assistant_agent_platform_enabled: true,
  assistant_workflow_mcp_enabled: false,
  foundational_agents_default_enabled: true,
  include_recommended_allowed: true,
  minimum_access_level_enable_on_projects: 40,
  minimum_access_level_execute: 30,
  minimum_access_level_execute_async: 30,
  minimum_access_level_manage: 40,
  prompt_injection_protection_level: 'log_only',
  web_search_enabled: true,
};

/** Validates ai_settings_attributes; returns the stored form (levels as integers) or collects errors. */
export function readAiSettings(
  h: ParamHash,
  opts: { topLevel: boolean; hostedOffering: boolean; premium: boolean },
  errors: Record<string, string[]>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(h)) {
    const v = h[key];
    if ((BOOL_KEYS as readonly string[]).includes(key)) {
      const b = parseBoolean(v);
      if (b === undefined) throw paramError(`ai_settings_attributes[${key}] is invalid`);
      if (key === 'ai_usage_data_collection_enabled' && !opts.hostedOffering) continue;
      if (key === 'ai_catalog_restricted_to_group_hierarchy' && !opts.premium) continue;
      if (TOP_LEVEL_ONLY.includes(key) && !opts.topLevel) {
        errors[`ai_settings.${key}`] = ['can only be changed for a top-level group'];
        continue;
      }
      out[key] = b;
    } else if (key in LEVEL_KEYS) {
      const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
      if (!Number.isInteger(n)) throw paramError(`ai_settings_attributes[${key}] is invalid`);
      if (!LEVEL_KEYS[key].includes(n)) throw paramError(`ai_settings_attributes[${key}] does not have a valid value`);
      out[key] = n;
    } else if (key === 'prompt_injection_protection_level') {
      if (typeof v !== 'string' || !PROTECTION_LEVELS.includes(v)) {
        throw paramError(`ai_settings_attributes[${key}] does not have a valid value`);
      }
      out[key] = v;
    }
    // Unknown keys are dropped, as Grape drops undeclared ones.
  }
  return out;
}

/** The response object: levels as names; HOSTED/PU keys only where they exist. */
export function presentAiSettings(stored: Record<string, unknown> | undefined, opts: { hostedOffering: boolean; premium: boolean }) {
  const s = Object.assign({}, AI_DEFAULTS, { ...(stored ?? {}) });
  const out: Record<string, unknown> = {};
  if (opts.premium) out.ai_catalog_restricted_to_group_hierarchy = s.ai_catalog_restricted_to_group_hierarchy;
  if (opts.hostedOffering) out.ai_usage_data_collection_enabled = s.ai_usage_data_collection_enabled;
  out.allow_all_unix_sockets = s.allow_all_unix_sockets;
  out.allow_project_extension = s.allow_project_extension;
  out.assistant_agent_platform_enabled = s.assistant_agent_platform_enabled;
  out.assistant_workflow_mcp_enabled = s.assistant_workflow_mcp_enabled;
  out.foundational_agents_default_enabled = s.foundational_agents_default_enabled;
  out.include_recommended_allowed = s.include_recommended_allowed;
  for (const key of Object.keys(LEVEL_KEYS)) out[key] = LEVEL_NAMES[Number(s[key])] ?? null;
  out.prompt_injection_protection_level = s.prompt_injection_protection_level;
  out.web_search_enabled = s.web_search_enabled;
  return out;
}
