// Where a webhook may send (GitLab's Gitlab::HTTP_V2::UrlBlocker): http and https only, and unless
// the instance allows local requests (LABWRIGHT_WEBHOOK_ALLOW_LOCAL, GitLab's
// allow_local_requests_from_web_hooks_and_services), never to this machine, the local network or
// link-local addresses. The check runs when a hook is saved and again for every connection (the
// address the name resolves to then is the one checked and dialled), so a name that later resolves
// to a private address (DNS rebinding) gets nowhere.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

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

const other = new BlockList();
other.addSubnet('224.0.0.0', 4, 'ipv4');
other.addSubnet('240.0.0.0', 4, 'ipv4');
other.addSubnet('ff00::', 8, 'ipv6');

/** An IPv4 address carried in IPv6 (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d) as IPv4. */
function unwrap(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  if (isIP(address) === 4) return { address, family: 'ipv4' };
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return { address: dotted[1]!, family: 'ipv4' };
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: 'ipv4' };
  }
  return { address: lower, family: 'ipv6' };
}

/** Why a connection to `address` is refused when local requests are not allowed; null when it may go. */
export function blockedAddressReason(address: string): string | null {
  const a = unwrap(address);
  if (loopback.check(a.address, a.family)) return 'Requests to localhost are not allowed';
  if (linkLocal.check(a.address, a.family)) return 'Requests to the link local network are not allowed';
  if (localNetwork.check(a.address, a.family)) return 'Requests to the local network are not allowed';
  if (a.address === '255.255.255.255') return 'Requests to the limited broadcast address are not allowed';
  if (other.check(a.address, a.family)) return 'Requests to the local network are not allowed';
  return null;
}

/** The URL parsed, or the reason it cannot be a webhook's (GitLab's messages, without "is blocked: "). */
export function parseHookUrl(raw: string): URL {
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
