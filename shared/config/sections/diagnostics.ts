/**
 * How the service records its own problems: its log (`logLevel`, `fileLogging`, `logDirectory`, keys
 * of the root itself), crash dumps (`crashFile`) and error counts (`errorTracking`).
 */
import { Bool, Feature, Flag, LOG_LEVELS, LogLevel, Str } from '../builders.js';

export const logLevel = LogLevel('info', `Log level: ${LOG_LEVELS.join(', ')} (decreasing detail)`);
export const fileLogging = Bool(false, 'Also log to daily-rotated files in logDirectory');
export const logDirectory = Str('log', 'Directory for log files; relative paths resolve from the working directory', {
  minLength: 1,
});

export const crashFile = Feature(
  'Crash dumps written on an uncaught exception',
  true,
  'Master switch for crash dumps',
  {
    crashFileDirectory: Str(
      './crash_dumps',
      "Output directory; relative paths resolve from the working directory, '' = the working directory",
    ),
    crashFileCreateJson: Bool(true, 'Create a machine-readable JSON dump'),
    crashFileCreateText: Bool(true, 'Create a plain-text dump'),
  },
);

export const errorTracking = Feature(
  'Counting of errors in platform communication and destination writes',
  false,
  'Master switch; false disables in-memory counting, daily summary and tsdb writes',
  {
    logSummary: Flag(false, 'Log a daily error summary at midnight UTC'),
    tsdb: Feature('Error events in the tsdb', false, 'Write individual error events to the tsdb', {
      measurementName: Str('svc_errors', 'Measurement name', { minLength: 1 }),
    }),
  },
);
