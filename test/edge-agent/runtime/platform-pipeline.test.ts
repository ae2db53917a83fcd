/**
 * The platform pipeline's consumer groups with Svc.cloud: in `svc edge` a destination placed in the
 * cloud is a forwarder (no writer of its own), MQTT keeps its writer; `svc local` (forward off)
 * writes every destination itself. Nothing is started: the composition alone is under test.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { platformPipeline } from '../../../edge-agent/runtime/platform-pipeline.js';
import { LeanSqsClient } from '../../../shared/aws/sqs.js';
import { ErrorTracker } from '../../../shared/errors/tracker.js';
import { Forwarder } from '../../../shared/queue/forwarder.js';
import { PointClock } from '../../../shared/queue/point-clock.js';
import { captureLog } from '../../support/audit.js';
import { svcConfig } from '../../support/udp.js';

const TSDB_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/svc-tsdb';

async function pipeline(forward: boolean, cloud = true) {
  const config = svcConfig([
    `  localQueue: { directory: ${mkdtempSync(join(tmpdir(), 'pipeline-'))} }`,
    '  tsdbConfig: {enable: true, host: influx.example.com}',
    '  mqttConfig: {enable: true}',
    '  userEvents:',
    '    enable: true',
    '    sendToTsdb: {enable: true}',
    '    sendToMQTT: {enable: true, postTo: {everythingTopic: {enable: true}}}',
    ...(cloud ? ['  cloud:', '    enable: true', '    region: eu-west-1', `    queues: {tsdb: "${TSDB_URL}"}`] : []),
  ]);
  const { logger, lines } = await captureLog('info');
  let made = 0;
  const clients = () => {
    made += 1;
    return {
      sqs: new LeanSqsClient({
        region: 'eu-west-1',
        credentials: () => Promise.reject(new Error('not called in this test')),
      }),
      s3: new S3Client({ region: 'eu-west-1' }),
    };
  };
  const built = await platformPipeline(
    {
      config,
      configFile: 'svc.yaml',
      logger,
      errors: new ErrorTracker({ enabled: false, log: logger }),
      clock: new PointClock(),
    },
    { forward, clients },
  );
  return { built, lines, made: () => made };
}

describe('platformPipeline with Svc.cloud', () => {
  it('svc edge: the tsdb group forwards to its queue, MQTT keeps its writer', async () => {
    const { built, lines, made } = await pipeline(true);
    const [tsdb, mqtt] = built.destinations;
    expect(built.destinations.map((d) => d.name)).toEqual(['tsdb', 'mqtt']);
    expect(tsdb).toBeInstanceOf(Forwarder);
    expect(mqtt).not.toBeInstanceOf(Forwarder);
    expect(made()).toBe(1);
    await expect
      .poll(() =>
        lines().some((l) =>
          String(l['msg']).includes(`tsdb: forwarded to the cloud (SQS ${TSDB_URL}, no claim-check bucket`),
        ),
      )
      .toBe(true);
  });

  it('svc local (forward off) and Svc.cloud off: every destination is written here, no client is made', async () => {
    for (const p of [await pipeline(false), await pipeline(true, false)]) {
      expect(p.built.destinations.map((d) => d.name)).toEqual(['tsdb', 'mqtt']);
      expect(p.built.destinations.some((d) => d instanceof Forwarder)).toBe(false);
      expect(p.made()).toBe(0);
    }
  });
});
