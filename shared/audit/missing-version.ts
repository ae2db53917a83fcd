/**
 * Events without a client version are accepted (backward compatibility) but each is logged at debug,
 * and a warning recommending an upgrade goes out at most once per source IP per minute, carrying
 * `missingVersionCount`: how many such events that IP sent since its previous warning.
 */

import type { Log } from '../logging/log.js';
import { LogThrottle } from '../logging/throttle.js';

export class MissingVersionWarner {
  private readonly throttle: LogThrottle;

  constructor(
    private readonly log: Log,
    now: () => number = Date.now,
  ) {
    this.throttle = new LogThrottle(60_000, now);
  }

  record(clientIp: string, eventId: string): void {
    this.log.debug({ clientIp, eventId }, 'audit event without client version accepted');
    const { log, suppressed } = this.throttle.take(clientIp);
    if (!log) return;
    this.log.warn(
      // This event and those left out since the IP's previous warning.
      { clientIp, missingVersionCount: suppressed + 1 },
      'audit client sends no version (X-Audit-Client-Version header or source.version); events are accepted, but upgrade the audit client',
    );
  }
}
