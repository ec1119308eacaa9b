// Protected ref name patterns (GitLab's RefMatcher), shared by the server and the pre-receive hook.

/**
 * GitLab's RefMatcher: a name without `*` matches itself only; `*` matches any run of characters,
 * `/` included, and everything else is literal; the whole name must match. Matched without
 * backtracking (a regular expression of many `.*?` takes exponential time on a name that almost
 * matches): the first and last pieces anchor the ends, the pieces between are found in order,
 * each as early as it occurs, which is enough for patterns whose only wildcard is `*`.
 * The pre-receive hook (src/git/pre-receive-hook.ts) carries this function's own source, so it
 * must stay plain JavaScript once its types are stripped: no imports, no helpers outside it.
 */
export function refMatcher(pattern: string): (ref: string) => boolean {
  if (!pattern.includes('*')) return (ref) => ref === pattern;
  const parts = pattern.split('*');
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((p) => p !== '');
  return (ref) => {
    if (ref.length < first.length + last.length || !ref.startsWith(first) || !ref.endsWith(last)) return false;
    let at = first.length;
    const end = ref.length - last.length;
    for (const piece of middle) {
      const found = ref.indexOf(piece, at);
      if (found === -1 || found + piece.length > end) return false;
      at = found + piece.length;
    }
    return true;
  };
}
