// Group name, path and visibility rules, with GitLab's model error messages.
import { VISIBILITY_LEVEL, type Visibility } from '../access.js';
import { pathError } from '../paths.js';

const NAME_RE = /^[\p{L}\p{N}\u{00A9}-\u{1f9ff}_][\p{L}\p{N}\p{Pd}+\u{00A9}-\u{1f9ff}_. ()]*$/u;
export const NAME_MESSAGE =
  "can contain only letters, digits, emoji, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'.";

export function nameErrors(name: string): string[] {
  const out: string[] = [];
  if (name.trim() === '') return ["can't be blank"];
  if (name.length > 255) out.push('is too long (maximum is 255 characters)');
  if (!NAME_RE.test(name)) out.push(NAME_MESSAGE);
  return out;
}

export function pathErrors(path: string, topLevel: boolean): string[] {
  const e = pathError(path, { topLevel });
  return e ? [e] : [];
}

export const VISIBILITIES = ['private', 'internal', 'public'] as const;

export function moreVisible(a: string, b: string): boolean {
  return VISIBILITY_LEVEL[a as Visibility] > VISIBILITY_LEVEL[b as Visibility];
}

/** Ruby's Hash#inspect of errors.messages, as in `Failed to save group {:path=>["has already been taken"]}`. */
export function rubyInspect(errors: Record<string, string[]>): string {
  const parts = Object.entries(errors).map(([k, v]) => `:${k}=>[${v.map((m) => JSON.stringify(m)).join(', ')}]`);
  return `{${parts.join(', ')}}`;
}
