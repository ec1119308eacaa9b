// `:id` resolution for projects and groups (spec rules 6 and 12): a number, or a URL-encoded full
// path; old paths of moved resources redirect on GET and refuse other methods.
import { ApiError, apiError } from './errors.js';
import { MAX_DB_INT } from './params.js';
import type { Ctx } from './route.js';

export type SourceType = 'Project' | 'Namespace';

/** A GET on an old path: 301 with the same route on the numeric id (plain-text body, as GitLab). */
export class MovedPermanently extends ApiError {
  constructor(public readonly location: string) {
    super(301, `This resource has been moved permanently to ${location}`, { Location: location });
  }
}

function movedLocation(c: Ctx, rawId: string, newId: number): string {
  const [path, query] = c.req.url.split('?', 2);
  const segments = path.split('/');
  const i = segments.findIndex((s) => {
    try {
      return decodeURIComponent(s) === rawId;
    } catch {
      return false;
    }
  });
  if (i >= 0) segments[i] = String(newId);
  return `${c.base}${segments.join('/')}${query ? `?${query}` : ''}`;
}

/**
 * Finds the id of a project or namespace from `:id`. Returns null when nothing matches (the
 * caller answers 404 with its own resource name). Numeric ids are returned as they are: the caller
 * loads the row and answers 404 when it does not exist.
 */
export async function resolveId(
  c: Ctx,
  type: SourceType,
  rawId: string,
  opts: { allowTopLevelPath?: boolean } = {},
): Promise<number | null> {
  if (/^-?\d+$/.test(rawId)) {
    const n = Number(rawId);
    return Number.isSafeInteger(n) && n > 0 && n <= MAX_DB_INT ? n : null;
  }
  if (!rawId.includes('/') && !opts.allowTopLevelPath) return null;
  const lower = rawId.toLowerCase();
  const route = await c.app.db
    .selectFrom('routes')
    .select(['source_type', 'source_id'])
    .where('path_lower', '=', lower)
    .executeTakeFirst();
  if (route) return route.source_type === type ? route.source_id : null;
  const redirect = await c.app.db
    .selectFrom('redirect_routes')
    .select(['source_type', 'source_id'])
    .where('path_lower', '=', lower)
    .executeTakeFirst();
  if (!redirect || redirect.source_type !== type) return null;
  if (type === 'Project') {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') throw new MovedPermanently(movedLocation(c, rawId, redirect.source_id));
    throw apiError(405, 'Non GET methods are not allowed for moved projects');
  }
  // Groups follow redirects silently, as GitLab's find_group does.
  return redirect.source_id;
}
