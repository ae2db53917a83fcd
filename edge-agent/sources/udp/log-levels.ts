/**
 * Log events received per source and level since start (docs/metrics.md): what an alert on a rise
 * of ERROR events from one source reads (`svc_log_events_total`, docs/prometheus/). Every pair of a
 * known source and level is there at 0 from the start, so that the first ERROR is an increase a
 * `rate()` sees.
 *
 * The alert rules' `logEvents` field (docs/alerts.md) also counts them by server and category: the
 * server is the configured server of the event's host (as the embedded store maps it), else the
 * host; each category `name=value` of the event counts once, an event without category under "".
 * Distinct (server, category) pairs are capped (LOG_DETAIL_PAIRS): past the cap, a new pair counts
 * under server and category "other", so a flood of made-up hosts cannot grow the memory.
 */
import { type Category, LOG_SOURCES, type LogSource } from '../../../shared/platform/events.js';
import { type KnownServer, ServerNames } from '../../../shared/store/rows.js';

/** The levels the platform's log appenders send; any other level is counted as `other`. */
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL', 'other'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** The most distinct (server, category) pairs counted by name; the rest count under "other". */
export const LOG_DETAIL_PAIRS = 5000;

/** The server and category of the counts past the cap. */
export const OTHER = 'other';

/** The `source` label: the platform's source without its `qseow-` prefix. */
export const logSourceLabel = (source: LogSource): string => source.replace(/^qseow-/, '');

const isKnownLevel = (level: string): level is LogLevel => (LOG_LEVELS as readonly string[]).includes(level);

/** Events of one source, level, server and category. */
export interface LogEventCount {
  source: string;
  level: string;
  server: string;
  category: string;
  events: number;
}

/** Counts per source and level, and by server and category; read by the metrics endpoint and the alert facts through Observed.logEvents. */
export class LogLevelCounts {
  private readonly bySource = new Map<LogSource, Map<LogLevel, number>>(
    LOG_SOURCES.map((source) => [source, new Map(LOG_LEVELS.map((level) => [level, 0]))]),
  );
  private readonly detail = new Map<string, LogEventCount>();
  private readonly pairs = new Set<string>();
  private readonly servers: ServerNames;

  /** `servers`: the configured servers (`serversToMonitor.servers[]`) whose names replace their hosts. */
  constructor(
    servers: readonly KnownServer[] = [],
    private readonly maxPairs = LOG_DETAIL_PAIRS,
  ) {
    this.servers = new ServerNames(servers);
  }

  /** One parsed log event (counted whether or not its source is switched on), with the categories it was given. */
  count(source: LogSource, level: string, host = '', categories: readonly Category[] = []): void {
    const upper = level.toUpperCase();
    const known = isKnownLevel(upper) ? upper : 'other';
    const byLevel = this.bySource.get(source);
    byLevel?.set(known, (byLevel.get(known) ?? 0) + 1);
    const server = this.servers.ofHost(host, 0).name;
    if (categories.length === 0) this.countDetail(logSourceLabel(source), known, server, '');
    for (const category of categories)
      this.countDetail(logSourceLabel(source), known, server, `${category.name}=${category.value}`);
  }

  /** Every source and level, with its count. */
  *counts(): Iterable<{ source: string; level: string; events: number }> {
    for (const [source, byLevel] of this.bySource)
      for (const [level, events] of byLevel) yield { source: logSourceLabel(source), level, events };
  }

  /** The counts by source, level, server and category (only those that counted an event). */
  details(): Iterable<LogEventCount> {
    return this.detail.values();
  }

  private countDetail(source: string, level: string, server: string, category: string): void {
    let pair = `${server}\u0000${category}`;
    if (!this.pairs.has(pair)) {
      if (this.pairs.size < this.maxPairs) this.pairs.add(pair);
      else {
        server = OTHER;
        category = OTHER;
        pair = `${OTHER}\u0000${OTHER}`;
      }
    }
    const key = `${source}\u0000${level}\u0000${pair}`;
    const found = this.detail.get(key);
    if (found) found.events++;
    else this.detail.set(key, { source, level, server, category, events: 1 });
  }
}
