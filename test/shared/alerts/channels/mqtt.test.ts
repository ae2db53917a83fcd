/**
 * The MQTT channel through Svc's MqttWriter to a real mosquitto (test/support/mqtt-rig.ts): the
 * notification arrives as Alertmanager's JSON payload on the topic; with the broker gone the channel
 * retries, gives up and tracks the failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChannel } from '../../../../shared/alerts/channels/build.js';
import { RetryingChannel } from '../../../../shared/alerts/channels/retry.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { recordingLog } from '../../../support/log.js';
import { type MqttRig, startMqttRig } from '../../../support/mqtt-rig.js';
import { until } from '../../../support/ports.js';
import { channelSettings, serverDownNotification } from '../fixtures.js';

let rig: MqttRig;

beforeAll(async () => {
  rig = await startMqttRig();
}, 30_000);
afterAll(async () => {
  await rig?.stop();
});

describe('mqtt channel', () => {
  it('publishes the notification as JSON to its topic', async () => {
    const { log } = recordingLog();
    const errors = new ErrorTracker({ enabled: true, log });
    const channel = new RetryingChannel(
      buildChannel(channelSettings({ name: 'broker', type: 'mqtt', topic: 'svc/alerts/ops' }), { mqtt: rig.writer }),
      { log, errors },
    );
    const notification = serverDownNotification('broker');
    expect((await channel.deliver(notification)).delivered).toBe(true);
    await until('the alert arrives', () => rig.received.some((message) => message.topic === 'svc/alerts/ops'));
    const message = rig.received.find((received) => received.topic === 'svc/alerts/ops');
    const payload: unknown = JSON.parse(message?.payload ?? 'null');
    expect(payload).toMatchObject({
      version: '4',
      receiver: 'broker',
      status: 'firing',
      alerts: [
        { labels: { alertname: 'serverDown', server: 'sense-central' }, generatorURL: notification.alerts[0]?.link },
      ],
    });
  });

  it('retries, then tracks ALERT_NOTIFY once the broker is gone', async () => {
    const { log, lines } = recordingLog();
    const tracked: TrackedError[] = [];
    const errors = new ErrorTracker({ enabled: true, log, sink: (error) => tracked.push(error) });
    const channel = new RetryingChannel(
      buildChannel(channelSettings({ name: 'broker', type: 'mqtt', topic: 'svc/alerts/ops' }), { mqtt: rig.writer }),
      { log, errors },
      { attempts: 2, baseDelayMs: 20 },
    );
    await rig.broker.stop();
    await until('the writer sees the broker gone', () => rig.writer.unavailableReason !== undefined);
    const outcome = await channel.deliver(serverDownNotification('broker'));
    expect(outcome).toMatchObject({ delivered: false, attempts: 2 });
    expect(tracked.map((error) => error.type)).toEqual(['ALERT_NOTIFY']);
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(1);
  });

  it('is refused without the MQTT writer (Svc.mqttConfig off)', () => {
    expect(() => buildChannel(channelSettings({ name: 'broker', type: 'mqtt', topic: 'svc/alerts' }))).toThrow(
      'mqtt channel "broker" needs the MQTT broker: set Svc.mqttConfig.enable true',
    );
  });
});
