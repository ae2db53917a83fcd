/**
 * What the simulate commands share: option parsers that name what was wrong (commander turns an
 * InvalidArgumentError into a usage error, exit 2), and the one-line summary of a UDP run.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { InvalidArgumentError } from 'commander';
import type { SimulateKind } from './messages.js';
import type { UdpSendStats } from './udp-sender.js';

/** A parsed `--target`: the host as given (without brackets), the port, and the IP family of a literal. */
export interface Target {
  host: string;
  port: number;
  /** 4 or 6 for an IP literal, `null` for a host name. */
  family: 4 | 6 | null;
}

const HOST_NAME =
  /^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * Parses `host:port`: an IPv4 address, a host name, or an IPv6 address in brackets (`[::1]:9996`).
 * The port is 1–65535. Returns an error text for anything else.
 */
export function parseTarget(text: string): Target | { error: string } {
  const value = text.trim();
  let host: string;
  let portText: string;
  const bracketed = /^\[([^\]]*)\]:(.*)$/.exec(value);
  if (bracketed) {
    host = bracketed[1] ?? '';
    portText = bracketed[2] ?? '';
    if (!isIPv6(host)) return { error: `${JSON.stringify(host)} is not an IPv6 address` };
  } else {
    const colon = value.lastIndexOf(':');
    if (colon === -1) return { error: 'expected host:port (e.g. 127.0.0.1:9996)' };
    host = value.slice(0, colon);
    portText = value.slice(colon + 1);
    if (host.includes(':')) return { error: 'an IPv6 address must be in brackets, e.g. [::1]:9996' };
    if (host === '') return { error: 'the host is missing (expected host:port)' };
    // All digits and dots: must be a real IPv4 address, not a host name.
    if (/^[\d.]+$/.test(host) ? !isIPv4(host) : !HOST_NAME.test(host))
      return { error: `${JSON.stringify(host)} is neither an IPv4 address nor a host name` };
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    return { error: `the port must be an integer 1–65535 (got ${JSON.stringify(portText)})` };
  }
  const family = isIPv4(host) ? 4 : isIPv6(host) ? 6 : null;
  return { host, port: Number(portText), family };
}

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/** A commander argument parser for a decimal number within [min, max] (`min` excluded when `minExclusive`). */
export function numberArg(what: string, min: number, max: number, minExclusive: boolean, integer = false) {
  return (value: string): number => {
    const n = Number(value.trim());
    const ok =
      DECIMAL.test(value.trim()) &&
      Number.isFinite(n) &&
      (minExclusive ? n > min : n >= min) &&
      n <= max &&
      (!integer || Number.isInteger(n));
    if (!ok) throw new InvalidArgumentError(`${what} (got ${JSON.stringify(value)})`);
    return n;
  };
}

/** A commander argument parser for `host:port` (parseTarget). */
export function targetArg(value: string): Target {
  const target = parseTarget(value);
  if ('error' in target) throw new InvalidArgumentError(target.error);
  return target;
}

const fmtRate = (r: number): string => (Number.isInteger(r) ? String(r) : r.toFixed(2));

/** The one-line summary printed at the end of a run. */
export function summaryLine(
  stats: UdpSendStats,
  target: Target,
  kinds: readonly SimulateKind[],
  rate: number,
  seed: number,
): string {
  const where = target.family === 6 ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  const perKind = kinds.map((kind) => `${kind} ${stats.perKind[kind]}`).join(', ');
  const errors =
    stats.sendErrors > 0
      ? `, ${stats.sendErrors} send errors (first: ${stats.firstError ?? 'unknown'})`
      : ', 0 send errors';
  return (
    `sent ${stats.sent} datagrams to ${where} in ${(stats.elapsedMs / 1000).toFixed(3)} s ` +
    `(${stats.achievedRate.toFixed(1)}/s, target ${fmtRate(rate)}/s): ${perKind}, malformed ${stats.malformed}` +
    `${errors}; seed ${seed}${stats.aborted ? '; stopped early' : ''}`
  );
}
