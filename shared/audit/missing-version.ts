/**
 * Events without a client version are accepted (backward compatibility) but each is logged at debug,
 * and a warning recommending an upgrade goes out at most once per source IP per minute, carrying
 * `missingVersionCount`: how many such events that IP sent since its previous warning.
 */
export interface MissingVersionLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const MINUTE_MS = 60_000;
/** Past this many tracked IPs, entries whose minute is over are swept. */
const SWEEP_AT = 10_000;

export class MissingVersionWarner {
  private readonly byIp = new Map<string, { lastWarnAt: number; count: number }>();

  constructor(
    private readonly log: MissingVersionLog,
    private readonly now: () => number = Date.now,
  ) {}

  record(clientIp: string, eventId: string): void {
    const now = this.now();
    this.log.debug({ clientIp, eventId }, 'audit event without client version accepted');
    let entry = this.byIp.get(clientIp);
    if (!entry) {
      if (this.byIp.size >= SWEEP_AT) this.sweep(now);
      entry = { lastWarnAt: Number.NEGATIVE_INFINITY, count: 0 };
      this.byIp.set(clientIp, entry);
    }
    entry.count += 1;
    if (now - entry.lastWarnAt >= MINUTE_MS) {
      this.log.warn(
        { clientIp, missingVersionCount: entry.count },
        'audit client sends no version (X-Audit-Client-Version header or source.version); events are accepted, but upgrade the audit client',
      );
      entry.lastWarnAt = now;
      entry.count = 0;
    }
  }

  private sweep(now: number): void {
    for (const [ip, entry] of this.byIp) if (now - entry.lastWarnAt >= MINUTE_MS) this.byIp.delete(ip);
  }
}
