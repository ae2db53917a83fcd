/**
 * The real web view with its real read API on a store file, composed as `svc local` composes it
 * (compose.ts webView), for the browser tests of the history pages. Its rate limiter's clock moves a
 * minute at each `nextMinute()`: a test opens many pages from one address, and the limit (300
 * requests a minute) is not what it tests.
 */
import { Observed, type ObservedAlerts } from '../../../../edge-agent/endpoints/observed.js';
import { webView } from '../../../../edge-agent/endpoints/web/compose.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import { captureLog } from '../../../support/audit.js';
import { REPO_ROOT } from '../../../support/build.js';
import { freePort, LOOPBACK } from '../../../support/ports.js';
import { svcConfig } from '../../../support/udp.js';

export interface StoreWebView {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Moves the rate limiter's clock a minute ahead: a new window. */
  nextMinute: () => void;
  stop: () => Promise<void>;
}

export interface StoreWebViewOptions {
  /** More lines of the config, below `Svc:` (e.g. `  alerts: {…}`). */
  config?: readonly string[];
  /** The alert engine the web view reads (Observed.alerts), made from the config; none by default (alerts off). */
  alerts?: (config: SvcConfig) => ObservedAlerts;
}

/** Starts the web view on a free port, reading the store at `path` (which may not exist yet). */
export async function startStoreWebView(path: string, options: StoreWebViewOptions = {}): Promise<StoreWebView> {
  const port = await freePort();
  const config = svcConfig([
    `  configVisualisation: {enable: true, host: ${LOOPBACK}, port: ${port}}`,
    `  store: {path: ${JSON.stringify(path)}}`,
    ...(options.config ?? []),
  ]);
  const observed = new Observed();
  if (options.alerts) observed.alerts = options.alerts(config);
  const { logger } = await captureLog('info');
  let offset = 0;
  const parts = webView(
    { config, configFile: 'svc.yaml', logger, errors: new ErrorTracker({ enabled: false, log: logger }) },
    { observed, mode: 'local', installDir: REPO_ROOT, now: () => Date.now() + offset },
  );
  if (!parts) throw new Error('the web view is off in the test config');
  await parts.component.start();
  return {
    base: `http://${LOOPBACK}:${port}`,
    nextMinute: () => {
      offset += 60_000;
    },
    stop: () => parts.component.stop(),
  };
}
