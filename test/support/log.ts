/** Logs for tests: one that says nothing, and one that keeps every line. */
import type { Log } from '../../shared/logging/log.js';

const nothing = (): void => undefined;

/** Writes nothing. */
export const silentLog: Log = { debug: nothing, info: nothing, warn: nothing, error: nothing };

export interface LoggedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

/** Keeps every line, in order. */
export function recordingLog(): { log: Log; lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const at = (level: LoggedLine['level']) => (obj: object, msg: string) => void lines.push({ level, obj, msg });
  return { lines, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}
