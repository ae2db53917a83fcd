/**
 * The `udpServerConfig` block both UDP listeners share (userEvents, logEvents). Each listener names
 * its own port key, as the configuration reference does, and the measurement of its queue metrics.
 */
import type { TProperties } from '@sinclair/typebox';
import { Bool, Feature, Int, Millis, Section, Str, StringList, Tags } from '../builders.js';

/** `port`: the listener's one port key, listed first; `queueMeasurement`: default of queueMetrics.tsdb.measurementName. */
export const UdpServerConfig = <P extends TProperties>(port: P, queueMeasurement: string) =>
  Section('UDP listener', {
    ...port,
    serverHost: Str(
      '0.0.0.0',
      'Listen host or IP; 0.0.0.0 = every interface (the log appenders send from the platform servers); a specific address is recommended',
      { minLength: 1 },
    ),
    messageQueue: Section('Listener queue that absorbs bursts', {
      maxConcurrent: Int(10, 1, 1000, 'Messages processed simultaneously'),
      maxSize: Int(200, 1, 1_000_000, 'Waiting messages before new ones are dropped'),
      backpressureThreshold: Int(80, 1, 100, 'Warn at this queue utilisation, percent'),
    }),
    rateLimit: Feature('Per-listener message rate limit, fixed 60 s window', false, 'Rate-limit messages', {
      maxMessagesPerMinute: Int(600, 1, 100_000_000, 'Messages per minute'),
    }),
    maxMessageSize: Int(65507, 1, 65507, 'Largest accepted datagram in bytes'),
    receiveBufferBytes: Int(
      4_194_304,
      65_536,
      1_073_741_824,
      'Socket receive buffer requested from the OS (bytes); a larger buffer rides out bursts without kernel drops',
    ),
    enableSourceValidation: Bool(
      false,
      'Accept datagrams only from allowedSources (resolved to IPv4 at start); with none resolved, validation is off',
    ),
    allowedSources: StringList(
      'IPv4 addresses or host names allowed to send; unresolvable entries are skipped with an error',
      ['platform-node1.example.com', '192.168.1.20'],
    ),
    queueMetrics: Section('Listener queue metrics', {
      tsdb: Feature('Store queue metrics in the tsdb', false, 'Store queue metrics', {
        writeFrequency: Millis(20_000, 1000, 'Time between writes'),
        measurementName: Str(queueMeasurement, 'Measurement name', { minLength: 1 }),
        tags: Tags('Static tags'),
      }),
    }),
  });
