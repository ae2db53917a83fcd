/**
 * What every Lambda entry builds once per container: the bundled config, the logger (JSON, secrets
 * scrubbed) and the error tracker.
 */
import { loadConfigFile } from '../shared/config/load.js';
import type { SvcConfig } from '../shared/config/schema.js';
import { secretValues } from '../shared/config/secrets.js';
import { ErrorTracker } from '../shared/errors/tracker.js';
import { createLogger, type Logger } from '../shared/logging/logger.js';
import { BUNDLED_CONFIG_FILE, LAMBDA_ENV } from './lambda-env.js';

export interface LambdaRuntime {
  config: SvcConfig;
  logger: Logger;
  errors: ErrorTracker;
}

export async function lambdaRuntime(env: NodeJS.ProcessEnv = process.env): Promise<LambdaRuntime> {
  const { config } = loadConfigFile(env[LAMBDA_ENV.config] ?? BUNDLED_CONFIG_FILE, 'SVC_CONFIG', env);
  const { logger } = await createLogger({ level: config.logLevel, pretty: false, secrets: secretValues(config) });
  return { config, logger, errors: new ErrorTracker({ enabled: config.errorTracking.enable, log: logger }) };
}
