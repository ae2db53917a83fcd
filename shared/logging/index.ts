export type { Logger, LoggerHandle, LoggerOptions } from './logger.js';
export { createLogger, LOG_LEVEL_VALUES, REDACTED } from './logger.js';
