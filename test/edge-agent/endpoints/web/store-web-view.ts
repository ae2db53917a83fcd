/**
 * The real web view with its real read API on a store file, built as compose.ts builds it, for the
 * browser tests of the history pages. Its rate limiter's clock moves a minute at each `nextMinute()`:
 * a test opens many pages from one address, and the limit (300 requests a minute) is not what it tests.
 */
import { Observed } from '../../../../edge-agent/endpoints/observed.js';
import { ReadApi } from '../../../../edge-agent/endpoints/web/api/router.js';
import { PollHistory } from '../../../../edge-agent/endpoints/web/poll-history.js';
import { WebView } from '../../../../edge-agent/endpoints/web/server.js';
import { StatusModel } from '../../../../edge-agent/endpoints/web/status.js';
import { maskConfig } from '../../../../shared/config/mask.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import { StoreReader } from '../../../../shared/store/reader.js';
import { REPO_ROOT } from '../../../support/build.js';
import { recordingLog } from '../../../support/log.js';
import { LOOPBACK } from '../../../support/ports.js';
import { svcConfig } from '../../../support/udp.js';

export interface StoreWebView {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Moves the rate limiter's clock a minute ahead: a new window. */
  nextMinute: () => void;
  stop: () => Promise<void>;
}

/** Starts the web view on a free port, reading the store at `path` (which may not exist yet). */
export async function startStoreWebView(path: string): Promise<StoreWebView> {
  const config = svcConfig([
    `  configVisualisation: {enable: true, host: ${LOOPBACK}}`,
    `  store: {path: ${JSON.stringify(path)}}`,
  ]);
  const { log } = recordingLog();
  const errors = new ErrorTracker({ enabled: false, log });
  const status = new StatusModel({
    config,
    mode: 'local',
    observed: new Observed(),
    history: new PollHistory(),
    errors,
  });
  let offset = 0;
  const view = new WebView({
    host: LOOPBACK,
    port: 0,
    masked: maskConfig(config, { obfuscate: true }),
    obfuscate: true,
    configFile: 'svc.yaml',
    installDir: REPO_ROOT,
    status,
    api: new ReadApi({
      reader: new StoreReader(config.store.path),
      retentionDays: config.store.retentionDays,
      secrets: [],
      log,
    }),
    log,
    now: () => Date.now() + offset,
  });
  await view.start();
  return {
    base: `http://${LOOPBACK}:${view.port}`,
    nextMinute: () => {
      offset += 60_000;
    },
    stop: () => view.stop(),
  };
}
