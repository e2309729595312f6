// Is an address or a host loopback? One answer for the CLI (where a token may go in clear) and
// serve (whether listening without a token deserves a warning).
import { isIP } from 'node:net';

/** An IP address in 127.0.0.0/8 or ::1, in any spelling (::ffff:127.0.0.1, 0:0:0:0:0:0:0:1). */
export function isLoopbackAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return /^127\./.test(address);
  if (version !== 6) return false;
  // The URL parser writes every IPv6 address one way (compressed, lower case, mapped IPv4 in hex).
  const h = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  return h === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(h);
}

/**
 * A host (of a URL, or serve's bind address) that is loopback by itself, with no lookup:
 * `localhost`, 127.0.0.0/8 or ::1, brackets and case aside. A name like 127.evil.example is not.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || isLoopbackAddress(h);
}
