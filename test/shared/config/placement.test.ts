/**
 * The placement rule (shared/config/placement.ts): where each destination runs in `svc edge`, what
 * `svc validate-config` says about `Svc.cloud`, and which destinations the stack cannot deploy.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../shared/config/load.js';
import {
  cloudObstacle,
  edgeOnlyDestinations,
  placementFindings,
  platformPlacement,
} from '../../../shared/config/placement.js';
import type { SvcConfig } from '../../../shared/config/schema.js';

function config(...lines: string[]): SvcConfig {
  return parseConfigText(['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'), 'test.yaml', {}).config;
}

const TSDB_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/Svc-Tsdb';
const USER_EVENTS_TO_TSDB_AND_MQTT = [
  'tsdbConfig: {enable: true, host: influx.example.com}',
  'mqttConfig: {enable: true}',
  'userEvents:',
  '  enable: true',
  '  sendToTsdb: {enable: true}',
  '  sendToMQTT: {enable: true, postTo: {everythingTopic: {enable: true}}}',
];

describe('platformPlacement', () => {
  it('runs everything on the edge while Svc.cloud is off', () => {
    expect(platformPlacement(config(...USER_EVENTS_TO_TSDB_AND_MQTT))).toEqual([
      { name: 'tsdb', place: 'edge' },
      { name: 'mqtt', place: 'edge' },
    ]);
  });

  it('runs a destination in the cloud when its queue is named, and MQTT stays on the edge', () => {
    const c = config(
      ...USER_EVENTS_TO_TSDB_AND_MQTT,
      'cloud:',
      '  enable: true',
      '  region: eu-west-1',
      `  queues: {tsdb: "${TSDB_URL}"}`,
    );
    expect(platformPlacement(c)).toEqual([
      { name: 'tsdb', place: 'cloud', queueUrl: TSDB_URL },
      { name: 'mqtt', place: 'edge' },
    ]);
    expect(placementFindings(c)).toEqual([]);
  });
});

describe('placementFindings (svc validate-config, start)', () => {
  it('refuses forwarding with no queue, naming the key', () => {
    expect(() => config(...USER_EVENTS_TO_TSDB_AND_MQTT, 'cloud: {enable: true, region: eu-west-1}')).toThrow(
      /Svc\.cloud\.queues.*names no queue/,
    );
  });

  it('warns about a queue that nothing is sent to', () => {
    const c = config(
      ...USER_EVENTS_TO_TSDB_AND_MQTT,
      'cloud:',
      '  enable: true',
      '  region: eu-west-1',
      `  queues: {tsdb: "${TSDB_URL}", monsaas: "${TSDB_URL}-m"}`,
    );
    expect(placementFindings(c)).toEqual([
      expect.objectContaining({
        severity: 'warning',
        path: ['cloud', 'queues', 'monsaas'],
        message: expect.stringContaining('nothing is forwarded'),
      }),
    ]);
  });

  it('says nothing while forwarding is off, whatever the queues say', () => {
    expect(placementFindings(config(`cloud: {queues: {monsaas: "${TSDB_URL}"}}`))).toEqual([]);
  });
});

describe('cloudObstacle / edgeOnlyDestinations (synth)', () => {
  it('names every enabled destination the cloud cannot run, with the reason', () => {
    const c = config(...USER_EVENTS_TO_TSDB_AND_MQTT);
    expect(edgeOnlyDestinations(c, ['parquet', 'json', 'tsdb'])).toEqual([
      { name: 'parquet', reason: expect.stringContaining('s3.enable is false') },
      { name: 'json', reason: expect.stringContaining('local directory') },
      { name: 'mqtt', reason: expect.stringContaining('on-premises MQTT broker') },
    ]);
  });

  it('a tsdb on a loopback address cannot be reached from a Lambda', () => {
    for (const host of ['localhost', '127.0.0.1', '[::1]'])
      expect(cloudObstacle(config(`tsdbConfig: {enable: true, host: "${host}"}`), 'tsdb')).toContain('cannot reach');
    expect(cloudObstacle(config('tsdbConfig: {enable: true, host: influx.internal}'), 'tsdb')).toBeNull();
  });
});
