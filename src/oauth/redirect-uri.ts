// Redirect URIs: what may be registered, and the exact match the authorization and token
// endpoints apply (RFC 9700 §2.1). The only tolerance is the port of a loopback redirect (RFC 8252).

const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:']);

/** Reason a URI cannot be registered, or null. */
export function registrationError(uri: string): string | null {
  if (uri !== uri.trim() || /[\s]/.test(uri)) return 'must be an absolute URI.';
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'must be an absolute URI.';
  }
  if (FORBIDDEN_SCHEMES.has(u.protocol)) return 'is forbidden by the server.';
  if (uri.includes('#')) return 'cannot contain a fragment.';
  return null;
}

export function splitRedirectUris(s: string): string[] {
  return s.split(/[\r\n]+/).map((x) => x.trim()).filter(Boolean);
}

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/;

/** Loopback URIs compared without their port; the rest of the string must be identical. */
function loopbackMatch(registered: string, given: string): boolean {
  const r = LOOPBACK.exec(registered);
  const g = LOOPBACK.exec(given);
  if (!r || !g) return false;
  if (g[2] !== undefined && Number(g[2]) > 65535) return false;
  return r[1] === g[1] && (r[3] ?? '') === (g[3] ?? '');
}

/** The registered URI the given one matches exactly (byte for byte), or null. */
export function matchRedirectUri(registered: string, given: string): string | null {
  for (const r of splitRedirectUris(registered)) {
    if (r === given) return r;
    if (loopbackMatch(r, given)) return r;
  }
  return null;
}

/** Adds query parameters to a redirect URI that may already carry a query. */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const qs = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v as string)}`)
    .join('&');
  if (!qs) return uri;
  return uri + (uri.includes('?') ? '&' : '?') + qs;
}
