/**
 * The client IP the rate limit counts: the direct peer, unless that peer is a trusted proxy, in
 * which case X-Forwarded-For is read from the right, skipping trusted proxies, and the first
 * untrusted address is the client. An untrusted peer's X-Forwarded-For is ignored (it could be forged).
 */
import { isIP } from 'node:net';

/** The form addresses are compared in: trimmed, without brackets, an IPv4-mapped IPv6 address as its IPv4 address. */
export function normaliseIp(ip: string): string {
  const trimmed = ip.trim().replace(/^\[|\]$/g, '');
  // IPv4-mapped IPv6 (::ffff:127.0.0.1) is the IPv4 address.
  return trimmed.toLowerCase().startsWith('::ffff:') && isIP(trimmed.slice(7)) === 4 ? trimmed.slice(7) : trimmed;
}

export function clientIp(peer: string, forwardedFor: string | undefined, trustedProxies: readonly string[]): string {
  const direct = normaliseIp(peer);
  if (trustedProxies.length === 0 || !forwardedFor) return direct;
  const trusted = new Set(trustedProxies.map(normaliseIp));
  if (!trusted.has(direct)) return direct;
  const hops = forwardedFor
    .split(',')
    .map(normaliseIp)
    .filter((hop) => isIP(hop) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    if (!trusted.has(hop)) return hop;
  }
  return hops[0] ?? direct;
}
