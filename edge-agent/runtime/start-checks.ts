/**
 * What `svc validate-config` and the start of `svc local` / `svc edge` check beyond the config file
 * itself, in one place so the two always agree: the pollers' certificate files and app-list host,
 * the tsdb's CA file, MQTT's TLS files and credentials, and the embedded store's folder.
 */

import type { RuleFinding } from '../../shared/config/errors.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import { checkMqttSecurity } from '../../shared/destinations/mqtt/security.js';
import { loadTsdbTls } from '../../shared/destinations/tsdb/tls.js';
import { storePathProblem } from '../../shared/store/database.js';
import { checkPlatformAccess, type PlatformAccess } from '../sources/platform/startup.js';

/** Every problem (start-up refuses) and warning (logged) of the files and hosts the config names. */
export interface StartCheck {
  /** The pollers' TLS material and app-list address; null when a problem stops the start. */
  access: PlatformAccess | null;
  problems: RuleFinding[];
  warnings: RuleFinding[];
}

/** The platform access check, `tsdbConfig.tls`, `mqttConfig`'s TLS files and credentials and `store.path`, together. */
export async function checkStartFiles(config: SvcConfig): Promise<StartCheck> {
  const platform = await checkPlatformAccess(config);
  const tsdbTls = loadTsdbTls(config.tsdbConfig);
  const mqtt = checkMqttSecurity(config);
  const storeProblem = config.store.enable ? storePathProblem(config.store.path) : null;
  const store: RuleFinding[] =
    storeProblem === null ? [] : [{ severity: 'error', path: ['store', 'path'], message: storeProblem }];
  const problems: RuleFinding[] = [
    ...store,
    ...(platform.ok ? [] : platform.problems),
    ...(tsdbTls.ok ? [] : tsdbTls.problems),
    ...mqtt.filter((finding) => finding.severity === 'error'),
  ];
  return {
    access: platform.ok && problems.length === 0 ? platform.access : null,
    problems,
    warnings: [...platform.warnings, ...mqtt.filter((finding) => finding.severity === 'warning')],
  };
}
