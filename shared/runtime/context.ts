/** What every component of a running process is built from; passed in, never global. */
import type { SvcConfig } from '../config/schema.js';
import type { ErrorTracker } from '../errors/tracker.js';
import type { Logger } from '../logging/logger.js';
import type { PointClock } from '../queue/point-clock.js';

export interface AppContext {
  readonly config: SvcConfig;
  /** Absolute path of the loaded config file. */
  readonly configFile: string;
  readonly logger: Logger;
  /** The process's error tracker (Svc.errorTracking). */
  readonly errors: ErrorTracker;
  /** The process-wide point counter of platform-formats.md §0.3, shared by everything that builds points. */
  readonly clock: PointClock;
}
