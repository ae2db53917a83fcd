/**
 * The HTTP channels go through the corporate proxy that start-up installs (shared/runtime/proxy.ts):
 * a real tinyproxy, with a local receiver reached as `localhost` through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetryingChannel } from '../../../../shared/alerts/channels/retry.js';
import { slackChannel } from '../../../../shared/alerts/channels/slack.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import { installProxy, resolveProxy } from '../../../../shared/runtime/proxy.js';
import { silentLog } from '../../../support/log.js';
import { type RecordingServer, startRecordingServer } from '../../../support/recording-http.js';
import { startTinyproxy, type TinyproxyHandle } from '../../../support/tinyproxy.js';
import { serverDownNotification } from '../fixtures.js';

let proxy: TinyproxyHandle;
let receiver: RecordingServer;
let restore: (() => void) | undefined;

beforeAll(async () => {
  [proxy, receiver] = await Promise.all([startTinyproxy(), startRecordingServer()]);
  restore = installProxy(resolveProxy({ httpProxy: proxy.url, httpsProxy: proxy.url, noProxy: '' }, {}), silentLog);
});
afterAll(async () => {
  restore?.();
  await Promise.all([proxy?.stop(), receiver?.stop()]);
});

describe('HTTP channels behind a proxy', () => {
  it('post through the installed proxy', async () => {
    const errors = new ErrorTracker({ enabled: true, log: silentLog });
    const channel = new RetryingChannel(slackChannel('ops', `http://localhost:${receiver.port}/services/T/B/K`), {
      log: silentLog,
      errors,
    });
    expect((await channel.deliver(serverDownNotification('ops'))).delivered).toBe(true);
    expect(receiver.requests.map((request) => request.url)).toEqual(['/services/T/B/K']);
    expect(proxy.saw(`localhost:${receiver.port}`)).toBe(true);
  });
});
