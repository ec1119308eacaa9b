// The project attributes POST /projects and PUT /projects/:id accept, read with GitLab's
// parameter rules, plus the model validations GitLab runs on them (name and path formats).
import type { Updateable } from 'kysely';
import type { ProjectsTable } from '../../db/tables/projects.js';
import { paramError, validationError } from '../../http/errors.js';
import type { Params } from '../../http/params.js';
import { pathError } from '../paths.js';

export const VISIBILITIES = ['private', 'internal', 'public'] as const;
export const FEATURE_LEVELS = ['disabled', 'private', 'enabled'] as const;
export const SQUASH_OPTIONS = ['never', 'always', 'default_on', 'default_off'] as const;
export const MERGE_METHODS = ['merge', 'rebase_merge', 'ff'] as const;

/** Boolean settings stored as 0/1 under the same name. */
const BOOLEAN_SETTINGS = [
  'only_allow_merge_if_pipeline_succeeds',
  'only_allow_merge_if_all_discussions_are_resolved',
  'allow_merge_on_skipped_pipeline',
  'remove_source_branch_after_merge',
  'resolve_outdated_diff_discussions',
  'printing_merge_request_link_enabled',
  'request_access_enabled',
  'lfs_enabled',
  'mr_default_target_self',
] as const;

/** Deprecated `<feature>_enabled` booleans and the `<feature>_access_level` they map to. */
const FEATURES: Array<[string, keyof ProjectsTable]> = [
  ['issues', 'issues_access_level'],
  ['merge_requests', 'merge_requests_access_level'],
  ['wiki', 'wiki_access_level'],
  ['jobs', 'builds_access_level'],
  ['snippets', 'snippets_access_level'],
];

const LEVEL_ONLY: Array<keyof ProjectsTable> = ['repository_access_level', 'forking_access_level', 'builds_access_level', 'pages_access_level'];

const TEXT_SETTINGS = ['merge_commit_template', 'squash_commit_template', 'suggestion_commit_message', 'ci_config_path'] as const;

const NAME_RE = /^[\p{L}\p{N}\p{Extended_Pictographic}_][\p{L}\p{N}\p{Extended_Pictographic}_.+\- ]*$/u;

export function nameError(name: string): string | null {
  if (name.trim() === '') return "can't be blank";
  if (name.length > 255) return 'is too long (maximum is 255 characters)';
  if (!NAME_RE.test(name)) {
    return "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'.";
  }
  return null;
}

export interface ProjectAttrs {
  name?: string;
  path?: string;
  description?: string | null;
  visibility?: (typeof VISIBILITIES)[number];
  defaultBranch?: string;
  /** Column values for settings (0/1 booleans, access levels, templates, topics). */
  settings: Updateable<ProjectsTable>;
}

/** Reads every settable attribute; wrong types and unknown enum values are 400s with GitLab's words. */
export function readProjectAttrs(p: Params): ProjectAttrs {
  const settings: Updateable<ProjectsTable> = {};
  const s = settings as Record<string, unknown>;
  for (const key of BOOLEAN_SETTINGS) {
    const v = p.bool(key);
    if (v !== undefined) s[key] = v ? 1 : 0;
  }
  for (const [feature, column] of FEATURES) {
    const enabled = p.bool(`${feature}_enabled`);
    if (enabled !== undefined) s[column] = enabled ? 'enabled' : 'disabled';
    const level = p.enum(column, FEATURE_LEVELS);
    if (level !== undefined) s[column] = level;
  }
  for (const column of LEVEL_ONLY) {
    const level = p.enum(column, FEATURE_LEVELS);
    if (level !== undefined) s[column] = level;
  }
  const squash = p.enum('squash_option', SQUASH_OPTIONS);
  if (squash !== undefined) settings.squash_option = squash;
  const method = p.enum('merge_method', MERGE_METHODS);
  if (method !== undefined) settings.merge_method = method;
  for (const key of TEXT_SETTINGS) {
    const v = p.nullableString(key, { max: 500 });
    if (v !== undefined) s[key] = v === '' ? null : v;
  }
  const topics = p.has('topics') ? p.stringArray('topics', { comma: true }) : p.stringArray('tag_list', { comma: true });
  if (topics !== undefined) {
    if (topics.some((t) => t.length > 255)) throw validationError({ topics: ['is too long (maximum is 255 characters)'] });
    settings.topics = JSON.stringify([...new Set(topics)]);
  }
  const attrs: ProjectAttrs = { settings };
  attrs.name = p.string('name');
  attrs.path = p.string('path');
  if (p.has('description')) attrs.description = p.nullableString('description', { max: 2000 }) ?? null;
  attrs.visibility = p.enum('visibility', VISIBILITIES);
  const branch = p.string('default_branch');
  if (branch !== undefined && branch !== '') attrs.defaultBranch = branch;
  return attrs;
}

/** GitLab's model validations on name and path; all errors at once, keyed by attribute. */
export function validateNameAndPath(name: string | undefined, path: string | undefined): void {
  const errors: Record<string, string[]> = {};
  if (name !== undefined) {
    const e = nameError(name);
    if (e) errors.name = [e];
  }
  if (path !== undefined) {
    const e = pathError(path, { topLevel: false });
    if (e) errors.path = [e];
  }
  if (Object.keys(errors).length > 0) throw validationError(errors);
}

/** `namespace_id` (or `namespace`) as a number or a full path. */
export function readNamespaceRef(p: Params, name = 'namespace_id'): string | undefined {
  const v = p.raw[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string' || v === '') throw paramError(`${name} is invalid`);
  return v;
}
