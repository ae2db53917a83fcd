/**
 * The web view of a process (`Svc.configVisualisation`): the config page, the live status page and
 * the read API of the store (`/api/v1/`, when `Svc.store.enable`) on one server. The config is masked here, once, before the server sees it (shared/config/mask.ts).
 */
import { knownRuleNames } from '../../../shared/alerts/silences.js';
import { maskConfig } from '../../../shared/config/mask.js';
import { secretValues } from '../../../shared/config/secrets.js';
import type { AppContext } from '../../../shared/runtime/context.js';
import { StoreReader } from '../../../shared/store/reader.js';
import { parseDuration } from '../../../shared/util/duration.js';
import type { PollSink } from '../../sources/platform/sink.js';
import type { Observed } from '../observed.js';
import { ReadApi } from './api/router.js';
import { PollHistory } from './poll-history.js';
import { WebView } from './server.js';
import { StatusModel } from './status.js';

export interface WebViewParts {
  component: WebView;
  /** For the pollers: the status page's last hour of each server. */
  pollSink: PollSink;
}

/** The web view, when `configVisualisation.enable`; else null. `installDir` holds its assets (boot.ts INSTALL_DIR). */
export function webView(
  ctx: Pick<AppContext, 'config' | 'configFile' | 'logger' | 'errors'>,
  options: {
    observed: Observed;
    mode: string;
    installDir: string;
    /** The rate limit's clock (tests and benches that load many pages from one address); Date.now by default. */
    now?: () => number;
  },
): WebViewParts | null {
  const { config, configFile, logger: log, errors } = ctx;
  const settings = config.configVisualisation;
  if (!settings.enable) return null;
  const history = new PollHistory();
  const status = new StatusModel({ config, mode: options.mode, observed: options.observed, history, errors });
  const masked = maskConfig(config, { obfuscate: settings.obfuscate });
  const component = new WebView({
    host: settings.host,
    port: settings.port,
    masked,
    obfuscate: settings.obfuscate,
    configFile,
    installDir: options.installDir,
    status,
    api: new ReadApi({
      reader: config.store.enable ? new StoreReader(config.store.path) : undefined,
      retentionDays: config.store.retentionDays,
      secrets: secretValues(config),
      alerts: {
        observed: () => options.observed.alerts,
        knownRules: knownRuleNames(config.alerts),
        evaluationIntervalMs: parseDuration(config.alerts.evaluationInterval),
      },
      log,
    }),
    log,
    ...(options.now ? { now: options.now } : {}),
  });
  return { component, pollSink: history };
}
