// Where a webhook may send (GitLab's Gitlab::HTTP_V2::UrlBlocker): http and https only, and unless
// the instance allows local requests (LABWRIGHT_WEBHOOK_ALLOW_LOCAL, GitLab's
// allow_local_requests_from_web_hooks_and_services), never to this machine, the local network or
// link-local addresses. The check runs when a hook is saved and again for every connection (the
// address the name resolves to then is the one checked and dialled), so a name that later resolves
// to a private address (DNS rebinding) gets nowhere.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

export class BlockedUrlError extends Error {}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addSubnet('0.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');
loopback.addAddress('::', 'ipv6');

const linkLocal = new BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');

const localNetwork = new BlockList();
for (const [net, bits] of [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['192.0.0.0', 24], ['198.18.0.0', 15]] as const) {
  localNetwork.addSubnet(net, bits, 'ipv4');
}
localNetwork.addSubnet('fc00::', 7, 'ipv6');
localNetwork.addSubnet('fec0::', 10, 'ipv6');
// Local-use NAT64 and the discard prefix.
localNetwork.addSubnet('64:ff9b:1::', 48, 'ipv6');
localNetwork.addSubnet('100::', 64, 'ipv6');

const other = new BlockList();
other.addSubnet('224.0.0.0', 4, 'ipv4');
other.addSubnet('240.0.0.0', 4, 'ipv4');
other.addSubnet('ff00::', 8, 'ipv6');

/** An IPv6 address as its eight 16-bit groups (an embedded dotted IPv4 read as two), or null. */
function groupsOf(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const b = dotted.slice(1).map(Number);
    text = text.slice(0, dotted.index) + `${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const parts = [...head, ...Array(Math.max(fill, 0)).fill('0'), ...tail];
  if (parts.length !== 8 || !parts.every((p) => /^[0-9a-f]{1,4}$/.test(p))) return null;
  return parts.map((p) => parseInt(p, 16));
}

function v4Of(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * An IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, translated
 * ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:aabb:ccdd::) as IPv4: it is checked as the
 * IPv4 address it may reach.
 */
function unwrap(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  if (isIP(address) === 4) return { address, family: 'ipv4' };
  const g = groupsOf(address);
  if (!g) return { address: address.toLowerCase(), family: 'ipv6' };
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(5) && g[5] === 0xffff) return { address: v4Of(g[6]!, g[7]!), family: 'ipv4' };
  if (zeros(6) && (g[6] !== 0 || g[7]! > 1)) return { address: v4Of(g[6]!, g[7]!), family: 'ipv4' };
  if (zeros(4) && g[4] === 0xffff && g[5] === 0) return { address: v4Of(g[6]!, g[7]!), family: 'ipv4' };
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return { address: v4Of(g[6]!, g[7]!), family: 'ipv4' };
  if (g[0] === 0x2002) return { address: v4Of(g[1]!, g[2]!), family: 'ipv4' };
  return { address: address.toLowerCase(), family: 'ipv6' };
}

/** This machine's own addresses (GitLab counts them as localhost), read again every minute. */
let own = { at: 0, addresses: new Set<string>() };

function ownAddress(address: string): boolean {
  const now = Date.now();
  if (now - own.at > 60_000) {
    const addresses = new Set<string>();
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) addresses.add(unwrap(a.address.split('%')[0]!).address);
    own = { at: now, addresses };
  }
  return own.addresses.has(address);
}

/** Why a connection to `address` is refused when local requests are not allowed; null when it may go. */
export function blockedAddressReason(address: string): string | null {
  const a = unwrap(address.split('%')[0]!);
  if (loopback.check(a.address, a.family) || ownAddress(a.address)) return 'Requests to localhost are not allowed';
  if (linkLocal.check(a.address, a.family)) return 'Requests to the link local network are not allowed';
  if (localNetwork.check(a.address, a.family)) return 'Requests to the local network are not allowed';
  if (a.address === '255.255.255.255') return 'Requests to the limited broadcast address are not allowed';
  if (other.check(a.address, a.family)) return 'Requests to the local network are not allowed';
  return null;
}

/** The URL parsed, or the reason it cannot be a webhook's (GitLab's messages, without "is blocked: "). */
export function parseHookUrl(raw: string): URL {
  // Only the plain form: `http:/x`, `http:\\x` or `http:x` mean the same to URL parsers but would
  // hide their credentials from the masking of logged URLs.
  if (!/^https?:\/\//i.test(raw)) {
    throw new BlockedUrlError(/^[a-z][a-z0-9+.-]*:/i.test(raw) && !/^https?:/i.test(raw) ? 'Only allowed schemes are http, https' : 'URI is invalid');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedUrlError('URI is invalid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BlockedUrlError('Only allowed schemes are http, https');
  if (!url.hostname) throw new BlockedUrlError('URI is invalid');
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) throw new BlockedUrlError('URI is invalid');
  return url;
}

function lookupAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolveAll, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolveAll(addresses)));
  });
}

function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks a URL a hook is saved with: its form always, its addresses when local requests are not
 * allowed (every address the name has now must be allowed). Throws BlockedUrlError with the reason.
 */
export async function checkHookUrl(raw: string, allowLocal: boolean): Promise<URL> {
  const url = parseHookUrl(raw);
  if (allowLocal) return url;
  const host = bareHost(url);
  const name = host.toLowerCase().replace(/\.+$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) throw new BlockedUrlError('Requests to localhost are not allowed');
  let addresses: LookupAddress[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookupAll(host);
  } catch {
    // As GitLab (no DNS-rebinding check when saving): a name that does not resolve yet is
    // accepted; the delivery checks the address it resolves to then.
    return url;
  }
  for (const a of addresses) {
    const reason = blockedAddressReason(a.address);
    if (reason) throw new BlockedUrlError(reason);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses blocked addresses at connection time: the address
 * checked is the address dialled.
 */
export function guardedLookup(allowLocal: boolean) {
  return function lookup(host: string, options: { all?: boolean }, callback: LookupCallback): void {
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => {
      if (err) {
        // GitLab's words for a name that does not resolve.
        const e = Object.assign(new BlockedUrlError('URL is blocked: Host cannot be resolved or invalid'), { code: err.code ?? 'ENOTFOUND' });
        return callback(e, options.all ? [] : '', 0);
      }
      const usable = allowLocal ? addresses : addresses.filter((a) => blockedAddressReason(a.address) === null);
      if (usable.length === 0) {
        const reason = addresses.length ? blockedAddressReason(addresses[0]!.address) : 'Host cannot be resolved or invalid';
        const e = Object.assign(new BlockedUrlError(`URL is blocked: ${reason ?? 'Host cannot be resolved or invalid'}`), { code: 'EBLOCKED' });
        return callback(e, options.all ? [] : '', 0);
      }
      if (options.all) return callback(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
