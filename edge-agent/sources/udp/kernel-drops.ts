/**
 * Kernel drops of a UDP socket (platform-formats.md §3, Svc choice): datagrams the kernel discards
 * because the socket's receive buffer is full never reach Svc, so its own counters cannot see them.
 * On Linux `/proc/net/udp` (and `udp6`) has a `drops` column per socket; the socket is found by its
 * local address and port. Elsewhere there is no such counter (the caller says so once at start).
 */
import { readFile } from 'node:fs/promises';

export interface UdpSocketRow {
  localAddress: string;
  localPort: number;
  inode: number;
  /** Bytes the kernel charges to the socket's receive queue now (`rx_queue`): datagrams waiting to be read, at their in-kernel size. */
  rxQueueBytes: number;
  drops: number;
}

/** `0100007F` → `127.0.0.1` (the kernel writes IPv4 in host byte order, little-endian on x86/arm). */
function hexToIPv4(hex: string): string {
  const n = Number.parseInt(hex, 16);
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff].join('.');
}

/** Parses the text of `/proc/net/udp`; lines it does not understand are skipped. */
export function parseProcNetUdp(text: string): UdpSocketRow[] {
  const lines = text.split('\n');
  // Data rows: sl, local_address, rem_address, st, tx_queue:rx_queue, tr:tm->when, retrnsmt, uid,
  // timeout, inode, ref, pointer, drops (the header splits two of them in two words).
  if (!(lines[0] ?? '').includes('drops')) return [];
  const rows: UdpSocketRow[] = [];
  for (const line of lines.slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10) continue;
    const [address, port] = (cols[1] ?? '').split(':');
    if (address === undefined || port === undefined || address.length !== 8) continue;
    const drops = Number(cols[cols.length - 1]);
    const inode = Number(cols[9]);
    const rxQueue = Number.parseInt((cols[4] ?? '').split(':')[1] ?? '', 16);
    rows.push({
      localAddress: hexToIPv4(address),
      localPort: Number.parseInt(port, 16),
      inode,
      rxQueueBytes: Number.isFinite(rxQueue) ? rxQueue : 0,
      drops: Number.isFinite(drops) ? drops : 0,
    });
  }
  return rows;
}

/** The rows of `/proc/net/udp`'s text for the IPv4 socket(s) bound to `address:port`. */
export function socketRows(text: string, address: string, port: number): UdpSocketRow[] {
  return parseProcNetUdp(text).filter((r) => r.localPort === port && r.localAddress === address);
}

export interface KernelDropSource {
  /** The socket's kernel drop counter now, or null when it cannot be read. */
  read(): Promise<number | null>;
}

/** Reads the drop counter of the IPv4 socket bound to `address:port` from `/proc/net/udp`. */
export class ProcNetUdpDrops implements KernelDropSource {
  constructor(
    private readonly address: string,
    private readonly port: number,
    private readonly file = '/proc/net/udp',
  ) {}

  /** Whether this OS has the counter at all (Linux with procfs). */
  static async available(file = '/proc/net/udp'): Promise<boolean> {
    try {
      const text = await readFile(file, 'utf8');
      return (text.split('\n')[0] ?? '').includes('drops');
    } catch {
      return false;
    }
  }

  async read(): Promise<number | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return null;
    }
    const rows = socketRows(text, this.address, this.port);
    if (rows.length === 0) return null;
    return rows.reduce((sum, r) => sum + r.drops, 0);
  }
}
