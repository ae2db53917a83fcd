/**
 * Log events received per source and level since start (docs/metrics.md): what an alert on a rise
 * of ERROR events from one source reads (`svc_log_events_total`, docs/prometheus/). Every pair of a
 * known source and level is there at 0 from the start, so that the first ERROR is an increase a
 * `rate()` sees.
 */
import { LOG_SOURCES, type LogSource } from '../../../shared/platform/events.js';

/** The levels the platform's log appenders send; any other level is counted as `other`. */
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL', 'other'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** The `source` label: the platform's source without its `qseow-` prefix. */
export const logSourceLabel = (source: LogSource): string => source.replace(/^qseow-/, '');

const isKnownLevel = (level: string): level is LogLevel => (LOG_LEVELS as readonly string[]).includes(level);

/** Counts per source and level; read by the metrics endpoint through Observed.logEvents. */
export class LogLevelCounts {
  private readonly bySource = new Map<LogSource, Map<LogLevel, number>>(
    LOG_SOURCES.map((source) => [source, new Map(LOG_LEVELS.map((level) => [level, 0]))]),
  );

  /** One parsed log event (counted whether or not its source is switched on). */
  count(source: LogSource, level: string): void {
    const upper = level.toUpperCase();
    const known = isKnownLevel(upper) ? upper : 'other';
    const byLevel = this.bySource.get(source);
    byLevel?.set(known, (byLevel.get(known) ?? 0) + 1);
  }

  /** Every source and level, with its count. */
  *counts(): Iterable<{ source: string; level: string; events: number }> {
    for (const [source, byLevel] of this.bySource)
      for (const [level, events] of byLevel) yield { source: logSourceLabel(source), level, events };
  }
}
