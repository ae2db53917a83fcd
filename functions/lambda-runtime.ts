/**
 * What every Lambda entry builds once per container: the bundled config, the logger (JSON lines on
 * stdout, secrets scrubbed; the core logger, without pino-pretty and log files) and the error tracker.
 */
import { loadConfigFile } from '../shared/config/load.js';
import type { SvcConfig } from '../shared/config/schema.js';
import { secretValues } from '../shared/config/secrets.js';
import { ErrorTracker } from '../shared/errors/tracker.js';
import { createJsonLogger, type Logger } from '../shared/logging/pino-core.js';
import { BUNDLED_CONFIG_FILE, LAMBDA_ENV } from './lambda-env.js';

export interface LambdaRuntime {
  config: SvcConfig;
  logger: Logger;
  errors: ErrorTracker;
}

/** A promise: building the runtime may involve fetching (the entries await it at module scope). */
export function lambdaRuntime(env: NodeJS.ProcessEnv = process.env): Promise<LambdaRuntime> {
  const { config } = loadConfigFile(env[LAMBDA_ENV.config] ?? BUNDLED_CONFIG_FILE, 'SVC_CONFIG', env);
  const logger = createJsonLogger({ level: config.logLevel, secrets: secretValues(config) });
  return Promise.resolve({ config, logger, errors: new ErrorTracker({ enabled: config.errorTracking.enable, log: logger }) });
}
